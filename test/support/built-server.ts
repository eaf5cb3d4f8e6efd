import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';

/**
 * For the tests that run the built server as a process of its own
 * (`node <build>/src/main.js`): each test file builds into a directory of its
 * own under node_modules/.cache (packages still resolve from the repository's
 * node_modules), so files running in parallel never read a half-written build.
 */

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** The build directory of one test file (or one store kind of it). */
export const buildDir = (name: string): string => path.join(ROOT, 'node_modules/.cache', name);

/** Compiles the server into `dir` (emptied first); returns its main.js. */
export function buildOnce(dir: string): string {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const main = path.join(dir, 'src/main.js');
  fs.rmSync(dir, { recursive: true, force: true });
  try {
    // Type errors elsewhere in a shared tree do not stop tsc from emitting.
    // Its own build-info file: the shared incremental one (dist/.tsbuildinfo) would make tsc skip emitting into a fresh dir.
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--outDir', dir, '--tsBuildInfoFile', path.join(dir, '.tsbuildinfo')], { cwd: ROOT, stdio: 'ignore', timeout: 240_000 });
  } catch {
    /* checked below */
  }
  if (!fs.existsSync(main)) throw new Error(`${main} was not built`);
  return main;
}

/** A TCP port free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Polls `url` every `everyMs` until it answers 2xx (the server started). The start fails if
 * the child exits first, or after `timeoutMs` (the child is then killed).
 */
export async function waitForAnswer(child: ChildProcess, url: string, everyMs: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} while starting`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('server did not start');
    }
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Starts `node <main>` with logs at warn and the given PARLEY_* settings, stderr shown. */
export function spawnServer(main: string, env: Record<string, string>): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, PARLEY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { child, exited: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
}

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { standaloneModule } from '../support/standalone-module.js';

/**
 * V8's code cache for the server bundle (src/code-cache.ts, performance.md
 * P10). Each start runs in its own process, as a server start does: within one
 * process V8 would find the script in its own compilation cache and never read
 * the file. A stale or damaged cache must be ignored, never trusted: V8 itself
 * checks only the source's length and would crash on damaged data.
 */
const { dir, file: loader, remove } = standaloneModule('code-cache.ts', 'code-cache');
afterAll(remove);

/** A bundle of `n` functions, each called at start (so the cache holds them), printing `tag`. */
function bundleSource(tag: string, n = 300): string {
  const fns = Array.from({ length: n }, (_, i) => `function f${i}(x) { return x + ${i}; }`).join('\n');
  const calls = Array.from({ length: n }, (_, i) => `s = f${i}(s);`).join(' ');
  const body = `${fns}\nlet s = 0; ${calls}\nconsole.log(JSON.stringify({ tag: ${JSON.stringify(tag)}, s, url: __parleyImportMetaUrl, file: __filename, req: typeof require }));`;
  // The bundler's shape (tools/bundle-server.mjs): one function expression.
  return `(function (exports, require, module, __filename, __dirname, __parleyImportMetaUrl) {\n${body}\n})`;
}

/** Runs the bundle through runBundle in a new process; `save` writes the cache before exiting. */
function start(bundle: string, opts: { save?: boolean; hook?: boolean } = {}): { out: Record<string, unknown>; cacheUsed: boolean; status: number | null; stderr: string } {
  const script = `
    import { runBundle, STARTED_HOOK } from ${JSON.stringify(loader)};
    const run = runBundle(${JSON.stringify(bundle)});
    console.log(JSON.stringify({ cacheUsed: run.cacheUsed }));
    ${opts.save ? 'run.saveCodeCache();' : ''}
    ${opts.hook ? 'globalThis[STARTED_HOOK]?.();' : ''}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const lines = r.stdout.trim().split('\n').filter(Boolean);
  return { out: lines[0] ? JSON.parse(lines[0]) : {}, cacheUsed: lines[1] ? JSON.parse(lines[1]).cacheUsed : false, status: r.status, stderr: r.stderr };
}

describe('code cache for the server bundle', () => {
  it('runs the bundle as CommonJS with its own URL, writes the cache, and the next start uses it', () => {
    const bundle = path.join(dir, 'a.cjs');
    fs.writeFileSync(bundle, bundleSource('a'));
    const first = start(bundle, { save: true });
    expect(first.status).toBe(0);
    expect(first.cacheUsed).toBe(false);
    expect(first.out).toMatchObject({ tag: 'a', s: (299 * 300) / 2, url: `file://${bundle}`, file: bundle, req: 'function' });
    expect(fs.existsSync(`${bundle}.cache`)).toBe(true);
    const second = start(bundle);
    expect(second.status).toBe(0);
    expect(second.cacheUsed).toBe(true);
    expect(second.out).toMatchObject({ tag: 'a' });
  });

  it('without a cache, writes one once the server reports it listens (the start-up hook)', async () => {
    const bundle = path.join(dir, 'hook.cjs');
    fs.writeFileSync(bundle, bundleSource('hook'));
    // The hook writes after a delay on an unref'd timer; the child stays alive long enough for it.
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
      import { runBundle, STARTED_HOOK } from ${JSON.stringify(loader)};
      runBundle(${JSON.stringify(bundle)});
      globalThis[STARTED_HOOK]();
      setTimeout(() => {}, 1500);`], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(fs.existsSync(`${bundle}.cache`)).toBe(true);
    expect(start(bundle).cacheUsed).toBe(true);
  });

  it('ignores the cache of another bundle of the same length and runs the new code', () => {
    const bundle = path.join(dir, 'b.cjs');
    fs.writeFileSync(bundle, bundleSource('b1'));
    start(bundle, { save: true });
    const other = bundleSource('b2');
    expect(other.length).toBe(bundleSource('b1').length);
    fs.writeFileSync(bundle, other);
    const r = start(bundle);
    expect(r.status).toBe(0);
    expect(r.cacheUsed).toBe(false);
    expect(r.out).toMatchObject({ tag: 'b2' });
  });

  it('ignores a damaged or truncated cache instead of crashing', () => {
    const bundle = path.join(dir, 'c.cjs');
    fs.writeFileSync(bundle, bundleSource('c'));
    start(bundle, { save: true });
    const good = fs.readFileSync(`${bundle}.cache`);
    const damaged = Buffer.from(good);
    for (let i = 100; i < damaged.length; i += 97) damaged[i] ^= 0xff;
    fs.writeFileSync(`${bundle}.cache`, damaged);
    const r = start(bundle);
    expect(r.status, r.stderr).toBe(0);
    expect(r.cacheUsed).toBe(false);
    expect(r.out).toMatchObject({ tag: 'c' });
    fs.writeFileSync(`${bundle}.cache`, good.subarray(0, good.length >> 1));
    expect(start(bundle)).toMatchObject({ status: 0, cacheUsed: false, out: { tag: 'c' } });
    fs.writeFileSync(`${bundle}.cache`, good);
    expect(start(bundle)).toMatchObject({ status: 0, cacheUsed: true });
  });

  it('replaces a cache V8 rejects (made under other V8 flags)', () => {
    const bundle = path.join(dir, 'd.cjs');
    fs.writeFileSync(bundle, bundleSource('d'));
    const r = spawnSync(process.execPath, ['--no-lazy-feedback-allocation', '--input-type=module', '-e', `
      import { runBundle } from ${JSON.stringify(loader)};
      runBundle(${JSON.stringify(bundle)}).saveCodeCache();`], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const rejected = start(bundle, { save: true });
    expect(rejected.cacheUsed).toBe(false);
    expect(rejected.out).toMatchObject({ tag: 'd' });
    expect(start(bundle).cacheUsed).toBe(true);
  });
});

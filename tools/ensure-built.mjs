#!/usr/bin/env node
// Builds (`npm run build`) only when dist/ is not current: when the sources'
// fingerprint differs from the one the last successful build stored
// (tools/build-stamp.mjs). `npm start` and `npm run bench` go through here,
// so a built checkout starts at once instead of recompiling every time.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCurrent, ROOT } from './build-stamp.mjs';

export function ensureBuilt() {
  if (isCurrent()) return;
  process.stderr.write('parley: dist/ is older than the sources; building (npm run build)\n');
  // The npm that runs us (npm start) when there is one, else the one on PATH.
  const npmCli = process.env.npm_execpath;
  const r = npmCli && /\.c?js$/.test(npmCli)
    ? spawnSync(process.execPath, [npmCli, 'run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) {
    process.stderr.write('parley: the build failed\n');
    process.exit(r.status ?? 1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) ensureBuilt();

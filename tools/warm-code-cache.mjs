#!/usr/bin/env node
// The last step of `npm run build`: starts the freshly built server once, on a
// scratch data directory and a free port, so that it writes V8's code cache
// for the bundle (dist/src/server.cjs.cache, src/code-cache.ts) and the first
// real start is already a fast one (docs/performance.md, "Start"). Only
// PATH and HOME are passed on: none of the deployment's PARLEY_* settings (a
// PostgreSQL or Redis URL) reaches this run. Failing here never fails the
// build: without a cache the first start compiles and writes one itself.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(root, 'dist/src/server.cjs.cache');
const TIMEOUT_MS = 60_000;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-warm-'));
// With the server's node flags (src/node-flags.ts), as `npm start` runs it.
const { SERVER_NODE_FLAGS } = await import(pathToFileURL(path.join(root, 'dist/src/node-flags.js')).href);
const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(root, 'dist/src/server.mjs')], {
  cwd: root,
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PARLEY_DATA_DIR: dataDir, PARLEY_PORT: '0', PARLEY_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
let stderr = '';
child.stderr.on('data', (d) => (stderr += d));
const exited = new Promise((resolve) => child.once('exit', resolve));
const deadline = Date.now() + TIMEOUT_MS;
let done = false;
while (!done && Date.now() < deadline && child.exitCode === null) {
  await new Promise((r) => setTimeout(r, 50));
  done = fs.existsSync(cache);
}
if (child.exitCode === null) child.kill('SIGTERM');
await exited;
fs.rmSync(dataDir, { recursive: true, force: true });
if (!done) process.stderr.write(`parley: no code cache was written (the first start will write it)${stderr ? `:\n${stderr}` : ''}\n`);

// P1 in instructions: the user-space instructions one request costs in bare
// node:http, in a bare Fastify route and in Parley's GET /api/v1/users/me
// (Basic auth, request log on), each server run under
// `valgrind --tool=callgrind`. Instruction counts do not depend on what else
// the machine is doing, so this is the stable before/after figure on a shared
// machine (req/s is not). Kernel time (the socket syscalls, about the same for
// all three) is not counted. Slow (valgrind runs code ~50x slower): a few
// minutes. Not part of `npm run bench`; needs valgrind and callgrind_control.
//   node bench/p1-callgrind.mjs            (CG_WARM=2000 warm-up, CG_REQUESTS=2000 measured)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { PARLEY_MAIN, ROOT, waitFor, freePort, table } from './lib.mjs';

const WARM = Number(process.env.CG_WARM ?? 2000);
const N = Number(process.env.CG_REQUESTS ?? 2000);
const LOG_LEVEL = process.env.BENCH_P1_LOG_LEVEL ?? 'info';
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cg-'));

function underCallgrind(args, env) {
  return spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${outDir}/cg.%p.out`, process.execPath, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Instructions executed so far by a process under callgrind, all its threads (GC helpers, libuv pool) together. */
function instructions(pid) {
  const text = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const threads = [...text.matchAll(/^\s*Th\s*\d+\s+([\d,]+)\s*$/gm)].map((m) => Number(m[1].replaceAll(',', '')));
  if (!threads.length) throw new Error(`callgrind_control said: ${text}`);
  return threads.reduce((a, b) => a + b, 0);
}


const send = (url, headers, amount) =>
  new Promise((resolve, reject) => autocannon({ url, headers, connections: 4, amount, timeout: 120 }, (err, r) => (err ? reject(err) : resolve(r))));

async function measure(name, child, url, headers = {}) {
  try {
    await waitFor(url, headers);
    const warm = await send(url, headers, WARM);
    if (warm.non2xx || warm.errors) throw new Error(`${name}: ${warm.non2xx} non-2xx, ${warm.errors} errors in warm-up`);
    const before = instructions(child.pid);
    const r = await send(url, headers, N);
    const after = instructions(child.pid);
    if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { server: name, requests: r.requests.total, instructions_per_request: Math.round((after - before) / r.requests.total) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function baseline(kind) {
  const child = underCallgrind([path.join(ROOT, 'bench', 'support', 'baseline-server.mjs'), kind], {});
  const port = await new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) resolve(Number(m[1]));
    });
  });
  return measure(kind === 'http' ? 'bare node:http' : 'bare Fastify route', child, `http://127.0.0.1:${port}/`);
}

async function parley() {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cg-data-'));
  const child = underCallgrind([PARLEY_MAIN], {
    PARLEY_PORT: String(port),
    PARLEY_DATA_DIR: dataDir,
    PARLEY_LOG_LEVEL: LOG_LEVEL,
    PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1',
    PARLEY_RATE_LIMIT_PER_USER: '0',
    PARLEY_RATE_LIMIT_PER_IP: '0',
  });
  child.stdout.resume();
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/v1/server_settings`);
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  const auth = 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)[1].trim()}:${/key=(.*)/.exec(rc)[1].trim()}`).toString('base64');
  try {
    return await measure('Parley GET /users/me', child, `${base}/api/v1/users/me`, { authorization: auth });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

try {
  const rows = [];
  for (const kind of (process.env.CG_ONLY ?? 'http,fastify,parley').split(',')) rows.push(kind === 'parley' ? await parley() : await baseline(kind));
  const base = rows.find((r) => r.server === 'bare node:http')?.instructions_per_request;
  table(rows.map((r) => ({ ...r, 'x node:http': base ? (r.instructions_per_request / base).toFixed(2) : 'n/a' })));
} finally {
  fs.rmSync(outDir, { recursive: true, force: true });
}

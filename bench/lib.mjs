// Shared helpers for benchmarks: start a built Parley server on loopback, a bare
// node:http baseline, autocannon runs, and merging figures into results/latest.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { withServerNodeFlags } from '../dist/src/node-flags.js';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// BENCH_RESULTS points the figures elsewhere (the quick mode writes to a temporary file, so a
// smoke run never replaces the measured figures).
export const RESULTS = process.env.BENCH_RESULTS ? path.resolve(process.env.BENCH_RESULTS) : path.join(ROOT, 'bench', 'results', 'latest.json');
// BENCH_QUICK=1 (the smoke run): warm-ups and pauses shortened too, so the whole run stays near 2 minutes.
export const QUICK = process.env.BENCH_QUICK === '1';
/** Seconds of each autocannon warm-up. */
export const WARM_S = QUICK ? 1 : 2;
/** Milliseconds to wait for n long polls to park before a fan-out round. */
export const parkMs = (n) => (QUICK ? 100 : 500) + n / 5;
/** The server entry point benchmarks start (BENCH_PARLEY_MAIN: another build, e.g. a copy of dist/ from before a change). */
export const PARLEY_MAIN = process.env.BENCH_PARLEY_MAIN ?? path.join(ROOT, 'dist/src/main.js');

export function freePort() {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * The node flags a benchmark's server process runs with: `extra`, then BENCH_SERVER_NODE_ARGS
 * (extra node flags for the servers only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), then the
 * server's own flags (src/node-flags.ts), as `npm start` and `parley cluster` run it; a flag given
 * before sets its option instead of the server's own (e.g. --max-semi-space-size=16).
 */
export function serverNodeArgs(extra = []) {
  return withServerNodeFlags([...extra, ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)]);
}

/**
 * Where a benchmark's server writes its standard output: with BENCH_SERVER_STDOUT=<path>, a new file
 * <path>.<port> (V8's traces, e.g. with BENCH_SERVER_NODE_ARGS="--trace-gc"); otherwise `fallback`.
 */
export function serverStdout(port, fallback) {
  const to = process.env.BENCH_SERVER_STDOUT;
  return to ? fs.openSync(`${to}.${port}`, 'w') : fallback;
}

/** Starts `node dist/src/main.js` on a fresh data dir; resolves once /server_settings answers. */
export async function startParley(env = {}, opts = {}) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [...serverNodeArgs(), opts.main ?? PARLEY_MAIN], {
    // Rate limits are per user (200/min by default): one benchmark user would measure 429s.
    env: {
      ...process.env,
      PARLEY_PORT: String(port),
      PARLEY_DATA_DIR: dataDir,
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1',
      PARLEY_RATE_LIMIT_PER_USER: '0',
      PARLEY_RATE_LIMIT_PER_IP: '0',
      ...env,
    },
    // opts.stdout 'ignore': the request log (PARLEY_LOG_LEVEL=info) goes nowhere instead of into this process.
    stdio: ['ignore', serverStdout(port, opts.stdout ?? 'pipe'), 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  let firstOkMs;
  for (;;) {
    if (Date.now() > deadline) throw new Error('Parley did not start: ' + out);
    try {
      const r = await fetch(`${base}/api/v1/server_settings`);
      if (r.status === 200) {
        firstOkMs = Number(process.hrtime.bigint() - started) / 1e6;
        break;
      }
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  const email = /email=(.*)/.exec(rc)[1].trim();
  const key = /key=(.*)/.exec(rc)[1].trim();
  const auth = 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');
  // A first start posts Welcome Bot's 12 channel messages and the owner's welcome once it answers
  // (src/main.ts): a benchmark that writes to the database itself or counts rows starts after them.
  for (;;) {
    if (Date.now() > deadline) throw new Error('Parley did not post its initial messages: ' + out);
    const r = await fetch(`${base}/api/v1/messages?anchor=newest&num_before=20&num_after=0`, { headers: { authorization: auth } });
    if (r.status === 200 && (await r.json()).messages.length >= 13) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    base,
    port,
    dataDir,
    child,
    firstOkMs,
    auth,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare node:http server answering a 1 KB JSON body: the baseline every ratio divides by. */
export async function startBaseline() {
  const body = JSON.stringify({ result: 'success', msg: '', pad: 'x'.repeat(1024 - 40) });
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/`, stop: () => new Promise((r) => server.close(r)) };
}

/** autocannon with keep-alive and no pipelining; returns req/s and latency percentiles (ms). */
export function load(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 50, pipelining: 1, duration: 5, ...opts }, (err, res) => {
      if (err) return reject(err);
      resolve({
        rps: res.requests.average,
        p50: res.latency.p50,
        p99: res.latency.p99,
        errors: res.errors + res.non2xx,
        total: res.requests.total,
      });
    });
  });
}

/**
 * A load run by a generator in a process of its own (bench/support/load-process.mjs: kind
 * 'autocannon', as load() above, or 'even', evenly paced), for a benchmark whose own process
 * has done heavy work first: the generator then shares no heap with it.
 */
export function loadApart(opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'support', 'load-process.mjs'), JSON.stringify(opts)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`load-process.mjs exited with ${code}`));
      try {
        resolve(JSON.parse(out));
      } catch (err) {
        reject(err);
      }
    });
  });
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Merges one benchmark's figures into bench/results/latest.json. */
export function record(key, figures) {
  let all = {};
  try {
    all = JSON.parse(fs.readFileSync(RESULTS, 'utf8'));
  } catch {
    /* first result */
  }
  all[key] = { ...figures, date: new Date().toISOString(), machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB` };
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(RESULTS, JSON.stringify(all, null, 2) + '\n');
}

export function table(rows) {
  const cols = Object.keys(rows[0]);
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (vals) => vals.map((v, i) => String(v).padEnd(w[i])).join('  ');
  console.log(line(cols));
  for (const r of rows) console.log(line(cols.map((c) => r[c])));
}

/**
 * A baseline server in its own process (bench/support/baseline-server.mjs), so
 * that, like Parley, it does not share a thread with the load generator:
 * kind "http" is bare node:http, "fastify" a bare Fastify route (the
 * framework's own cost per request); both answer the same 1 KB JSON body.
 */
export async function startBaselineProcess(kind) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'support', 'baseline-server.mjs'), kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`baseline ${kind} exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * CPU time (user + system, microseconds) a process has used so far, from
 * /proc (Linux): divided by the requests it answered in between, the server's
 * own cost per request, which the other load on a shared machine disturbs far
 * less than requests per second. undefined where /proc is missing.
 */
export function cpuMicros(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted from after the command name.
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
const CLOCK_TICKS = 100; // sysconf(_SC_CLK_TCK) on Linux

/**
 * The scheduler's account of a process, all its threads summed, from /proc/<pid>/task/<tid>/schedstat
 * (nanosecond clocks): `runMs`, time on a CPU, and `waitMs`, time runnable but waiting for one
 * (how much the machine's cores were contended for this process); `mainRunMs` and `mainWaitMs`, the
 * same for its main thread alone (a node process's JavaScript). undefined where /proc or
 * schedstat is missing. A thread that exited in between takes its time with it.
 */
export function schedSnapshot(pid) {
  let tasks;
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let run = 0;
  let wait = 0;
  let mainRun = 0;
  let mainWait = 0;
  for (const t of tasks) {
    try {
      const [r, w] = fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ');
      run += Number(r);
      wait += Number(w);
      if (t === String(pid)) {
        mainRun = Number(r);
        mainWait = Number(w);
      }
    } catch {
      /* gone meanwhile */
    }
  }
  return { runMs: run / 1e6, waitMs: wait / 1e6, mainRunMs: mainRun / 1e6, mainWaitMs: mainWait / 1e6 };
}

/** The pids of every PostgreSQL process on this machine (by /proc/<pid>/comm); none where /proc is missing. */
export function postgresPids() {
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/comm`, 'utf8').trim() === 'postgres') out.push(e);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/**
 * CPU time (microseconds) of every PostgreSQL process on this machine so far (the backends and the
 * background writers, found by /proc/<pid>/comm), per pid; undefined where /proc is missing.
 */
export function postgresCpuSnapshot() {
  const out = new Map();
  for (const pid of postgresPids()) {
    const us = cpuMicros(pid);
    if (us !== undefined) out.set(pid, us);
  }
  return out.size > 0 ? out : undefined;
}

/**
 * PostgreSQL's CPU between two snapshots: what each process still there used, plus all of what
 * each new one did. A process that exited in between is left out (its time went with it), so
 * the figure can be low, never negative: keep the pool's connections open while measuring.
 */
export function postgresCpuBetween(before, after) {
  if (before === undefined || after === undefined) return undefined;
  let total = 0;
  for (const [pid, us] of after) total += us - (before.get(pid) ?? 0);
  return total;
}

/** load() plus the server process's CPU microseconds per answered request. */
export async function loadWithCpu(pid, opts) {
  const before = cpuMicros(pid);
  const r = await load(opts);
  const after = cpuMicros(pid);
  return { ...r, cpu_us: before === undefined || after === undefined || !r.total ? undefined : (after - before) / r.total };
}

/** Waits until `url` answers 200 (a server under valgrind can take minutes to start), at most 10 minutes. */
export async function waitFor(url, headers = {}) {
  const deadline = Date.now() + 600_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    try {
      if ((await fetch(url, { headers })).status === 200) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

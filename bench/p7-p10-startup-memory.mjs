// P10: cold start to the first 200 on /server_settings (empty database, fresh data dir) of the
// server `npm start` runs (dist/src/server.mjs, the bundle, with the server's node flags: src/node-flags.ts),
// and of dist/src/main.js for comparison;
// `npm start` itself on a built checkout; a restart that restores 10,000 saved event queues.
// P7: idle resident memory with an empty realm, read from /proc after settling.
// Besides wall times (which a busy machine stretches), each start's CPU time (user + system,
// from /proc/<pid>/stat, all threads) up to the first 200 is printed.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, median, record, ROOT, table } from './lib.mjs';
import { withServerNodeFlags } from '../dist/src/node-flags.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const QUEUES = Number(process.env.BENCH_RESTORE_QUEUES ?? 10_000);
const ENV = {
  PARLEY_LOG_LEVEL: 'warn',
  PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1',
  PARLEY_RATE_LIMIT_PER_USER: '0',
  PARLEY_RATE_LIMIT_PER_IP: '0',
};

function cpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * (1000 / 100);
  } catch {
    return NaN;
  }
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function rssMb(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

/** Spawns a command, polls /server_settings every 2 ms; resolves at the first 200. */
async function start(cmd, args, dataDir, { detached = false, env = process.env } = {}) {
  const port = await freePort();
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd: ROOT, detached, env: { ...env, ...ENV, PARLEY_PORT: String(port), PARLEY_DATA_DIR: dataDir }, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${cmd} ${args.join(' ')} did not start`);
    try {
      if ((await fetch(`${base}/api/v1/server_settings`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return {
    base,
    child,
    ms,
    cpu: detached ? NaN : cpuMs(child.pid),
    async stop() {
      if (detached) process.kill(-child.pid, 'SIGTERM');
      else child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      // `npm start` can exit before the server it started has closed its database: wait until
      // the whole process group is gone, or removing the data directory races the server's last writes.
      while (detached && groupAlive(child.pid)) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
const figures = {};
const rows = [];

// NODE_EXTRA_CA_CERTS makes node read and parse that certificate file before it runs any
// JavaScript: measured in this sandbox, whose environment sets it to the system's bundle, it adds
// 35-55 ms to every node process (`node -e 0`: 57-84 ms against 24-25 ms without it). It is not
// Parley's work and an operator's machine does not usually set it, so the server's start is
// measured both in the environment as given and without that one variable; node's own start is
// printed both ways beside it, as the floor under every figure here.
const EXTRA_CA = process.env.NODE_EXTRA_CA_CERTS;
const DEFAULT_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_EXTRA_CA_CERTS'));

function nodeBootMs(env) {
  const times = [];
  for (let i = 0; i < Math.max(5, RUNS * 3); i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' });
    if (r.status !== 0) throw new Error('node -e 0 failed');
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return Math.round(median(times));
}
figures.node_boot_ms = nodeBootMs(process.env);
rows.push({ bench: 'node -e 0 (the floor)', value: `${figures.node_boot_ms} ms`, target: '' });
if (EXTRA_CA !== undefined) {
  figures.node_boot_ms_default_env = nodeBootMs(DEFAULT_ENV);
  rows.push({ bench: 'node -e 0, no NODE_EXTRA_CA_CERTS', value: `${figures.node_boot_ms_default_env} ms`, target: '' });
}

/** RUNS cold starts of `entry` on fresh data directories: wall and CPU to the first 200, and with `idleRss`, RSS 2 s later. */
async function coldStarts(entry, { env = process.env, idleRss = false } = {}) {
  const starts = [];
  const cpus = [];
  const rss = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = tmpDir();
    const s = await start(process.execPath, [...withServerNodeFlags([]), path.join(ROOT, entry)], dir, { env });
    starts.push(s.ms);
    cpus.push(s.cpu);
    if (idleRss) {
      await new Promise((r) => setTimeout(r, 2000));
      rss.push(rssMb(s.child.pid));
    }
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { ms: Math.round(median(starts)), cpu: Math.round(median(cpus)), rss: idleRss ? +median(rss).toFixed(1) : undefined };
}

for (const [name, entry] of [
  ['server.mjs', 'dist/src/server.mjs'],
  ['main.js', 'dist/src/main.js'],
]) {
  const r = await coldStarts(entry, { idleRss: true });
  const key = name === 'server.mjs' ? '' : '_main_js';
  figures[`cold_start_ms${key}`] = r.ms;
  figures[`cold_start_cpu_ms${key}`] = r.cpu;
  figures[`idle_rss_mb${key}`] = r.rss;
  rows.push({ bench: `P10 cold start (${name})`, value: `${r.ms} ms (cpu ${r.cpu} ms)`, target: '<= 300 ms' });
  rows.push({ bench: `P7 idle RSS (${name})`, value: `${r.rss.toFixed(1)} MB`, target: '<= 90 MB' });
}

// The server `npm start` runs, without this environment's NODE_EXTRA_CA_CERTS (see above).
if (EXTRA_CA !== undefined) {
  const r = await coldStarts('dist/src/server.mjs', { env: DEFAULT_ENV });
  figures.cold_start_ms_default_env = r.ms;
  figures.cold_start_cpu_ms_default_env = r.cpu;
  rows.push({ bench: 'P10 cold start (server.mjs), no NODE_EXTRA_CA_CERTS', value: `${r.ms} ms (cpu ${r.cpu} ms)`, target: '<= 300 ms' });
}

// `npm start` on a built checkout (the build is current: no compilation).
{
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = tmpDir();
    const s = await start('npm', ['start', '--silent'], dir, { detached: true });
    times.push(s.ms);
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  figures.npm_start_ms = Math.round(median(times));
  rows.push({ bench: 'P10 npm start, built checkout', value: `${figures.npm_start_ms} ms`, target: '<= 1000 ms' });
}

// A restart that restores QUEUES saved queues (each with two pending events).
{
  const dir = tmpDir();
  const first = await start(process.execPath, [...withServerNodeFlags([]), path.join(ROOT, 'dist/src/server.mjs')], dir);
  const rc = fs.readFileSync(path.join(dir, 'zuliprc'), 'utf8');
  const auth = 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)[1].trim()}:${/key=(.*)/.exec(rc)[1].trim()}`).toString('base64');
  const reg = await fetch(`${first.base}/api/v1/register`, { method: 'POST', headers: { authorization: auth }, body: new URLSearchParams({ event_types: '["message","heartbeat"]' }) });
  if (reg.status !== 200) throw new Error(`register: ${reg.status}`);
  await first.stop();
  const file = path.join(dir, 'event-queues.json');
  const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
  const [model] = saved.queues;
  const queues = [];
  for (let i = 0; i < QUEUES; i++) {
    const id = `${crypto.randomUUID()}`;
    queues.push({ ...model, descriptor: { ...model.descriptor, id }, nextEventId: 2, newestPrunedId: -1, events: [{ id: 0, event: { type: 'heartbeat' } }, { id: 1, event: { type: 'heartbeat' } }] });
  }
  fs.writeFileSync(file, JSON.stringify({ ...saved, queues }));
  const restarted = await start(process.execPath, [...withServerNodeFlags([]), path.join(ROOT, 'dist/src/server.mjs')], dir);
  const probe = await fetch(`${restarted.base}/api/v1/events?${new URLSearchParams({ queue_id: queues[QUEUES - 1].descriptor.id, last_event_id: '-1', dont_block: 'true' })}`, { headers: { authorization: auth } });
  const got = await probe.json();
  if (probe.status !== 200 || got.events.length !== 2) throw new Error(`restored queue not served: ${probe.status} ${JSON.stringify(got)}`);
  await restarted.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  figures.restart_with_queues_ms = Math.round(restarted.ms);
  figures.restart_with_queues_cpu_ms = Math.round(restarted.cpu);
  figures.restored_queues = QUEUES;
  rows.push({ bench: `P10 restart restoring ${QUEUES} queues`, value: `${figures.restart_with_queues_ms} ms (cpu ${figures.restart_with_queues_cpu_ms} ms)`, target: '<= 1000 ms' });
}

table(rows);
record('P7_P10', { ...figures, cold_start_ms: figures.cold_start_ms, idle_rss_mb: figures.idle_rss_mb });

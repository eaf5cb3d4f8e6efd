// Scale-out figures: one and two Parley processes on one PostgreSQL database and one Redis
// (PARLEY_DATABASE_URL / PARLEY_REDIS_URL), loopback only, bounded in time:
//   P4  fan-out: N long-polling clients (split across the processes), one channel message sent
//       through the first process; time from the send to the LAST poll answered (median of
//       BENCH_P4_ROUNDS rounds, default 3 x BENCH_RUNS);
//   P5  deliveries/s: CLIENTS pollers answer-and-re-poll while DRIVERS (BENCH_P5_DRIVERS, default 2)
//       send typing notifications (drivers and pollers spread over the processes: most deliveries
//       cross processes); median of RUNS windows of DURATION s;
//   presence: every user's modern presence report (POST /users/me/presence with last_update_id),
//       10 connections over the processes at the maximum rate: Parley's and Redis's CPU per report;
//   sends/s: CONC concurrent senders post channel messages to a 50-subscriber channel for DURATION s.
// Every configuration is set up first; their P4 rounds and P5 windows then run in turn, so P11's
// ratios (printed, and recorded as `paired`) are medians of ratios of figures taken seconds apart.
// The load generator shares the machine's cores with the servers, PostgreSQL and Redis: with
// 2 cores, a second process has no core of its own. Needs `npm run build` first.
// Env: BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379), BENCH_RUNS, BENCH_DURATION,
// BENCH_P4_CLIENTS, BENCH_P5_CLIENTS, BENCH_SEND_CONC, BENCH_PROCESSES (default "0,1,2": 0 is one
// process on the same PostgreSQL WITHOUT Redis, the in-process figures P11 compares with).
// BENCH_SCHEDSTAT=1: for each measured P4 round, the scheduler's account (/proc schedstat) of the
// Parley processes, the Redis server, PostgreSQL and this load generator over the round: time on
// a CPU and time runnable but waiting for one (medians per round, printed and recorded as p4.sched).
// BENCH_SERVER_STDOUT=<path>: each server's standard output to <path>.<port> (bench/lib.mjs serverStdout).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { cpuMicros, freePort, load, median, parkMs, PARLEY_MAIN, postgresPids, QUICK, record, schedSnapshot, serverNodeArgs, serverStdout, table } from './lib.mjs';
import { call, channelWith, makeUsers, percentile, poll, register, sendToChannel, sleep } from './events-lib.mjs';
import { fanOutPollers, lastEventId, pollRequest, runPollers } from './raw-poller.mjs';

const PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
// P4 rounds per configuration (each under a second): more than RUNS, as one round is one sample.
const P4_ROUNDS = Number(process.env.BENCH_P4_ROUNDS ?? RUNS * 3);
const P4_CLIENTS = Number(process.env.BENCH_P4_CLIENTS ?? 1000);
const P5_CLIENTS = Number(process.env.BENCH_P5_CLIENTS ?? 500);
const P5_DRIVERS = Number(process.env.BENCH_P5_DRIVERS ?? 2);
const SEND_CONC = Number(process.env.BENCH_SEND_CONC ?? 8);
const PROCESSES = (process.env.BENCH_PROCESSES ?? '0,1,2').split(',').map(Number);
// The quick run (BENCH_QUICK) takes the account too, so that a broken one is caught.
const SCHED = process.env.BENCH_SCHEDSTAT === '1' || QUICK;
const USERS = QUICK ? 20 : 100;
// BENCH_SCALE_PARTS: which of p4,p5,presence,sends to run (default all).
const PARTS = new Set((process.env.BENCH_SCALE_PARTS ?? 'p4,p5,presence,sends').split(','));
const MAIN = PARLEY_MAIN;
if (!fs.existsSync(MAIN)) throw new Error('run `npm run build` first');

async function admin(q) {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    await c.query(q);
  } finally {
    await c.end();
  }
}

async function startNode(env) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-scale-bench-'));
  const child = spawn(process.execPath, [...serverNodeArgs(), MAIN], {
    env: { ...process.env, ...env, PARLEY_PORT: String(port), PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'warn' },
    stdio: ['ignore', serverStdout(port, 'ignore'), 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error('Parley did not start');
    try {
      if ((await fetch(`${base}/ready`)).status === 200) break;
    } catch {
      /* not yet */
    }
    await sleep(20);
  }
  return {
    base,
    dataDir,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU so far (microseconds) of every Parley process of a configuration. */
const processesCpu = (nodes) => nodes.reduce((a, n) => a + (cpuMicros(n.pid) ?? NaN), 0);

/** Redis server CPU so far (user + system, microseconds), from INFO cpu: other clients of the same Redis count too. */
async function redisCpu() {
  const r = new Redis(REDIS);
  try {
    const info = await r.info('cpu');
    return (Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1])) * 1e6;
  } finally {
    r.disconnect();
  }
}

/** Calls `batch` with each SCAN batch of the keys under `prefix` (on a connection of its own). */
async function eachKeyBatch(prefix, batch) {
  const r = new Redis(REDIS);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await batch(r, keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

/**
 * Bytes the keys under `prefix` take in Redis (MEMORY USAGE of each, every element counted): one
 * configuration's own keys, whatever other clients of the same Redis do meanwhile.
 */
async function redisBytesUnder(prefix) {
  let total = 0;
  await eachKeyBatch(prefix, async (r, keys) => {
    const p = r.pipeline();
    for (const key of keys) p.memory('USAGE', key, 'SAMPLES', 0);
    for (const [err, bytes] of await p.exec()) if (!err) total += Number(bytes ?? 0);
  });
  return total;
}

function purge(prefix) {
  return eachKeyBatch(prefix, (r, keys) => r.del(...keys));
}

/** One configuration's servers, database, users and channel (torn down by stop()). */
async function setUp(requested) {
  // 0: one process, queues in memory (no Redis); n >= 1: n processes sharing Redis.
  const withRedis = requested > 0;
  const nProcs = Math.max(1, requested);
  const db = `parley_scale_bench_${randomBytes(4).toString('hex')}`;
  const prefix = `parley:bench:${randomBytes(4).toString('hex')}:`;
  await admin(`CREATE DATABASE ${db}`);
  const url = new URL(PG);
  url.pathname = '/' + db;
  const env = {
    PARLEY_DATABASE_URL: url.toString(),
    ...(withRedis ? { PARLEY_REDIS_URL: REDIS, PARLEY_REDIS_PREFIX: prefix } : {}),
    PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1',
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_HEARTBEAT_MS: '120000',
    PARLEY_HEARTBEAT_JITTER_MS: '0',
    PARLEY_RATE_LIMIT_PER_USER: '0',
    PARLEY_RATE_LIMIT_PER_IP: '0',
  };
  const nodes = [];
  const stop = async () => {
    for (const n of nodes) await n.stop().catch(() => undefined);
    await purge(prefix);
    await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  };
  try {
    for (let i = 0; i < nProcs; i++) nodes.push(await startNode(env));
    const rc = fs.readFileSync(path.join(nodes[0].dataDir, 'zuliprc'), 'utf8');
    const auth = 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)[1].trim()}:${/key=(.*)/.exec(rc)[1].trim()}`).toString('base64');
    const server = { base: nodes[0].base, auth };
    const users = await makeUsers(server, USERS, 's');
    const channelId = await channelWith(server, 'scale', users);
    const out = { processes: nProcs, redis: withRedis };
    const at = (i) => nodes[i % nodes.length].base;
    return { nodes, server, users, channelId, out, at, withRedis, prefix, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The Redis server's pid when it runs on this machine (INFO server), else undefined. */
let redisPid;
async function localRedisPid() {
  if (redisPid !== undefined) return redisPid || undefined;
  const r = new Redis(REDIS);
  try {
    const pid = /process_id:(\d+)/.exec(await r.info('server'))?.[1];
    redisPid = pid && fs.existsSync(`/proc/${pid}/comm`) && fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('redis') ? pid : '';
  } finally {
    r.disconnect();
  }
  return redisPid || undefined;
}

/** The scheduler's account so far, per part of the machine: this configuration's Parley processes, Redis, PostgreSQL, this load generator. */
async function schedGroups(cfg) {
  const rpid = cfg.withRedis ? await localRedisPid() : undefined;
  const parts = { parley: cfg.nodes.map((n) => n.pid), redis: rpid ? [rpid] : [], postgres: postgresPids(), client: [process.pid] };
  // The window runs from the end of the first reading to the start of the second.
  const out = { start: performance.now(), end: 0, parts: {} };
  for (const [name, pids] of Object.entries(parts)) out.parts[name] = new Map(pids.map((pid) => [String(pid), schedSnapshot(pid)]).filter(([, v]) => v !== undefined));
  out.end = performance.now();
  return out;
}

/** What each part ran and waited between two schedGroups (processes in both only), and the wall time. */
function schedBetween(a, b) {
  const out = { wall_ms: b.start - a.end };
  for (const [name, after] of Object.entries(b.parts)) {
    let run = 0;
    let wait = 0;
    let mainRun = 0;
    let mainWait = 0;
    for (const [pid, s] of after) {
      const s0 = a.parts[name].get(pid);
      if (!s0) continue;
      run += s.runMs - s0.runMs;
      wait += s.waitMs - s0.waitMs;
      mainRun += s.mainRunMs - s0.mainRunMs;
      mainWait += s.mainWaitMs - s0.mainWaitMs;
    }
    out[`${name}_run_ms`] = run;
    out[`${name}_wait_ms`] = wait;
    // A node process's main thread (its JavaScript), apart from its helper threads (the collector's, libuv's).
    if (name === 'parley' || name === 'client') {
      out[`${name}_main_run_ms`] = mainRun;
      out[`${name}_main_wait_ms`] = mainWait;
    }
  }
  return out;
}

function schedMedians(rounds) {
  const out = {};
  for (const k of Object.keys(rounds[0])) out[k] = +median(rounds.map((r) => r[k])).toFixed(2);
  const busy = rounds.map((r) => (r.parley_run_ms + r.redis_run_ms + r.postgres_run_ms + r.client_run_ms) / (r.wall_ms * os.cpus().length));
  out.cores_busy = +median(busy).toFixed(2);
  return out;
}

/** P4: queues registered and polled round-robin over the processes; the send goes through the first. */
async function prepareP4(cfg) {
  const { at, users, server } = cfg;
  const queues = [];
  // Redis memory per registered queue (its hash, its user's set member, its expiry entry): the capacity model's
  // figure (bench/capacity.mjs).
  const memBefore = cfg.withRedis ? await redisBytesUnder(cfg.prefix) : 0;
  for (let i = 0; i < P4_CLIENTS; i += 200) {
    const batch = [];
    for (let j = i; j < Math.min(P4_CLIENTS, i + 200); j++) batch.push(register(at(j), users[j % USERS].auth, { event_types: ['message'] }).then((q) => ({ ...q, base: at(j + 1) })));
    queues.push(...(await Promise.all(batch)));
  }
  // Lean clients (bench/raw-poller.mjs fanOutPollers, as P4 uses): node's HTTP client with JSON.parse
  // on the same 2 cores measured mostly itself. Each client re-polls once the round is over.
  const redisBytesPerQueue = cfg.withRedis ? Math.round(((await redisBytesUnder(cfg.prefix)) - memBefore) / queues.length) : undefined;
  const clients = await fanOutPollers(queues, (q) => new URL(q.base).port);
  const lasts = [];
  const p99s = [];
  const scheds = [];
  return {
    lasts,
    async round(run) {
      await sleep(parkMs(queues.length));
      const before = SCHED && run >= 0 ? await schedGroups(cfg) : undefined;
      const lat = await clients.round(() => sendToChannel(server, 'scale', `fan-out ${run}`));
      if (before) scheds.push(schedBetween(before, await schedGroups(cfg)));
      if (run >= 0) {
        lasts.push(Math.max(...lat));
        p99s.push(percentile(lat, 99));
      }
    },
    async finish() {
      clients.destroy();
      await sleep(300);
      await Promise.all(queues.map((q) => call(q.base, q.auth, 'DELETE', '/events', { queue_id: q.queueId })));
      cfg.out.p4 = {
        clients: P4_CLIENTS,
        last_answered_ms: +median(lasts).toFixed(1),
        p99_ms: +median(p99s).toFixed(1),
        rounds_ms: lasts.map((x) => +x.toFixed(1)),
        ...(redisBytesPerQueue === undefined ? {} : { redis_bytes_per_queue: redisBytesPerQueue }),
        ...(scheds.length ? { sched: schedMedians(scheds) } : {}),
      };
    },
  };
}

/**
 * P5: pollers on every process (each re-polling at once), woken by typing notifications that two
 * drivers send through the processes (most deliveries cross processes when there are two).
 * window() drives them for one measured window; between windows the pollers stay parked.
 */
async function prepareP5(cfg) {
  const { at, users, server, nodes, channelId, withRedis } = cfg;
  const CAPS = { notification_settings_null: true, stream_typing_notifications: true };
  const pq = [];
  for (let i = 0; i < P5_CLIENTS; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(P5_CLIENTS, i + 100); j++) batch.push(register(at(j), users[j % USERS].auth, { event_types: ['typing'], client_capabilities: CAPS }).then((q) => ({ ...q, base: at(j) })));
    pq.push(...(await Promise.all(batch)));
  }
  const pgroups = nodes.map((n) => pq.filter((q) => q.base === n.base)).filter((g) => g.length > 0);
  const ppollers = [];
  for (const group of pgroups) {
    ppollers.push(await runPollers(new URL(group[0].base).port, group.length, (i) => pollRequest(group[i]), (i, body) => {
      const id = lastEventId(body);
      if (id >= 0) group[i].last = id;
    }));
  }
  const answersNow = () => ppollers.reduce((a, p) => a + p.answers(), 0);
  let commits = 0;
  const typing = (i, op) => call(at(i), server.auth, 'POST', '/typing', { type: 'channel', op, stream_id: channelId, topic: 'bench' });
  // CPU per delivery (all Parley processes; Redis): steadier than deliveries/s on a shared machine.
  const rates = [];
  const cpus = [];
  const redisCpus = [];
  return {
    rates,
    async window(run) {
      let running = true;
      const drivers = Array.from({ length: P5_DRIVERS }, async (_, d) => {
        while (running) {
          await typing(d + 1, commits % 2 ? 'start' : 'stop');
          commits++;
        }
      });
      await sleep(QUICK ? 300 : run < 0 ? 2000 : 1000);
      if (run >= 0) {
        const cpu0 = processesCpu(nodes);
        const r0 = withRedis ? await redisCpu() : 0;
        const a0 = answersNow();
        const t0 = process.hrtime.bigint();
        await sleep(DURATION * 1000);
        const delivered = answersNow() - a0;
        rates.push(delivered / (Number(process.hrtime.bigint() - t0) / 1e9));
        cpus.push((processesCpu(nodes) - cpu0) / delivered);
        redisCpus.push(withRedis ? ((await redisCpu()) - r0) / delivered : 0);
      }
      running = false;
      await Promise.all(drivers);
    },
    async finish() {
      const stopped = Promise.all(ppollers.map((p) => p.stop()));
      await typing(0, 'stop');
      await stopped;
      await Promise.all(pq.map((q) => call(q.base, q.auth, 'DELETE', '/events', { queue_id: q.queueId })));
      cfg.out.p5 = {
        clients: P5_CLIENTS,
        deliveries_per_s: Math.round(median(rates)),
        parley_cpu_us: +median(cpus).toFixed(1),
        redis_cpu_us: +median(redisCpus).toFixed(1),
        windows_per_s: rates.map(Math.round),
      };
    },
  };
}

/**
 * Presence: POST /users/me/presence as a modern client sends it every minute (status=active with
 * the newest update id it has: the answer is the delta, empty here), every user online, users
 * rotating, 10 connections spread over the processes at the maximum rate. Records the CPU per
 * report of the Parley processes and of Redis (each process brings its replica up to date from
 * Redis and stores the report there): the capacity model's presence cost (bench/capacity.mjs).
 */
async function preparePresence(cfg) {
  const { nodes, users, withRedis } = cfg;
  let latest = -1;
  for (let i = 0; i < users.length; i += 50) {
    const answers = await Promise.all(users.slice(i, i + 50).map((u, j) => call(nodes[(i + j) % nodes.length].base, u.auth, 'POST', '/users/me/presence', { status: 'active', last_update_id: -1 })));
    for (const a of answers) {
      if (a.result !== 'success') throw new Error(`presence: ${JSON.stringify(a)}`);
      latest = Math.max(latest, a.presence_last_update_id);
    }
  }
  const body = `status=active&last_update_id=${latest}`;
  const cpus = [];
  const redisCpus = [];
  const rates = [];
  const perNode = Math.max(1, Math.floor(10 / nodes.length));
  const loadAll = (duration) =>
    Promise.all(
      nodes.map((n, k) => {
        let next = k;
        return load({
          url: `${n.base}/api/v1/users/me/presence`,
          duration,
          connections: perNode,
          requests: [
            {
              method: 'POST',
              setupRequest: (req) => ({ ...req, body, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: users[(next += nodes.length) % users.length].auth } }),
            },
          ],
        });
      }),
    );
  return {
    async window(run) {
      if (run < 0) {
        await loadAll(QUICK ? 1 : 2);
        return;
      }
      const cpu0 = processesCpu(nodes);
      const r0 = withRedis ? await redisCpu() : 0;
      const t0 = process.hrtime.bigint();
      const parts = await loadAll(DURATION);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const total = parts.reduce((a, r) => a + r.total, 0);
      const errors = parts.reduce((a, r) => a + r.errors, 0);
      if (errors > 0) throw new Error(`presence: ${errors} errors`);
      rates.push(total / secs);
      cpus.push((processesCpu(nodes) - cpu0) / total);
      redisCpus.push(withRedis ? ((await redisCpu()) - r0) / total : 0);
    },
    finish() {
      cfg.out.presence = {
        reports_per_s: Math.round(median(rates)),
        parley_cpu_us: +median(cpus).toFixed(1),
        redis_cpu_us: +median(redisCpus).toFixed(1),
      };
    },
  };
}

/** Sends: a 50-subscriber channel (no queues registered), CONC senders spread over the processes. */
async function measureSends(cfg) {
  const { at, users, server } = cfg;
  const sub = users.slice(0, 50);
  await call(server.base, server.auth, 'POST', '/channels/create', { name: 'scale sends', subscribers: sub.map((u) => u.id) });
  const sendRates = [];
  const sendErrors = [];
  const lat = [];
  for (let run = -1; run < RUNS; run++) {
    let sent = 0;
    const stopAt = Date.now() + DURATION * 1000;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: SEND_CONC }, async (_, c) => {
        while (Date.now() < stopAt) {
          const s = process.hrtime.bigint();
          const r = await call(at(c), server.auth, 'POST', '/messages', { type: 'stream', to: 'scale sends', topic: 'bench', content: `**sent** ${c} ${sent}` });
          if (r.result !== 'success') {
            // Counted and reported, not fatal: the event figures above are this script's point.
            sendErrors.push(r.msg);
            continue;
          }
          if (run >= 0) lat.push(Number(process.hrtime.bigint() - s) / 1e6);
          sent++;
        }
      }),
    );
    if (run >= 0) sendRates.push(sent / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  cfg.out.sends = { concurrency: SEND_CONC, messages_per_s: Math.round(median(sendRates)), p99_ms: +percentile(lat, 99).toFixed(1), errors: sendErrors.length };
  if (sendErrors.length) console.error(`sends: ${sendErrors.length} errors, e.g. ${sendErrors[0]}`);
}

// Every configuration is set up first and its P4 rounds and P5 windows are interleaved with the
// others' (a round of each in turn), so a ratio divides figures taken seconds apart: on this shared
// host the same build's figure moved by a third between runs a minute apart (docs/scaling.md).
const configs = [];
try {
  for (const n of PROCESSES) configs.push(await setUp(n));
  if (PARTS.has('p4')) {
    const p4 = [];
    for (const c of configs) p4.push(await prepareP4(c));
    for (let run = -2; run < P4_ROUNDS; run++) for (const x of p4) await x.round(run);
    for (const x of p4) await x.finish();
  }
  if (PARTS.has('p5')) {
    const p5 = [];
    for (const c of configs) p5.push(await prepareP5(c));
    for (let run = -1; run < RUNS; run++) for (const x of p5) await x.window(run);
    for (const x of p5) await x.finish();
  }
  if (PARTS.has('presence')) {
    const pr = [];
    for (const c of configs) pr.push(await preparePresence(c));
    for (let run = -1; run < RUNS; run++) for (const x of pr) await x.window(run);
    for (const x of pr) x.finish();
  }
  if (PARTS.has('sends')) for (const c of configs) await measureSends(c);
} finally {
  for (const c of configs) await c.stop().catch(() => undefined);
}
const results = configs.map((c) => c.out);

// P11 as the median of per-round (per-window) ratios between configurations measured back to back.
const find = (procs, redis) => results.find((r) => r.processes === procs && r.redis === redis);
const pairedMedian = (a, b, f) => (a && b && a.length === b.length && a.length > 0 ? +median(a.map((x, i) => f(x, b[i]))).toFixed(2) : undefined);
const [inproc, one, two] = [find(1, false), find(1, true), find(2, true)];
const paired = {
  p4_redis1_over_inprocess: pairedMedian(one?.p4?.rounds_ms, inproc?.p4?.rounds_ms, (x, y) => x / y),
  p4_redis2_over_redis1: pairedMedian(two?.p4?.rounds_ms, one?.p4?.rounds_ms, (x, y) => x / y),
  p5_inprocess_over_redis1: pairedMedian(inproc?.p5?.windows_per_s, one?.p5?.windows_per_s, (x, y) => x / y),
  p5_redis1_over_redis2: pairedMedian(one?.p5?.windows_per_s, two?.p5?.windows_per_s, (x, y) => x / y),
};
table(
  results.map((r) => ({
    processes: r.redis ? `${r.processes} (Redis)` : '1 (no Redis)',
    [`P4 last answered ms (${P4_CLIENTS})`]: r.p4?.last_answered_ms ?? '',
    'P4 p99 ms': r.p4?.p99_ms ?? '',
    [`P5 deliveries/s (${P5_CLIENTS})`]: r.p5?.deliveries_per_s ?? '',
    'P5 Parley CPU us/delivery': r.p5?.parley_cpu_us ?? '',
    'P5 Redis CPU us/delivery': r.p5?.redis_cpu_us ?? '',
    'Redis bytes/queue': r.p4?.redis_bytes_per_queue ?? '',
    'presence/s': r.presence?.reports_per_s ?? '',
    'presence CPU us (Redis us)': r.presence ? `${r.presence.parley_cpu_us} (${r.presence.redis_cpu_us})` : '',
    'sends/s': r.sends?.messages_per_s ?? '',
    'send p99 ms': r.sends?.p99_ms ?? '',
  })),
);
if (SCHED) {
  const parts = ['parley', 'redis', 'postgres', 'client'];
  table(
    results
      .filter((r) => r.p4?.sched)
      .map((r) => ({
        processes: r.redis ? `${r.processes} (Redis)` : '1 (no Redis)',
        'round wall ms': r.p4.sched.wall_ms,
        ...Object.fromEntries(parts.map((p) => [`${p} run / wait ms`, `${r.p4.sched[`${p}_run_ms`]} / ${r.p4.sched[`${p}_wait_ms`]}`])),
        'parley main thread run / wait ms': `${r.p4.sched.parley_main_run_ms} / ${r.p4.sched.parley_main_wait_ms}`,
        'client main thread run / wait ms': `${r.p4.sched.client_main_run_ms} / ${r.p4.sched.client_main_wait_ms}`,
        'share of all cores busy': r.p4.sched.cores_busy,
      })),
  );
}
console.log(
  `P11, medians of paired rounds (target <= 1.25 for Redis 1 process against in process; <= 1 for 2 processes against 1): ` +
    `P4 Redis 1 / in process ${paired.p4_redis1_over_inprocess ?? 'n/a'}, 2 / 1 processes ${paired.p4_redis2_over_redis1 ?? 'n/a'}; ` +
    `P5 time per delivery Redis 1 / in process ${paired.p5_inprocess_over_redis1 ?? 'n/a'}, 2 / 1 processes ${paired.p5_redis1_over_redis2 ?? 'n/a'}`,
);
record('scale', { results, paired, runs: RUNS, duration_s: DURATION, note: 'PostgreSQL + Redis, load generator on the same shared 2-core machine; configurations interleaved round by round' });
process.exit(0);

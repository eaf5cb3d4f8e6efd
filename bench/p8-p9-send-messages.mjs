// P8 (SQLite) and P9 (PostgreSQL): sustained POST /messages to a channel with
// 50 subscribers, each holding a registered event queue (fan-out into 50
// queues per message, drained by a worker thread, bench/queue-drainer.mjs), with Markdown content.
// Figures: the maximum send rate (and the server's CPU time per send there, which includes
// its share of the drainer's polls), and p50/p99 at a paced 600 msg/s (P8) or
// 400 msg/s (P9) (performance.md, raised 2026-11-25). Loopback only, bounded in time.
// Targets: P8 >= 1,000 msg/s at most, p99 <= 50 ms paced; P9 >= 600 msg/s, p99 <= 100 ms.
//   node bench/p8-p9-send-messages.mjs            (both; BENCH_ONLY=sqlite|postgres, BENCH_RUNS=3, BENCH_DURATION=5)
import { Worker } from 'node:worker_threads';
import { load, loadWithCpu, median, postgresCpuBetween, postgresCpuSnapshot, record, startParley, table, WARM_S } from './lib.mjs';
import { makeUsers, register } from './events-lib.mjs';
import { createChannel, freshPgDatabase, ownerId } from './messages-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const SUBSCRIBERS = 50;
const CONTENT = 'Load test: **bold**, *italic*, `code`, a list:\n* one\n* two\n\nand a link https://example.com/page?x=1 :smile:';

async function runFor(kind) {
  const pgdb = kind === 'postgres' ? await freshPgDatabase() : null;
  const env = { PARLEY_PASSWORD_HASH_COST: 'fast', PARLEY_RATE_LIMIT_PER_USER: '0', PARLEY_RATE_LIMIT_PER_IP: '0', ...(pgdb ? { PARLEY_DATABASE_URL: pgdb.url } : {}) };
  // BENCH_SERVER_NODE_OPTIONS (e.g. "--import /tmp/hook.mjs"): NODE_OPTIONS of the server. Flags node refuses
  // there (--cpu-prof) go in BENCH_SERVER_NODE_ARGS (bench/lib.mjs startParley).
  if (process.env.BENCH_SERVER_NODE_OPTIONS) env.NODE_OPTIONS = process.env.BENCH_SERVER_NODE_OPTIONS;
  const server = await startParley(env);
  let stopDrainer;
  try {
    const me = await ownerId(server);
    const users = await makeUsers(server, SUBSCRIBERS - 1, 'sub');
    await createChannel(server, 'bench', [me, ...users.map((u) => u.id)]);
    const queues = [];
    for (const u of [{ auth: server.auth }, ...users]) queues.push(await register(server.base, u.auth, { event_types: ['message'] }));
    // Keep every queue's backlog short, as connected clients would: a worker thread polls them
    // (bench/queue-drainer.mjs), apart from autocannon's thread, whose latencies it would stretch.
    const drainer = new Worker(new URL('./queue-drainer.mjs', import.meta.url), { workerData: { base: server.base, queues, intervalMs: 250 } });
    const drained = new Promise((resolve, reject) => {
      drainer.once('message', resolve);
      drainer.once('error', reject);
    });
    stopDrainer = async () => {
      drainer.postMessage('stop');
      const totals = await drained;
      await drainer.terminate();
      return totals;
    };
    const body = new URLSearchParams({ type: 'stream', to: 'bench', topic: 'load', content: CONTENT }).toString();
    const req = {
      url: `${server.base}/api/v1/messages`,
      method: 'POST',
      headers: { authorization: server.auth, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    };
    const first = await (await fetch(req.url, { method: 'POST', headers: req.headers, body })).json();
    if (first.result !== 'success') throw new Error(`send failed: ${JSON.stringify(first)}`);
    await load({ ...req, duration: WARM_S, connections: 8 });
    const max = [];
    // Server CPU per send (user + system, /proc) at the maximum rate: steadier than msg/s on a shared machine.
    // On PostgreSQL, the database's own CPU per send too (every postgres process: the capacity model, bench/capacity.mjs).
    for (let i = 0; i < RUNS; i++) {
      const pg0 = kind === 'postgres' ? postgresCpuSnapshot() : undefined;
      const r = await loadWithCpu(server.child.pid, { ...req, duration: DURATION, connections: 8 });
      const pg = postgresCpuBetween(pg0, pg0 === undefined ? undefined : postgresCpuSnapshot());
      max.push({ ...r, pg_cpu_us: pg === undefined || !r.total ? undefined : pg / r.total });
    }
    const rate = kind === 'postgres' ? 400 : 600;
    const paced = [];
    for (let i = 0; i < RUNS; i++) paced.push(await load({ ...req, duration: DURATION, connections: 16, overallRate: rate }));
    const totals = await stopDrainer();
    stopDrainer = undefined;
    if (totals.failures > 0 || totals.events === 0) throw new Error(`queue drainer: ${JSON.stringify(totals)}`);
    return {
      kind,
      max_rps: Math.round(median(max.map((r) => r.rps))),
      cpu_us_per_send: max[0].cpu_us === undefined ? undefined : Math.round(median(max.map((r) => r.cpu_us))),
      ...(kind === 'postgres' ? { postgres_cpu_us_per_send: max[0].pg_cpu_us === undefined ? undefined : Math.round(median(max.map((r) => r.pg_cpu_us))) } : {}),
      paced_rate: rate,
      paced_rps: Math.round(median(paced.map((r) => r.rps))),
      p50: median(paced.map((r) => r.p50)),
      p99: median(paced.map((r) => r.p99)),
      errors: [...max, ...paced].reduce((s, r) => s + r.errors, 0),
    };
  } finally {
    await stopDrainer?.().catch(() => undefined);
    await server.stop();
    if (pgdb) await pgdb.drop();
  }
}

const kinds = process.env.BENCH_ONLY ? [process.env.BENCH_ONLY] : ['sqlite', 'postgres'];
const rows = [];
for (const k of kinds) rows.push(await runFor(k));
table(
  rows.map((r) => ({
    bench: `${r.kind === 'postgres' ? 'P9' : 'P8'} POST /messages, ${SUBSCRIBERS} subscribers (${r.kind})`,
    max_rps: r.max_rps,
    cpu_us_per_send: r.cpu_us_per_send ?? 'n/a',
    postgres_cpu_us_per_send: r.kind === 'postgres' ? (r.postgres_cpu_us_per_send ?? 'n/a') : '',
    paced: `${r.paced_rps}/${r.paced_rate} msg/s`,
    p50_ms: r.p50,
    p99_ms: r.p99,
    errors: r.errors,
    target: r.kind === 'postgres' ? '>= 600 msg/s max, p99 <= 100 ms @ 400/s' : '>= 1000 msg/s max, p99 <= 50 ms @ 600/s',
  })),
);
for (const r of rows) record(r.kind === 'postgres' ? 'P9' : 'P8', r);

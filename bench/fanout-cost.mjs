// Where a fan-out's time goes: N long-polling clients, one channel message;
// reports first / median / last answer after the send, and the server's and
// this load generator's CPU time per delivery during the round (from
// /proc/<pid>/stat and process.cpuUsage()), which is steadier than wall time
// on a shared machine. Also the CPU cost of one re-poll (GET /events that
// parks). Not part of `npm run bench`; a tool for docs/performance.md.
// Env: BENCH_FANOUT_CLIENTS (default 5000), BENCH_RUNS (default 5),
// BENCH_SERVER_NODE_ARGS (e.g. --cpu-prof), PARLEY_REDIS_URL etc. pass through;
// BENCH_REDIS_PID: also report the Redis server's CPU per delivery and per park.
import fs from 'node:fs';
import { median, startParley } from './lib.mjs';
import { channelWith, makeUsers, poll, register, sendToChannel, sleep } from './events-lib.mjs';

const N = Number(process.env.BENCH_FANOUT_CLIENTS ?? 5000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const USERS = 100;
const TICK_US = 1e6 / 100; // USER_HZ

const cpuUs = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
};

const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast', PARLEY_HEARTBEAT_MS: '120000', PARLEY_HEARTBEAT_JITTER_MS: '0' });
try {
  const users = await makeUsers(server, USERS, 'fc');
  await channelWith(server, 'fan-out cost', users);
  const queues = [];
  for (let i = 0; i < N; i += 200) {
    const batch = [];
    for (let j = i; j < Math.min(N, i + 200); j++) batch.push(register(server.base, users[j % USERS].auth, { event_types: ['message'] }));
    queues.push(...(await Promise.all(batch)));
  }
  const rows = { first: [], median: [], last: [], serverUsPerDelivery: [], clientUsPerDelivery: [], serverUsPerPark: [], redisUsPerDelivery: [], redisUsPerPark: [] };
  const redisPid = Number(process.env.BENCH_REDIS_PID ?? 0);
  const redisUs = () => (redisPid ? cpuUs(redisPid) : 0);
  for (let run = -2; run < RUNS; run++) {
    const done = new Array(N);
    const s0 = cpuUs(server.child.pid);
    const r0 = redisUs();
    const polls = queues.map((q, i) => poll(server.base, q).then(() => (done[i] = process.hrtime.bigint())));
    await sleep(500 + N / 5);
    const s1 = cpuUs(server.child.pid);
    const r1 = redisUs();
    const c1 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await sendToChannel(server, 'fan-out cost', `fan-out ${run}`);
    await Promise.all(polls);
    const c2 = process.cpuUsage(c1);
    await sleep(300);
    const s2 = cpuUs(server.child.pid);
    const r2 = redisUs();
    const lat = done.map((t) => Number(t - t0) / 1e6).sort((a, b) => a - b);
    if (run < 0) continue;
    rows.first.push(lat[0]);
    rows.median.push(lat[N >> 1]);
    rows.last.push(lat[N - 1]);
    rows.serverUsPerDelivery.push((s2 - s1) / N);
    rows.clientUsPerDelivery.push((c2.user + c2.system) / N);
    rows.serverUsPerPark.push((s1 - s0) / N);
    rows.redisUsPerDelivery.push((r2 - r1) / N);
    rows.redisUsPerPark.push((r1 - r0) / N);
  }
  const out = {};
  for (const [k, v] of Object.entries(rows)) out[k] = +median(v).toFixed(1);
  console.log(JSON.stringify({ clients: N, runs: RUNS, ...out }));
} finally {
  await server.stop();
}
process.exit(0);

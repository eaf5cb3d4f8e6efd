// P4: event fan-out. N clients long-poll GET /events for message events; one
// channel message to a channel all 100 users are subscribed to is timed from
// the send request to the answer of the LAST waiting poll (the send commits,
// then the events are queued and the polls answered). Clients are 100 users
// with N/100 queues each. Median of RUNS rounds per size,
// after two warm-up rounds. The load generator runs on the same 2 cores.
import { median, record, startParley, table } from './lib.mjs';
import { channelWith, makeUsers, percentile, poll, register, sendToChannel, sleep } from './events-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SIZES = (process.env.BENCH_P4_SIZES ?? '1000,5000').split(',').map(Number);
const USERS = 100;

const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast', PARLEY_HEARTBEAT_MS: '120000', PARLEY_HEARTBEAT_JITTER_MS: '0', PARLEY_RATE_LIMIT_PER_USER: '0', PARLEY_RATE_LIMIT_PER_IP: '0' });
const rows = [];
const figures = {};
try {
  const users = await makeUsers(server, USERS, 'p4');
  await channelWith(server, 'p4 fan-out', users);
  // Reference: the same send with no queue registered (the commit alone, no fan-out).
  const alone = [];
  for (let i = 0; i < 5 + RUNS; i++) {
    const t0 = process.hrtime.bigint();
    await sendToChannel(server, 'p4 fan-out', `alone ${i}`);
    if (i >= 5) alone.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  figures.send_without_queues_ms = +median(alone).toFixed(1);
  rows.push({ bench: 'P4 reference: the send with no queues', 'p99 ms': '', 'last answered ms': figures.send_without_queues_ms, target: '' });
  const queues = [];
  for (const n of SIZES) {
    while (queues.length < n) {
      const batch = [];
      for (let i = queues.length; i < Math.min(n, queues.length + 200); i++) batch.push(register(server.base, users[i % USERS].auth, { event_types: ['message'] }));
      queues.push(...(await Promise.all(batch)));
    }
    const lasts = [];
    const p99s = [];
    const WARMUP = 2; // JIT warm-up rounds, not counted
    for (let run = -WARMUP; run < RUNS; run++) {
      const done = new Array(n);
      let t0 = 0n;
      const polls = queues.map((q, i) => poll(server.base, q).then(() => (done[i] = process.hrtime.bigint())));
      await sleep(500 + n / 5); // let every poll park
      t0 = process.hrtime.bigint();
      await sendToChannel(server, 'p4 fan-out', `fan-out ${n} ${run}`);
      await Promise.all(polls);
      const lat = done.map((t) => Number(t - t0) / 1e6);
      if (run >= 0) {
        lasts.push(Math.max(...lat));
        p99s.push(percentile(lat, 99));
      }
      await sleep(200);
    }
    const last = +median(lasts).toFixed(1);
    const p99 = +median(p99s).toFixed(1);
    figures[`clients_${n}`] = { last_answered_ms: last, p99_ms: p99, runs: RUNS };
    rows.push({ bench: `P4 fan-out, ${n} long-polling clients`, 'p99 ms': p99, 'last answered ms': last, target: n <= 1000 ? '<= 30 ms' : '<= 150 ms' });
  }
  table(rows);
  record('P4', figures);
} finally {
  await server.stop();
}
process.exit(0);

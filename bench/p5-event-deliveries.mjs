// P5: event deliveries per second. CLIENTS long-pollers (100 users, CLIENTS/100
// queues each) answer-and-re-poll as fast as they can while DRIVERS concurrent
// drivers keep sending channel typing notifications to a channel all users are
// subscribed to (one typing event per queue each; typing writes nothing, so the
// figure measures delivery, not the database). A delivery is one long-poll answer followed by
// its re-poll; the figure is answers per second over DURATION seconds, after a
// warm-up. Events per answer show how much batching the load caused.
import { median, record, startParley, table } from './lib.mjs';
import { call, channelWith, makeUsers, poll, register, sleep } from './events-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CLIENTS = Number(process.env.BENCH_P5_CLIENTS ?? 500);
const USERS = 100;
const DRIVERS = Number(process.env.BENCH_P5_DRIVERS ?? 2);
const CAPS = { notification_settings_null: true, stream_typing_notifications: true };

const server = await startParley({
  PARLEY_PASSWORD_HASH_COST: 'fast',
  PARLEY_HEARTBEAT_MS: '120000',
  PARLEY_HEARTBEAT_JITTER_MS: '0',
  PARLEY_RATE_LIMIT_PER_USER: '0',
  PARLEY_RATE_LIMIT_PER_IP: '0',
});
try {
  const users = await makeUsers(server, USERS, 'p5');
  const channelId = await channelWith(server, 'p5 deliveries', users);
  const typing = async (op) => {
    const r = await call(server.base, server.auth, 'POST', '/typing', { type: 'channel', op, stream_id: channelId, topic: 'bench' });
    if (r.result !== 'success') throw new Error(JSON.stringify(r));
  };
  const queues = [];
  for (let i = 0; i < CLIENTS; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(CLIENTS, i + 100); j++) batch.push(register(server.base, users[j % USERS].auth, { event_types: ['typing'], client_capabilities: CAPS }));
    queues.push(...(await Promise.all(batch)));
  }

  let answers = 0;
  let events = 0;
  let running = true;
  const loops = queues.map(async (q) => {
    while (running) {
      const got = await poll(server.base, q);
      answers++;
      events += got.length;
    }
  });
  let commits = 0;
  const drivers = Array.from({ length: DRIVERS }, async () => {
    while (running) {
      await typing(commits % 2 ? 'start' : 'stop');
      commits++;
    }
  });

  await sleep(2000); // warm-up
  const rates = [];
  const perAnswer = [];
  const commitRates = [];
  for (let run = 0; run < RUNS; run++) {
    const a0 = answers;
    const e0 = events;
    const c0 = commits;
    const t0 = process.hrtime.bigint();
    await sleep(DURATION * 1000);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    rates.push((answers - a0) / secs);
    perAnswer.push((events - e0) / Math.max(1, answers - a0));
    commitRates.push((commits - c0) / secs);
  }
  running = false;
  // One more notification releases every poller so the loops end.
  await Promise.all(drivers);
  await typing('stop');
  await Promise.all(loops);

  const figures = {
    deliveries_per_s: Math.round(median(rates)),
    events_per_answer: +median(perAnswer).toFixed(2),
    typing_calls_per_s: Math.round(median(commitRates)),
    drivers: DRIVERS,
    clients: CLIENTS,
    duration_s: DURATION,
    runs: RUNS,
  };
  table([{ bench: `P5 event deliveries, ${CLIENTS} long-pollers`, 'deliveries/s': figures.deliveries_per_s, 'events/answer': figures.events_per_answer, 'typing calls/s': figures.typing_calls_per_s, target: '>= 10,000/s' }]);
  record('P5', figures);
} finally {
  await server.stop();
}
process.exit(0);

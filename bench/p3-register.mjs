// P3: POST /register (everything, default parameters) for a member of a realm
// of 100 users and 50 channels, subscribed to all 50 (each channel with
// about 30 subscribers and a message), under autocannon at a modest
// concurrency; p50/p99 are medians of RUNS runs. The SQL statement count of
// one registration (from GET /metrics) is taken in a small realm (5 users,
// 3 channels) and again in the full one: it must not change. The load
// generator shares the machine's 2 cores, so the server's CPU time per
// request (cpu_us) is the figure to compare on a loaded machine.
import { load, loadWithCpu, median, record, startParley, table } from './lib.mjs';
import { call, makeUsers } from './events-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_P3_CONNECTIONS ?? 2);
const USERS = 100;
const CHANNELS = 50;

const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast' });

async function statementsTotal() {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const m = /^parley_db_statements_total(?:\{[^}]*\})? (\d+(?:\.\d+)?)/m.exec(text);
  if (!m) throw new Error('no parley_db_statements_total in /metrics');
  return Number(m[1]);
}

/** Statements of one registration (the fewest of three, so a background write cannot inflate it). */
async function registerStatements(auth) {
  const counts = [];
  for (let i = 0; i < 3; i++) {
    const before = await statementsTotal();
    const r = await call(server.base, auth, 'POST', '/register');
    if (r.result !== 'success') throw new Error(`register: ${JSON.stringify(r)}`);
    counts.push((await statementsTotal()) - before);
    await call(server.base, auth, 'DELETE', '/events', { queue_id: r.queue_id });
  }
  return Math.min(...counts);
}

let channels = 0;
async function growChannels(users, n) {
  for (; channels < n; channels++) {
    const i = channels;
    const subscribers = [users[0].id, ...users.filter((_, k) => k > 0 && (k + i) % 3 === 0).map((u) => u.id)];
    const made = await call(server.base, server.auth, 'POST', '/channels/create', { name: `p3 channel ${i}`, subscribers, invite_only: i % 4 === 3 });
    if (made.result !== 'success') throw new Error(`create channel: ${JSON.stringify(made)}`);
    // The owner is not in the private channels: the measured user posts there (its other messages stay unread).
    const sent = await call(server.base, i % 4 === 3 ? users[0].auth : server.auth, 'POST', '/messages', { type: 'stream', to: `p3 channel ${i}`, topic: `topic ${i}`, content: `hello ${i}` });
    if (sent.result !== 'success') throw new Error(`send: ${JSON.stringify(sent)}`);
  }
}

try {
  const users = await makeUsers(server, 4, 'p3');
  await growChannels(users, 3);
  const smallStatements = await registerStatements(users[0].auth);
  users.push(...(await makeUsers(server, USERS - 1 - users.length, 'p3more')));
  await growChannels(users, CHANNELS);
  const me = users[0];
  const check = await call(server.base, me.auth, 'POST', '/register');
  if (check.subscriptions.length !== CHANNELS || check.realm_users.length < USERS) throw new Error(`realm not as expected: ${check.subscriptions.length} subscriptions, ${check.realm_users.length} users`);
  const statements = await registerStatements(me.auth);

  const opts = {
    url: `${server.base}/api/v1/register`,
    method: 'POST',
    headers: { authorization: me.auth, 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    connections: CONNECTIONS,
  };
  await load({ ...opts, duration: 2 }); // warm-up
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await loadWithCpu(server.child.pid, { ...opts, duration: DURATION }));
  const figures = {
    p50_ms: median(runs.map((r) => r.p50)),
    p99_ms: median(runs.map((r) => r.p99)),
    rps: Math.round(median(runs.map((r) => r.rps))),
    cpu_us: Math.round(median(runs.map((r) => r.cpu_us))),
    statements,
    statements_small_realm: smallStatements,
    connections: CONNECTIONS,
    runs: RUNS,
    response_kb: Math.round(JSON.stringify(check).length / 1024),
    errors: runs.reduce((s, r) => s + r.errors, 0),
  };
  table([{ bench: 'P3 POST /register, 100 users, 50 subs', 'p50 ms': figures.p50_ms, 'p99 ms': figures.p99_ms, 'req/s': figures.rps, 'CPU us/req': figures.cpu_us, statements: `${statements} (small realm: ${smallStatements})`, target: 'p50 <= 5 ms; constant' }]);
  record('P3', figures);
} finally {
  await server.stop();
}
process.exit(0);

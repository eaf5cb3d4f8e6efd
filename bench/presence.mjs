// Presence: POST /users/me/presence with 1,000 users online, the request
// every client sends every minute. Served from memory (no SQL); written
// through to the database in batches. Scenarios, each against the built
// server on loopback, each user's own credentials rotating:
//   - modern:  status=active&last_update_id=<latest> (web and mobile clients: a small delta)
//   - legacy:  status=active (zulip-terminal: every user, legacy email-keyed format)
//   - ping:    status=active&ping_only=true
// Latency is measured at a fixed rate (BENCH_PRESENCE_RATE, default 500/s,
// 30x what 1,000 clients pinging every minute send; the legacy scenario at
// BENCH_PRESENCE_LEGACY_RATE, default 100/s, since each answer is ~190 KB
// that the load generator on the same 2 cores must also read) and
// throughput with 10 connections, plus the latency of one client's requests
// in sequence (no queueing: what the server costs per request, in 0.01 ms).
// Target: p50 <= 2 ms at 1,000 users online.
//   node bench/presence.mjs        (after npm run build)
import { load, median, record, startParley, table, WARM_S } from './lib.mjs';
import { call, makeUsers } from './events-lib.mjs';

const USERS = Number(process.env.BENCH_PRESENCE_USERS ?? 1000);
const RATE = Number(process.env.BENCH_PRESENCE_RATE ?? 500);
const LEGACY_RATE = Number(process.env.BENCH_PRESENCE_LEGACY_RATE ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);

const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast', PARLEY_RATE_LIMIT_PER_USER: '0', PARLEY_RATE_LIMIT_PER_IP: '0' });
const rows = [];
const figures = { users_online: USERS };
try {
  const users = await makeUsers(server, USERS, 'pres');
  let latest = -1;
  for (let i = 0; i < users.length; i += 50) {
    const answers = await Promise.all(users.slice(i, i + 50).map((u) => call(server.base, u.auth, 'POST', '/users/me/presence', { status: 'active', last_update_id: -1 })));
    for (const a of answers) {
      if (a.result !== 'success') throw new Error(JSON.stringify(a));
      latest = Math.max(latest, a.presence_last_update_id);
    }
  }
  const everyone = await call(server.base, users[0].auth, 'POST', '/users/me/presence', { status: 'active' });
  if (Object.keys(everyone.presences).length < USERS) throw new Error(`only ${Object.keys(everyone.presences).length} users online`);
  figures.legacy_response_bytes = Buffer.byteLength(JSON.stringify(everyone));

  const scenarios = {
    modern: `status=active&last_update_id=${latest}`,
    legacy: 'status=active',
    ping: 'status=active&ping_only=true',
  };
  for (const [name, body] of Object.entries(scenarios)) {
    const rate = name === 'legacy' ? LEGACY_RATE : RATE;
    let next = 0;
    const opts = {
      url: `${server.base}/api/v1/users/me/presence`,
      duration: DURATION,
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => ({
            ...req,
            body,
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: users[next++ % users.length].auth },
          }),
        },
      ],
    };
    const lat = [];
    const thr = [];
    await load({ ...opts, duration: WARM_S, connections: 10 }); // warm-up
    for (let r = 0; r < RUNS; r++) {
      const fixed = await load({ ...opts, connections: 10, overallRate: rate });
      if (fixed.errors) throw new Error(`${name}: ${fixed.errors} errors`);
      lat.push(fixed);
      const max = await load({ ...opts, connections: 10 });
      if (max.errors) throw new Error(`${name}: ${max.errors} errors`);
      thr.push(max);
    }
    // One client, one request at a time (server cost without queueing).
    const seq = [];
    const params = Object.fromEntries(new URLSearchParams(body));
    for (let i = 0; i < 1000; i++) {
      const t0 = process.hrtime.bigint();
      const r = await call(server.base, users[i % users.length].auth, 'POST', '/users/me/presence', params);
      seq.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (r.result !== 'success') throw new Error(JSON.stringify(r));
    }
    seq.sort((a, b) => a - b);
    const f = {
      p50_ms_sequential: +seq[500].toFixed(2),
      p99_ms_sequential: +seq[990].toFixed(2),
      p50_ms_at_rate: median(lat.map((x) => x.p50)),
      p99_ms_at_rate: median(lat.map((x) => x.p99)),
      rate,
      max_rps_10_connections: Math.round(median(thr.map((x) => x.rps))),
      p50_ms_at_max: median(thr.map((x) => x.p50)),
    };
    figures[name] = f;
    rows.push({ scenario: `presence ${name}`, 'p50 ms 1 client': f.p50_ms_sequential, 'rate/s': rate, 'p50 ms': f.p50_ms_at_rate, 'p99 ms': f.p99_ms_at_rate, 'max req/s (10 conns)': f.max_rps_10_connections, target: 'p50 <= 2 ms' });
  }
  table(rows);
  console.log(`${USERS} users online; legacy full response ${figures.legacy_response_bytes} bytes; median of ${RUNS} runs`);
  record('presence', figures);
} finally {
  await server.stop();
}
process.exit(0);

// The capacity model of docs/scaling.md, computed from a benchmark run's figures: how many Parley
// processes, how much Redis and PostgreSQL an organization of 10k, 100k and 1M users needs at its
// peak hour, and which component saturates first. The per-unit costs are CPU times measured by
// `npm run bench` (each server's own CPU per unit, from /proc and Redis's INFO); the usage figures
// are the assumptions below, printed with the model. `npm run bench` prints the model of the run
// it just made; on its own:
//   node bench/capacity.mjs [results.json]     (default: $BENCH_RESULTS or bench/results/latest.json)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** How an organization uses the server at its peak hour (change them to your own and rerun). */
export const ASSUMPTIONS = Object.freeze({
  /** Share of users online at the peak. */
  onlineShare: 0.5,
  /** Clients (event queue + parked long poll) per online user: desktop and phone. */
  clientsPerOnlineUser: 1.5,
  messagesPerUserPerDay: 40,
  workdayHours: 8,
  /** The peak hour's rate over the working day's average. */
  peakFactor: 2,
  /** `user_messages` rows per message: P9's channel of 50 subscribers, whose send cost is measured. */
  recipientsPerMessage: 50,
  /** Answers (with re-poll) per message: 20 online clients get it, and later a read-flag event each. */
  deliveriesPerMessage: 40,
  /** A parked poll is answered with a heartbeat about this often (Zulip: 45 s plus jitter). */
  heartbeatSeconds: 50,
  /** Presence report per online client (Zulip's clients: every 60 s). */
  presenceSeconds: 60,
  /** One other API request (a fetch, an edit, a reaction) per online client this often ... */
  otherRequestSeconds: 120,
  /** ... costing about what a 50-message page does (P2: 0.7-1.1 ms of the server's time per page). */
  otherRequestUs: 1000,
  registersPerUserPerDay: 4,
  /** Redis commands inside the append script per queue (HMGET, RPUSH: key layout 2). */
  redisCommandsPerDelivery: 2,
  /** Redis scripts per presence report: the replica brought up to date, the report stored. */
  redisCommandsPerPresence: 2,
  /** How long a delivered event stays in Redis: the owner writes acknowledgements back within 1 s. */
  backlogSeconds: 1,
  /** Bytes of an event in a queue (a message event is 0.5-1 KB). */
  eventBytes: 1000,
  /** A process, Redis's command thread or the database host at most this busy at the peak. */
  busyShare: 0.6,
  /** Parley processes never fewer than this (a second one for redundancy). */
  minProcesses: 2,
  /** Parley's PostgreSQL pool size per process (src/store/db.ts). */
  pgConnectionsPerProcess: 10,
  /** Cores of the PostgreSQL primary the saturation point is computed for. */
  pgPrimaryCores: 16,
});

export const USER_COUNTS = Object.freeze([10_000, 100_000, 1_000_000]);

/**
 * The per-unit costs a run measured, each with where it came from; `missing` names the figures
 * the run lacks (a partial `BENCH_ONLY_SCRIPTS` run, or a script that failed).
 */
export function unitCosts(figures) {
  const redis1 = figures.scale?.results?.find((r) => r.processes === 1 && r.redis === true);
  const costs = {
    deliveryUs: [redis1?.p5?.parley_cpu_us, 'Parley CPU per event delivery with Redis (answer + re-poll; scale-events P5, 1 process)'],
    redisDeliveryUs: [redis1?.p5?.redis_cpu_us, "Redis server's CPU per delivery (the same windows, INFO cpu)"],
    presenceUs: [redis1?.presence?.parley_cpu_us, 'Parley CPU per presence report with Redis (scale-events presence, 1 process)'],
    redisPresenceUs: [redis1?.presence?.redis_cpu_us, "Redis server's CPU per presence report (the same windows)"],
    sendUs: [figures.P9?.cpu_us_per_send, 'Parley CPU per message sent to 50 subscribers on PostgreSQL (P9 at its maximum rate)'],
    pgSendUs: [figures.P9?.postgres_cpu_us_per_send, "PostgreSQL's CPU per such message (P9, every postgres process)"],
    registerUs: [figures.P3?.cpu_us, 'Parley CPU per POST /register (P3: 100 users, 50 subscriptions)'],
    redisBytesPerQueue: [redis1?.p4?.redis_bytes_per_queue, 'Redis memory per registered queue (scale-events P4: MEMORY USAGE of its keys)'],
    pollKbIdle: [figures.P6?.kb_per_idle_client_rss, 'Parley RSS per parked poll, idle (P6)'],
    pollKbBurst: [figures.P6?.kb_per_idle_client_rss_1_5s, 'Parley RSS per parked poll, 1.5 s after a burst of connections (P6)'],
  };
  const out = { sources: {}, missing: [] };
  for (const [k, [v, source]] of Object.entries(costs)) {
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) {
      out[k] = v;
      out.sources[k] = source;
    } else out.missing.push(k);
  }
  return out;
}

/**
 * The per-unit costs of several runs: each cost the median of the runs' figures (the costs of one
 * run move with the host's speed), its source saying so. A cost any run lacks is missing.
 */
export function medianCosts(runs) {
  const each = runs.map(unitCosts);
  const out = { sources: {}, missing: [...new Set(each.flatMap((c) => c.missing))] };
  for (const key of Object.keys(each[0]?.sources ?? {})) {
    if (out.missing.includes(key)) continue;
    const xs = each.map((c) => c[key]).sort((x, y) => x - y);
    const mid = xs.length >> 1;
    out[key] = xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
    out.sources[key] = runs.length > 1 ? `${each[0].sources[key]}; median of ${runs.length} runs (${xs.map(n1).join(' / ')})` : each[0].sources[key];
  }
  return out;
}

/** The model for one organization size (all rates per second, at the peak hour). */
export function modelFor(users, costs, a = ASSUMPTIONS) {
  const clients = users * a.onlineShare * a.clientsPerOnlineUser;
  const perPeakSecond = (perDay) => ((users * perDay) / (a.workdayHours * 3600)) * a.peakFactor;
  const messages = perPeakSecond(a.messagesPerUserPerDay);
  const deliveries = messages * a.deliveriesPerMessage + clients / a.heartbeatSeconds;
  const presence = clients / a.presenceSeconds;
  const other = clients / a.otherRequestSeconds;
  const registers = perPeakSecond(a.registersPerUserPerDay);
  const parleyCores =
    (deliveries * costs.deliveryUs + presence * costs.presenceUs + other * a.otherRequestUs + messages * costs.sendUs + registers * costs.registerUs) / 1e6;
  const processes = Math.max(a.minProcesses, Math.ceil(parleyCores / a.busyShare));
  const redisCores = (deliveries * costs.redisDeliveryUs + presence * costs.redisPresenceUs) / 1e6;
  const pgCores = (messages * costs.pgSendUs) / 1e6;
  return {
    users,
    clients,
    messages,
    deliveries,
    presence,
    other,
    registers,
    parleyCores,
    processes,
    redisCommands: deliveries * a.redisCommandsPerDelivery + presence * a.redisCommandsPerPresence,
    redisCores,
    redisMb: (clients * costs.redisBytesPerQueue + deliveries * a.backlogSeconds * a.eventBytes) / 1e6,
    pgRows: messages * a.recipientsPerMessage,
    pgCores,
    pgConnections: processes * a.pgConnectionsPerProcess,
    pollMbIdle: (clients * costs.pollKbIdle) / 1024,
    pollMbBurst: (clients * costs.pollKbBurst) / 1024,
  };
}

/**
 * The organization size at which each single-instance component reaches `busyShare` (every cost is
 * proportional to users, so this is a division): Parley scales out with processes; Redis (one
 * command thread, no Redis Cluster) and the PostgreSQL primary do not.
 */
export function limits(costs, a = ASSUMPTIONS) {
  const unit = modelFor(1_000_000, costs, a);
  // Busy share at 1M users of Redis's one command thread, and of the PostgreSQL primary's cores.
  const redisLoad = unit.redisCores;
  const pgLoad = unit.pgCores / a.pgPrimaryCores;
  return {
    redisUsers: redisLoad > 0 ? Math.floor((1_000_000 * a.busyShare) / redisLoad) : Infinity,
    pgUsers: pgLoad > 0 ? Math.floor((1_000_000 * a.busyShare) / pgLoad) : Infinity,
  };
}

const n0 = (x) => Math.round(x).toLocaleString('en-US');
const n1 = (x) => (x >= 10 ? n0(x) : x.toFixed(1));
const n2 = (x) => (x >= 10 ? n0(x) : x >= 1 ? x.toFixed(1) : x.toFixed(2));
const mb = (x) => (x >= 1024 ? `${(x / 1024).toFixed(1)} GB` : `${n0(x)} MB`);
const k = (x) => (x >= 1e6 ? `${+(x / 1e6).toFixed(1)}M` : x >= 1e3 ? `${+(x / 1e3).toFixed(1)}k` : n0(x));

/**
 * The model as Markdown lines (the tables of docs/scaling.md, "Capacity model"), from one run's
 * figures or several runs' (the median of each cost).
 */
export function formatCapacity(figures, a = ASSUMPTIONS, counts = USER_COUNTS) {
  return formatCosts(medianCosts(Array.isArray(figures) ? figures : [figures]), a, counts);
}

/** The same from costs already taken (unitCosts, medianCosts). */
function formatCosts(costs, a, counts) {
  if (costs.missing.length > 0) return [`Capacity model: not computed, the run lacks ${costs.missing.join(', ')}.`];
  const lines = ['| per-unit cost | measured | from |', '|---|---|---|'];
  const units = { deliveryUs: 'us', redisDeliveryUs: 'us', presenceUs: 'us', redisPresenceUs: 'us', sendUs: 'us', pgSendUs: 'us', registerUs: 'us', redisBytesPerQueue: 'bytes', pollKbIdle: 'KB', pollKbBurst: 'KB' };
  for (const [key, unit] of Object.entries(units)) lines.push(`| ${key} | ${n1(costs[key])} ${unit} | ${costs.sources[key]} |`);
  const models = counts.map((u) => modelFor(u, costs, a));
  const row = (label, f) => `| ${label} | ${models.map(f).join(' | ')} |`;
  lines.push(
    '',
    `| at the peak hour | ${models.map((m) => `${k(m.users)} users`).join(' | ')} |`,
    `|---|${models.map(() => '---').join('|')}|`,
    row('online clients (event queues, parked polls)', (m) => n0(m.clients)),
    row('messages/s', (m) => n0(m.messages)),
    row('event deliveries/s (messages x deliveries per message + heartbeats)', (m) => n0(m.deliveries)),
    row('presence reports/s', (m) => n0(m.presence)),
    row('other requests/s', (m) => n0(m.other)),
    row('Parley CPU (cores)', (m) => n2(m.parleyCores)),
    row(`Parley processes (one per core, at most ${a.busyShare * 100}% busy, at least ${a.minProcesses})`, (m) => n0(m.processes)),
    row('memory of parked polls in Parley, idle to after a burst', (m) => `${mb(m.pollMbIdle)} to ${mb(m.pollMbBurst)}`),
    row('Redis commands/s', (m) => n0(m.redisCommands)),
    row("Redis CPU (cores; its command thread is one core)", (m) => n2(m.redisCores)),
    row('Redis memory (queues + events not yet acknowledged)', (m) => mb(m.redisMb)),
    row('PostgreSQL `user_messages` rows/s', (m) => n0(m.pgRows)),
    row('PostgreSQL CPU for the sends (cores)', (m) => n2(m.pgCores)),
    row(`PostgreSQL connections (${a.pgConnectionsPerProcess} per process; past a few hundred, a pooler such as PgBouncer)`, (m) => n0(m.pgConnections)),
  );
  const lim = limits(costs, a);
  const redis = `Redis (its one command thread ${a.busyShare * 100}% busy) at about ${n0(lim.redisUsers)} users`;
  const pg = `the PostgreSQL primary (${a.pgPrimaryCores} cores ${a.busyShare * 100}% busy with the sends alone) at about ${n0(lim.pgUsers)} users`;
  lines.push('', `Saturates first: ${lim.redisUsers <= lim.pgUsers ? `${redis}; then ${pg}` : `${pg}; then ${redis}`}. Parley processes scale out and are not the limit.`);
  return lines;
}

export function formatAssumptions(a = ASSUMPTIONS) {
  return `Assumptions: ${Object.entries(a)
    .map(([key, v]) => `${key} ${v}`)
    .join(', ')}.`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Several files: the median of each cost over their runs. A line of bench/results/history.jsonl
  // holds a run's figures under `results`: `history.jsonl:N` takes its Nth line (1 is the first, -1 the last).
  const args = process.argv.slice(2);
  if (args.length === 0) args.push(process.env.BENCH_RESULTS ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json'));
  const runs = args.map((arg) => {
    const m = /^(.*\.jsonl):(-?\d+)$/.exec(arg);
    if (!m) return JSON.parse(fs.readFileSync(arg, 'utf8'));
    const lines = fs.readFileSync(m[1], 'utf8').split('\n').filter((l) => l.trim());
    const n = Number(m[2]);
    const line = lines.at(n > 0 ? n - 1 : n);
    if (line === undefined || n === 0) throw new Error(`${m[1]} has ${lines.length} lines, no line ${n}`);
    return JSON.parse(line).results;
  });
  const costs = medianCosts(runs);
  console.log(formatCosts(costs, ASSUMPTIONS, USER_COUNTS).join('\n'));
  console.log(`\n${formatAssumptions()}`);
  process.exit(costs.missing.length > 0 ? 1 : 0);
}

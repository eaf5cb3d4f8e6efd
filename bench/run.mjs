// npm run bench: runs every benchmark of performance.md (P1..P11, W1, F1, plus Markdown and
// presence) against freshly started servers, each beside its baseline, prints one table of
// figures against the targets of ../shared/docs/performance.md (2026-11-25), writes
// bench/results/latest.json, appends the run to bench/results/history.jsonl and redraws
// bench/results/chart.svg. Loopback only; every script is bounded in time. Set BENCH_RUNS
// (default 3) and BENCH_DURATION (seconds, default 5) to trade precision for time.
//
// BENCH_QUICK=1: a smoke run of every script with small sizes, one run of one second each,
// in under two minutes; figures go to a temporary file (BENCH_RESULTS), never to latest.json or
// the history, and mean nothing as measurements. It exists so that a broken benchmark is
// caught (test/bench/quick.test.ts runs it in the suite and checks every row has a figure).
// BENCH_ONLY_SCRIPTS=p1,p4 runs only the scripts whose names start with those prefixes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatCapacity } from './capacity.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
if (QUICK) {
  const quick = {
    BENCH_RUNS: '1',
    BENCH_DURATION: '1',
    BENCH_SMALL: '1000',
    BENCH_LARGE: '3000',
    BENCH_SEARCH_SIZE: '10000',
    BENCH_P4_SIZES: '50,100',
    BENCH_P4_CLIENTS: '50',
    BENCH_P5_CLIENTS: '50',
    BENCH_P6_LOW: '50',
    BENCH_P6_HIGH: '600',
    BENCH_P6_SETTLE_S: '0',
    BENCH_PRESENCE_USERS: '50',
    BENCH_PRESENCE_RATE: '100',
    BENCH_PRESENCE_LEGACY_RATE: '20',
    BENCH_SEND_CONC: '2',
    BENCH_RESTORE_QUEUES: '200',
    BENCH_F1_UPLOADS: '10',
    BENCH_F1_DURATION: '1',
    W1_USERS: '10',
    W1_CHANNELS: '3',
    W1_MESSAGES: '300',
    W1_SENDS: '5',
    W1_LOADS: '1',
  };
  for (const [k, v] of Object.entries(quick)) process.env[k] ??= v;
  process.env.BENCH_RESULTS ??= path.join(os.tmpdir(), `parley-bench-quick-${process.pid}.json`);
}
// Imported after the environment is settled: lib.mjs reads BENCH_RESULTS when it loads.
const { ROOT, RESULTS, table } = await import('./lib.mjs');

const SCRIPTS = [
  'p1-auth-read.mjs',
  'p2-get-messages.mjs',
  'p2-search.mjs',
  'p3-register.mjs',
  'p4-event-fanout.mjs',
  'p5-event-deliveries.mjs',
  'p6-idle-client-memory.mjs',
  'p7-p10-startup-memory.mjs',
  'p8-p9-send-messages.mjs',
  'scale-events.mjs',
  'w1-web.mjs',
  'f1-files.mjs',
  'markdown.mjs',
  'presence.mjs',
];
const only = process.env.BENCH_ONLY_SCRIPTS?.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

const started = Date.now();
const failed = [];
for (const s of SCRIPTS) {
  if (only && !only.some((o) => s.startsWith(o))) continue;
  const file = path.join(ROOT, 'bench', s);
  if (!fs.existsSync(file)) {
    failed.push(`${s} (missing)`);
    continue;
  }
  console.log(`\n=== ${s}`);
  const t0 = Date.now();
  // BENCH_ONLY means "sqlite|postgres" to p8-p9 and is passed through as is.
  const r = spawnSync(process.execPath, [file], { stdio: 'inherit', env: process.env, timeout: QUICK ? 60_000 : 600_000 });
  console.log(`(${s}: ${((Date.now() - t0) / 1000).toFixed(0)} s${r.status === 0 ? '' : `, exit ${r.status ?? r.signal}`})`);
  if (r.status !== 0) failed.push(s);
}

let all = {};
try {
  all = JSON.parse(fs.readFileSync(RESULTS, 'utf8'));
} catch {
  /* every script failed */
}
const g = (k, f) => {
  try {
    const v = f(all[k]);
    return Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
};
const fmt = (v, unit = '') => (v === undefined || v === null ? 'n/a' : `${v}${unit}`);
// scale-events.mjs measures one process without Redis (the in-process reference), then 1 and 2 with Redis.
const scale = (procs, redis = true) => (all.scale?.results ?? []).find((r) => r.processes === procs && (r.redis ?? true) === redis);
// Targets: ../shared/docs/performance.md as raised on 2026-11-25.
const rows = [
  { id: 'P1', what: 'GET /users/me vs bare node:http', figure: `${fmt(g('P1', (x) => x.ratio))} ratio; p99 ${fmt(g('P1', (x) => x.p99_ms_at_70pct), ' ms')} at 70%`, target: '>= 0.70; p99 <= 5 ms at 70%' },
  { id: 'P2', what: 'GET /messages, 50 newest in a channel', figure: `p99 ${fmt(g('P2', (x) => x.large.p99), ' ms')} at ${fmt(g('P2', (x) => x.large.total))}; large/small ${fmt(g('P2', (x) => x.p99_ratio))}`, target: 'p99 <= 10 ms at 1M; <= 1.2x of 10k' },
  { id: 'P2s', what: 'GET /messages, 2-word search', figure: `p99 ${fmt(g('P2_search_sqlite', (x) => x.p99), ' ms')} at ${fmt(g('P2_search_sqlite', (x) => x.total))}`, target: 'p99 <= 50 ms at 1M' },
  { id: 'P3', what: 'POST /register, 100 users, 50 subs', figure: `p50 ${fmt(g('P3', (x) => x.p50_ms), ' ms')}; ${fmt(g('P3', (x) => x.statements))} statements`, target: 'p50 <= 5 ms; constant' },
  { id: 'P4', what: 'fan-out to long-pollers', figure: Object.keys(all.P4 ?? {}).filter((k) => k.startsWith('clients_')).map((k) => `${k.slice(8)}: ${fmt(g('P4', (x) => x[k].last_answered_ms), ' ms')} (bare node:http ${fmt(g('P4', (x) => x[k].bare_node_http_last_answered_ms), ' ms')}; paired ${fmt(g('P4', (x) => x[k].over_bare_paired), 'x')})`).join('; ') || 'n/a', target: '1k <= 30 ms; 5k <= 150 ms' },
  { id: 'P5', what: 'event deliveries', figure: `${fmt(g('P5', (x) => x.deliveries_per_s))}/s; ${fmt(g('P5', (x) => x.ratio))} of bare`, target: '>= 0.60 of bare node:http' },
  { id: 'P6', what: 'memory per idle client', figure: `${fmt(g('P6', (x) => x.kb_per_idle_client_rss), ' KB')} idle ${g('P6', (x) => x.settle_s) ?? '?'} s (${fmt(g('P6', (x) => x.kb_per_idle_client_rss_1_5s), ' KB')} at 1.5 s)`, target: '<= 12 KB, no forced GC' },
  { id: 'P7', what: 'idle resident memory', figure: `${fmt(g('P7_P10', (x) => x.idle_rss_mb), ' MB')}`, target: '<= 90 MB' },
  { id: 'P8', what: 'sends, 50 subscribers, SQLite', figure: `${fmt(g('P8', (x) => x.max_rps))} msg/s; p99 ${fmt(g('P8', (x) => x.p99), ' ms')} at ${fmt(g('P8', (x) => x.paced_rate))}/s`, target: '>= 1,000/s; p99 <= 50 ms at 600/s' },
  { id: 'P9', what: 'sends, 50 subscribers, PostgreSQL', figure: `${fmt(g('P9', (x) => x.max_rps))} msg/s; p99 ${fmt(g('P9', (x) => x.p99), ' ms')} at ${fmt(g('P9', (x) => x.paced_rate))}/s`, target: '>= 600/s; p99 <= 100 ms at 400/s' },
  { id: 'P10', what: 'cold start to first 200', figure: `server ${fmt(g('P7_P10', (x) => x.cold_start_ms), ' ms')}${g('P7_P10', (x) => x.cold_start_ms_default_env) === undefined ? '' : ` (${fmt(g('P7_P10', (x) => x.cold_start_ms_default_env), ' ms')} without NODE_EXTRA_CA_CERTS; node -e 0 ${fmt(g('P7_P10', (x) => x.node_boot_ms), ' ms')} / ${fmt(g('P7_P10', (x) => x.node_boot_ms_default_env), ' ms')})`}; npm start ${fmt(g('P7_P10', (x) => x.npm_start_ms), ' ms')}; ${fmt(g('P7_P10', (x) => x.restored_queues))} queues restored ${fmt(g('P7_P10', (x) => x.restart_with_queues_ms), ' ms')}`, target: '<= 300 ms; npm start <= 1 s; 10k queues <= 1 s' },
  {
    id: 'P11',
    what: 'Redis: 1 and 2 processes',
    // The ratios are medians of per-round (P4) and per-window (P5) ratios: scale-events.mjs interleaves the configurations.
    figure: `P4 ${fmt(scale(1, false)?.p4?.last_answered_ms, ' ms')} in-process, ${fmt(scale(1)?.p4?.last_answered_ms, ' ms')} / ${fmt(scale(2)?.p4?.last_answered_ms, ' ms')} Redis 1 / 2 procs (paired ${fmt(all.scale?.paired?.p4_redis1_over_inprocess, 'x')}, 2/1 ${fmt(all.scale?.paired?.p4_redis2_over_redis1, 'x')}); P5 ${fmt(scale(1, false)?.p5?.deliveries_per_s)}, ${fmt(scale(1)?.p5?.deliveries_per_s)} / ${fmt(scale(2)?.p5?.deliveries_per_s)}/s (paired ${fmt(all.scale?.paired?.p5_inprocess_over_redis1, 'x')}, 2/1 ${fmt(all.scale?.paired?.p5_redis1_over_redis2, 'x')})`,
    target: '1 proc within 1.25x of in-process; 2 >= 1',
  },
  { id: 'W1', what: 'web app', figure: `${fmt(g('w1-web', (x) => x.first_load_gzip_kb), ' KB')}; shown ${fmt(g('w1-web', (x) => x.feed_ready_median_ms), ' ms')}; p95 ${fmt(g('w1-web', (x) => x.send_to_seen_p95_ms), ' ms')}`, target: '<= 150 KB; <= 1 s; p95 <= 150 ms' },
  { id: 'F1', what: 'files, 1 MB up/down', figure: `${fmt(g('F1', (x) => x.upload_per_s))} up/s, ${fmt(g('F1', (x) => x.download_per_s))} down/s; peak ${fmt(g('F1', (x) => x.peak_rss_mb_1mb_runs), ' MB')}, after 20 MB ${fmt(g('F1', (x) => x.peak_rss_mb_after_20mb), ' MB')}`, target: 'reported; flat memory' },
  { id: 'MD', what: 'Markdown render, per message', figure: `${fmt(g('markdown', (x) => x.us_per_message), ' us')}`, target: '< 1 ms' },
  { id: 'PR', what: 'presence, 1,000 online, p50', figure: `${fmt(g('presence', (x) => x.modern.p50_ms_at_rate), ' ms')}`, target: '<= 2 ms' },
];
console.log(`\nParley benchmarks${QUICK ? ' (QUICK: smoke run, the figures mean nothing)' : ''}, ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${os.loadavg()[0].toFixed(1)}, ${((Date.now() - started) / 60000).toFixed(1)} min`);
table(rows);
if (failed.length) console.log(`\nfailed: ${failed.join(', ')}`);

// The capacity model of docs/scaling.md from this run's per-unit costs (bench/capacity.mjs).
console.log(`\nCapacity model${QUICK ? ' (QUICK: from a smoke run, meaningless)' : ''}, from this run's costs (bench/capacity.mjs; docs/scaling.md, "Capacity model"):\n`);
console.log(formatCapacity(all).join('\n'));

if (!QUICK && !only) {
  const history = path.join(path.dirname(RESULTS), 'history.jsonl');
  fs.appendFileSync(history, JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, results: all }) + '\n');
  spawnSync(process.execPath, [path.join(ROOT, 'bench', 'chart.mjs')], { stdio: 'inherit' });
}
process.exit(failed.length ? 1 : 0);

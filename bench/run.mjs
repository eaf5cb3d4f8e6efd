// npm run bench: runs every benchmark of performance.md (P1..P10, plus Markdown
// and presence) against freshly started servers, each beside its baseline,
// prints one table of figures against targets, writes bench/results/latest.json,
// appends the run to bench/results/history.jsonl and redraws bench/results/chart.svg.
// Loopback only; every script is bounded in time. Set BENCH_RUNS (default 3)
// and BENCH_DURATION (seconds, default 5) to trade precision for time.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, RESULTS, table } from './lib.mjs';

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
  'markdown.mjs',
  'presence.mjs',
];

const started = Date.now();
const failed = [];
for (const s of SCRIPTS) {
  const file = path.join(ROOT, 'bench', s);
  if (!fs.existsSync(file)) {
    failed.push(`${s} (missing)`);
    continue;
  }
  console.log(`\n=== ${s}`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [file], { stdio: 'inherit', env: process.env, timeout: 300_000 });
  console.log(`(${s}: ${((Date.now() - t0) / 1000).toFixed(0)} s${r.status === 0 ? '' : `, exit ${r.status ?? r.signal}`})`);
  if (r.status !== 0) failed.push(s);
}

const all = JSON.parse(fs.readFileSync(RESULTS, 'utf8'));
const g = (k, f) => {
  try {
    return f(all[k]);
  } catch {
    return undefined;
  }
};
const fmt = (v, unit = '') => (v === undefined || v === null ? 'n/a' : `${v}${unit}`);
const rows = [
  { id: 'P1', what: 'GET /users/me vs bare node:http', figure: `${fmt(g('P1', (x) => x.ratio))} ratio; p99 ${fmt(g('P1', (x) => x.p99_ms_at_70pct), ' ms')} at 70%`, target: '>= 0.40; p99 <= 5 ms' },
  { id: 'P2', what: 'GET /messages, 50 newest in a channel', figure: `p99 ${fmt(g('P2', (x) => x.large.p99), ' ms')} at 1M; 1M/10k ${fmt(g('P2', (x) => x.p99_ratio))}`, target: 'p99 <= 25 ms; <= 1.5x' },
  { id: 'P2s', what: 'GET /messages, 2-word search, 1M', figure: `p99 ${fmt(g('P2_search_sqlite', (x) => x.p99), ' ms')}`, target: 'p99 <= 50 ms' },
  { id: 'P3', what: 'POST /register, 100 users, 50 subs', figure: `p50 ${fmt(g('P3', (x) => x.p50_ms), ' ms')}; ${fmt(g('P3', (x) => x.statements))} statements`, target: 'p50 <= 20 ms; constant' },
  { id: 'P4', what: 'fan-out to long-pollers', figure: `1k: ${fmt(g('P4', (x) => x.clients_1000.last_answered_ms), ' ms')}; 5k: ${fmt(g('P4', (x) => x.clients_5000.last_answered_ms), ' ms')}`, target: '<= 50 ms; <= 250 ms' },
  { id: 'P5', what: 'event deliveries', figure: `${fmt(g('P5', (x) => x.deliveries_per_s))}/s`, target: '>= 10,000/s' },
  { id: 'P6', what: 'memory per idle client', figure: `${fmt(g('P6', (x) => x.kb_per_idle_client_rss), ' KB')}`, target: '<= 16 KB' },
  { id: 'P7', what: 'idle resident memory', figure: `${fmt(g('P7_P10', (x) => x.idle_rss_mb), ' MB')}`, target: '<= 120 MB' },
  { id: 'P8', what: 'sends, 50 subscribers, SQLite', figure: `${fmt(g('P8', (x) => x.max_rps))} msg/s; p99 ${fmt(g('P8', (x) => x.p99), ' ms')}`, target: '>= 500/s; p99 <= 50 ms' },
  { id: 'P9', what: 'sends, 50 subscribers, PostgreSQL', figure: `${fmt(g('P9', (x) => x.max_rps))} msg/s; p99 ${fmt(g('P9', (x) => x.p99), ' ms')}`, target: '>= 300/s; p99 <= 100 ms' },
  { id: 'P10', what: 'cold start to first 200', figure: `${fmt(g('P7_P10', (x) => x.cold_start_ms), ' ms')}`, target: '<= 500 ms' },
  { id: 'MD', what: 'Markdown render, per message', figure: `${fmt(g('markdown', (x) => x.us_per_message), ' us')}`, target: '< 1 ms' },
  { id: 'PR', what: 'presence, 1,000 online, p50', figure: `${fmt(g('presence', (x) => x.modern.p50_ms_at_rate), ' ms')}`, target: '<= 2 ms' },
];
console.log(`\nParley benchmarks, ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${((Date.now() - started) / 60000).toFixed(1)} min`);
table(rows);
if (failed.length) console.log(`\nfailed: ${failed.join(', ')}`);

const history = path.join(path.dirname(RESULTS), 'history.jsonl');
fs.appendFileSync(history, JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, results: all }) + '\n');
spawnSync(process.execPath, [path.join(ROOT, 'bench', 'chart.mjs')], { stdio: 'inherit' });
process.exit(failed.length ? 1 : 0);

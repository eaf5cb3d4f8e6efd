// P10: cold start to the first 200 on /server_settings (empty database, fresh data dir),
// and P7: idle resident memory with an empty realm, read from /proc after settling.
import fs from 'node:fs';
import { median, record, startParley, table } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const starts = [];
const rss = [];
for (let i = 0; i < RUNS; i++) {
  const s = await startParley();
  starts.push(s.firstOkMs);
  await new Promise((r) => setTimeout(r, 2000));
  const status = fs.readFileSync(`/proc/${s.child.pid}/status`, 'utf8');
  rss.push(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024);
  await s.stop();
}
const figures = { cold_start_ms: Math.round(median(starts)), idle_rss_mb: +median(rss).toFixed(1) };
table([{ bench: 'P10 cold start', value: `${figures.cold_start_ms} ms`, target: '<= 500 ms' }, { bench: 'P7 idle RSS', value: `${figures.idle_rss_mb} MB`, target: '<= 120 MB' }]);
record('P7_P10', figures);

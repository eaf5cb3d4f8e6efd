// P1: authenticated cheap read (GET /api/v1/users/me with Basic auth) against a
// bare node:http baseline in the same run; then p99 at 70% of the measured rate.
import { load, median, record, startBaseline, startParley, table } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);

const parley = await startParley();
const baseline = await startBaseline();
try {
  const url = `${parley.base}/api/v1/users/me`;
  await load({ url, headers: { authorization: parley.auth }, duration: 2 }); // warm-up
  await load({ url: baseline.url, duration: 2 });
  const p = [];
  const b = [];
  for (let i = 0; i < RUNS; i++) {
    b.push(await load({ url: baseline.url, duration: DURATION }));
    p.push(await load({ url, headers: { authorization: parley.auth }, duration: DURATION }));
  }
  const rps = median(p.map((r) => r.rps));
  const baseRps = median(b.map((r) => r.rps));
  const target = Math.round(rps * 0.7);
  const paced = [];
  for (let i = 0; i < RUNS; i++) {
    paced.push(await load({ url, headers: { authorization: parley.auth }, duration: DURATION, connections: 20, overallRate: target }));
  }
  const p99 = median(paced.map((r) => r.p99));
  const errors = [...p, ...paced].reduce((s, r) => s + r.errors, 0);
  const figures = { parley_rps: Math.round(rps), baseline_rps: Math.round(baseRps), ratio: +(rps / baseRps).toFixed(3), p99_ms_at_70pct: p99, rate_at_70pct: target, errors };
  table([{ bench: 'P1 GET /users/me', ...figures, target: '>= 0.40 ratio, p99 <= 5 ms' }]);
  record('P1', figures);
} finally {
  await baseline.stop();
  await parley.stop();
}

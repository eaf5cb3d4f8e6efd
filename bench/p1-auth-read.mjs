// P1: authenticated cheap read (GET /api/v1/users/me with Basic auth) against a
// bare node:http baseline and a bare Fastify route in the same run, each server
// in its own process (the load generator runs in this one); then p99 at 70% of
// the measured rate. Request logging is on (PARLEY_LOG_LEVEL=info, to
// /dev/null) as in production. Besides requests per second, each server's CPU
// time per answered request (from /proc) is reported: on a shared machine it
// moves far less than req/s does.
import { load, loadWithCpu, median, record, startBaselineProcess, startParley, table, WARM_S } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const LOG_LEVEL = process.env.BENCH_P1_LOG_LEVEL ?? 'info';

const parley = await startParley({ PARLEY_LOG_LEVEL: LOG_LEVEL }, { stdout: 'ignore' });
const http = await startBaselineProcess('http');
const fastify = await startBaselineProcess('fastify');
try {
  const url = `${parley.base}/api/v1/users/me`;
  const headers = { authorization: parley.auth };
  // Warm-up (JIT) of every server.
  await load({ url, headers, duration: WARM_S });
  await load({ url: http.url, duration: WARM_S });
  await load({ url: fastify.url, duration: WARM_S });
  const runs = { http: [], fastify: [], parley: [] };
  for (let i = 0; i < RUNS; i++) {
    runs.http.push(await loadWithCpu(http.pid, { url: http.url, duration: DURATION }));
    runs.fastify.push(await loadWithCpu(fastify.pid, { url: fastify.url, duration: DURATION }));
    runs.parley.push(await loadWithCpu(parley.child.pid, { url, headers, duration: DURATION }));
  }
  const rps = (k) => median(runs[k].map((r) => r.rps));
  const us = (k) => {
    const xs = runs[k].map((r) => r.cpu_us).filter((x) => x !== undefined);
    return xs.length ? +median(xs).toFixed(1) : undefined;
  };
  const target = Math.round(rps('parley') * 0.7);
  const paced = [];
  for (let i = 0; i < RUNS; i++) paced.push(await load({ url, headers, duration: DURATION, connections: 20, overallRate: target }));
  const p99 = median(paced.map((r) => r.p99));
  const errors = [...runs.parley, ...paced].reduce((s, r) => s + r.errors, 0);
  const figures = {
    parley_rps: Math.round(rps('parley')),
    baseline_rps: Math.round(rps('http')),
    fastify_rps: Math.round(rps('fastify')),
    ratio: +(rps('parley') / rps('http')).toFixed(3),
    fastify_ratio: +(rps('fastify') / rps('http')).toFixed(3),
    parley_cpu_us: us('parley'),
    baseline_cpu_us: us('http'),
    fastify_cpu_us: us('fastify'),
    p99_ms_at_70pct: p99,
    rate_at_70pct: target,
    log_level: LOG_LEVEL,
    errors,
  };
  table([
    { server: 'bare node:http', 'req/s': figures.baseline_rps, ratio: 1, 'CPU us/req': figures.baseline_cpu_us ?? 'n/a' },
    { server: 'bare Fastify route', 'req/s': figures.fastify_rps, ratio: figures.fastify_ratio, 'CPU us/req': figures.fastify_cpu_us ?? 'n/a' },
    { server: 'Parley GET /users/me', 'req/s': figures.parley_rps, ratio: figures.ratio, 'CPU us/req': figures.parley_cpu_us ?? 'n/a' },
  ]);
  table([{ bench: 'P1 GET /users/me', ratio: figures.ratio, p99_ms_at_70pct: p99, rate_at_70pct: target, errors, target: '>= 0.70 ratio, p99 <= 5 ms' }]);
  record('P1', figures);
} finally {
  await fastify.stop();
  await http.stop();
  await parley.stop();
}

// Draws bench/results/history.jsonl as an SVG: each figure relative to its
// target (1.0 = exactly on target; above the line is better), one polyline per figure.
import fs from 'node:fs';
import path from 'node:path';
import { RESULTS } from './lib.mjs';

const dir = path.dirname(RESULTS);
const lines = fs.existsSync(path.join(dir, 'history.jsonl')) ? fs.readFileSync(path.join(dir, 'history.jsonl'), 'utf8').trim().split('\n').filter(Boolean) : [];
const runs = lines.map((l) => JSON.parse(l));
// score = target / measured for "lower is better", measured / target for "higher is better".
const series = {
  'P1 ratio': (r) => r.P1?.ratio / 0.4,
  'P2 p99': (r) => 25 / r.P2?.large?.p99,
  'P3 p50': (r) => 20 / r.P3?.p50_ms,
  'P4 1k': (r) => 50 / r.P4?.clients_1000?.last_answered_ms,
  'P5 /s': (r) => r.P5?.deliveries_per_s / 10000,
  'P6 KB': (r) => 16 / r.P6?.kb_per_idle_client_rss,
  'P7 MB': (r) => 120 / r.P7_P10?.idle_rss_mb,
  'P8 /s': (r) => r.P8?.max_rps / 500,
  'P9 /s': (r) => r.P9?.max_rps / 300,
  'P10 ms': (r) => 500 / r.P7_P10?.cold_start_ms,
};
const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const W = 720, H = 320, L = 50, R = 110, T = 20, B = 40;
const maxY = 2;
const x = (i) => L + (runs.length <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (runs.length - 1));
const y = (v) => T + (H - T - B) * (1 - Math.min(v, maxY) / maxY);
let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">\n`;
svg += `<rect width="${W}" height="${H}" fill="white"/>\n<text x="${L}" y="14">Parley benchmarks relative to target (1.0 = on target, higher is better; capped at 2)</text>\n`;
for (const v of [0, 0.5, 1, 1.5, 2]) {
  svg += `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="${v === 1 ? '#000' : '#ddd'}" stroke-dasharray="${v === 1 ? '4 2' : ''}"/><text x="${L - 30}" y="${y(v) + 4}">${v.toFixed(1)}</text>\n`;
}
runs.forEach((r, i) => {
  svg += `<text x="${x(i) - 25}" y="${H - 20}">${r.date.slice(5, 16).replace('T', ' ')}</text>\n`;
});
Object.entries(series).forEach(([name, f], k) => {
  const pts = runs.map((r, i) => [i, f(r.results)]).filter(([, v]) => Number.isFinite(v));
  if (!pts.length) return;
  const c = colors[k % colors.length];
  svg += `<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.map(([i, v]) => `${x(i)},${y(v)}`).join(' ')}"/>\n`;
  for (const [i, v] of pts) svg += `<circle cx="${x(i)}" cy="${y(v)}" r="3" fill="${c}"/>\n`;
  svg += `<text x="${W - R + 8}" y="${T + 14 * k + 10}" fill="${c}">${name}</text>\n`;
});
svg += '</svg>\n';
fs.writeFileSync(path.join(dir, 'chart.svg'), svg);
console.log(`chart: ${path.join(dir, 'chart.svg')} (${runs.length} runs)`);

// A load generator in a process of its own: `node bench/support/load-process.mjs '<json>'` prints
// one JSON line with the figures. The JSON is { kind: 'autocannon' | 'even', url, headers,
// duration, connections, rate?, warm? }: 'autocannon' is lib.mjs's load() (rate: autocannon's
// overallRate), 'even' is evenlyPaced() below; `warm` seconds of the same load run first, not
// recorded (the generator's own code is compiled by then). lib.mjs's loadApart() runs it.
//
// Why a process of its own: a benchmark that fills a database first (P2 writes 1M messages
// through the store) leaves its own process with a heap that a load generator then shares. In
// that process the generator paused for the collector (mark-compacts of 4-13 ms, measured
// 2026-11-29), sent the requests due meanwhile in one burst, and the burst's last answers counted
// the pause as the server's latency: autocannon's p99 at 1M messages, paced at 1,500/s, was
// 13 / 13 / 13 / 13 / 14 / 14 / 15 ms from the bench's process against 9 / 9 / 11 / 9 / 13 / 12 / 11 ms
// from a fresh one, alternated against the same server, while the server's own time per request
// (its 'request' event to 'finish') had a p99 of 0.69-1.12 ms (docs/performance.md, P2).
import net from 'node:net';
import { load } from '../lib.mjs';

/**
 * Requests at evenly spaced times (an open loop: request i is due at start + i/rate,
 * whatever happened to the others), over up to `connections` keep-alive sockets: a
 * due request goes out on an idle socket, or waits for the first one free. Latency
 * is from the due time to the end of the answer, so a late answer also delays the
 * requests queued behind it (no coordinated omission). autocannon's `overallRate`
 * is not this: each connection sends back to back until it has made its share of
 * the second's requests, then waits for the next second, so at "70%" the server
 * is saturated with every connection in flight for 0.7 s of each second; and it
 * corrects for coordinated omission with an expected interval of ceil(1/rate) =
 * 1 ms where it means 1000/rate ms, recording a v ms answer as v, v-1, ..., 1 ms.
 * Exact percentiles (every latency kept). An answer's bytes are counted, not kept:
 * copying each 20 KB answer into a new Buffer made the generator itself collect.
 */
export async function evenlyPaced({ url, headers, rate, duration, connections }) {
  const u = new URL(url);
  const request = Buffer.from(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
  const total = Math.max(1, Math.round(rate * duration));
  const interval = 1000 / rate;
  const latencies = new Float64Array(total);
  let answered = 0;
  let errors = 0;
  const waiting = [];
  const idle = [];
  let finish;
  const done = new Promise((r) => (finish = r));
  const send = (c, due) => {
    c.due = due;
    c.socket.write(request);
  };
  const open = () =>
    new Promise((resolve, reject) => {
      const socket = net.connect(Number(u.port), u.hostname, () => resolve(c));
      socket.setNoDelay(true);
      socket.once('error', reject);
      // head: the answer's head read so far (latin1, small); left: body bytes still to come (-1: in the head).
      const c = { socket, due: 0, head: '', left: -1 };
      socket.on('data', (chunk) => {
        let at = 0;
        while (at < chunk.length) {
          if (c.left < 0) {
            const end = chunk.indexOf('\r\n\r\n', at);
            if (end < 0) {
              c.head += chunk.toString('latin1', at);
              return;
            }
            c.head += chunk.toString('latin1', at, end);
            c.left = Number(/content-length: *(\d+)/i.exec(c.head)?.[1] ?? 0);
            if (!c.head.startsWith('HTTP/1.1 200')) errors++;
            at = end + 4;
          }
          const take = Math.min(c.left, chunk.length - at);
          c.left -= take;
          at += take;
          if (c.left > 0) return;
          c.head = '';
          c.left = -1;
          latencies[answered++] = performance.now() - c.due;
          if (answered >= total) return finish();
          const next = waiting.shift();
          if (next !== undefined) send(c, next);
          else idle.push(c);
        }
      });
    });
  const conns = await Promise.all(Array.from({ length: connections }, open));
  idle.push(...conns);
  const start = performance.now() + 5;
  let i = 0;
  const tick = () => {
    const now = performance.now();
    for (; i < total && start + i * interval <= now; i++) {
      const c = idle.shift();
      if (c) send(c, start + i * interval);
      else waiting.push(start + i * interval);
    }
    if (i < total) setTimeout(tick, Math.max(0, start + i * interval - now));
  };
  setTimeout(tick, 5);
  await done;
  for (const c of conns) c.socket.destroy();
  latencies.sort();
  const at = (q) => +latencies[Math.min(total - 1, Math.floor(q * total))].toFixed(2);
  return { p50: at(0.5), p99: at(0.99), errors };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const o = JSON.parse(process.argv[2]);
  const run = (duration) =>
    o.kind === 'even'
      ? evenlyPaced({ ...o, duration })
      : load({ url: o.url, headers: o.headers, duration, connections: o.connections, ...(o.rate ? { overallRate: o.rate } : {}) });
  if (o.warm) await run(o.warm);
  const out = await run(o.duration);
  process.stdout.write(JSON.stringify(out) + '\n');
}

// P2: GET /messages, the 50 newest messages of a channel narrow, at 10k and at
// 1M stored messages (the reader received every one of them, so the user's
// own rows grow too). Keyset pagination on (recipient_id, id): the latency
// must not grow with the table (target: 1M within 1.2x of 10k, p99 <= 10 ms).
// Messages are generated in bulk through the store; the server is the built one.
// Latency at the paced rate is measured twice: with autocannon's overallRate (bursts,
// as P1 does) and evenly spaced (pacedLoad below: p50_even/p99_even).
//   node bench/p2-get-messages.mjs          (BENCH_SMALL=10000 BENCH_LARGE=1000000 BENCH_RUNS=3 BENCH_DURATION=5)
import net from 'node:net';
import { load, median, record, startParley, table, WARM_S } from './lib.mjs';
import { bulkInsertChannelMessages, createChannel, ownerId } from './messages-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const SIZES = [Number(process.env.BENCH_SMALL ?? 10_000), Number(process.env.BENCH_LARGE ?? 1_000_000)];

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
 * Exact percentiles (every latency kept).
 */
async function pacedLoad({ url, headers, rate, duration, connections }) {
  const u = new URL(url);
  const request = Buffer.from(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
  const total = Math.max(1, Math.round(rate * duration));
  const interval = 1000 / rate;
  const latencies = [];
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
      const c = { socket, due: 0, buf: Buffer.alloc(0) };
      socket.on('data', (chunk) => {
        c.buf = c.buf.length ? Buffer.concat([c.buf, chunk]) : chunk;
        const end = c.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = c.buf.subarray(0, end).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (c.buf.length < end + 4 + length) return;
        c.buf = c.buf.subarray(end + 4 + length);
        if (!head.startsWith('HTTP/1.1 200')) errors++;
        latencies.push(performance.now() - c.due);
        if (latencies.length >= total) return finish();
        const next = waiting.shift();
        if (next !== undefined) send(c, next);
        else idle.push(c);
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
  latencies.sort((a, b) => a - b);
  const at = (q) => +latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2);
  return { p50: at(0.5), p99: at(0.99), errors };
}

async function measure(total, pacedRate) {
  const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast', PARLEY_RATE_LIMIT_PER_USER: '0', PARLEY_RATE_LIMIT_PER_IP: '0' });
  try {
    const me = await ownerId(server);
    const channelId = await createChannel(server, 'bench', [me]);
    // Another channel holds most of the rows, so the narrow is a seek into a big table.
    const other = await createChannel(server, 'elsewhere', [me]);
    const inBench = Math.min(total, 50_000);
    const seconds =
      (await bulkInsertChannelMessages(server, { channelId: other, senderId: me, readerIds: [me], count: total - inBench })) +
      (await bulkInsertChannelMessages(server, { channelId, senderId: me, readerIds: [me], count: inBench }));
    const narrow = encodeURIComponent(JSON.stringify([{ operator: 'channel', operand: 'bench' }]));
    const url = `${server.base}/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${narrow}`;
    const headers = { authorization: server.auth };
    const first = await (await fetch(url, { headers })).json();
    if (first.result !== 'success' || first.messages.length !== 50) throw new Error(`unexpected answer: ${JSON.stringify(first).slice(0, 200)}`);
    await load({ url, headers, duration: WARM_S, connections: 10 });
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await load({ url, headers, duration: DURATION, connections: 10 }));
    const rps = Math.round(median(runs.map((r) => r.rps)));
    // Latency is read at a fixed request rate (70% of the 10k maximum, as P1 does), the same for both sizes.
    const rate = pacedRate ?? Math.round(rps * 0.7);
    const paced = [];
    for (let i = 0; i < RUNS; i++) paced.push(await load({ url, headers, duration: DURATION, connections: 10, overallRate: rate }));
    // The same rate, evenly spaced (pacedLoad): the latency of a server that is 70% busy.
    const even = [];
    for (let i = 0; i < RUNS; i++) even.push(await pacedLoad({ url, headers, rate, duration: DURATION, connections: 10 }));
    return {
      total,
      generate_s: +seconds.toFixed(1),
      rps,
      rate,
      p50: median(paced.map((r) => r.p50)),
      p99: median(paced.map((r) => r.p99)),
      p50_even: median(even.map((r) => r.p50)),
      p99_even: median(even.map((r) => r.p99)),
      errors: [...runs, ...paced, ...even].reduce((s, r) => s + r.errors, 0),
    };
  } finally {
    await server.stop();
  }
}

const results = [await measure(SIZES[0])];
results.push(await measure(SIZES[1], results[0].rate));
const [small, large] = results;
const ratio = +(large.p99 / Math.max(small.p99, 1)).toFixed(2);
const ratioEven = +(large.p99_even / Math.max(small.p99_even, 0.1)).toFixed(2);
table(
  results.map((r) => ({
    bench: `P2 GET /messages (50, channel) @ ${r.total}`,
    max_rps: r.rps,
    paced_rps: r.rate,
    p50_ms: r.p50,
    p99_ms: r.p99,
    p50_even_ms: r.p50_even,
    p99_even_ms: r.p99_even,
    errors: r.errors,
    generate_s: r.generate_s,
  })),
);
console.log(`p99 ratio ${large.total}/${small.total}: ${ratio} (target <= 1.2, p99 <= 10 ms at 1M)`);
console.log(`evenly paced (pacedLoad, same rate): p99 ratio ${ratioEven}, p99 ${large.p99_even} ms at ${large.total}`);
record('P2', { small, large, p99_ratio: ratio, p99_ratio_even: ratioEven });

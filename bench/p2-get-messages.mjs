// P2: GET /messages, the 50 newest messages of a channel narrow, at 10k and at
// 1M stored messages (the reader received every one of them, so the user's
// own rows grow too). Keyset pagination on (recipient_id, id): the latency
// must not grow with the table (target: 1M within 1.2x of 10k, p99 <= 10 ms).
// Messages are generated in bulk through the store; the server is the built one.
// Latency at the paced rate is measured twice: with autocannon's overallRate (bursts,
// as P1 does) and evenly spaced (evenlyPaced in support/load-process.mjs: p50_even/p99_even).
// The measured runs' generators run in a process of their own (loadApart): this one has
// written up to 1M messages and would pause its generator for its own collections.
//   node bench/p2-get-messages.mjs          (BENCH_SMALL=10000 BENCH_LARGE=1000000 BENCH_RUNS=3 BENCH_DURATION=5)
import { load, loadApart, median, QUICK, record, startParley, table, WARM_S } from './lib.mjs';
import { bulkInsertChannelMessages, createChannel, ownerId } from './messages-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const SIZES = [Number(process.env.BENCH_SMALL ?? 10_000), Number(process.env.BENCH_LARGE ?? 1_000_000)];
// Each generator process warms up on the same load first (its own code compiled), not recorded.
const GEN_WARM_S = QUICK ? 0 : 1;

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
    for (let i = 0; i < RUNS; i++) runs.push(await loadApart({ kind: 'autocannon', url, headers, duration: DURATION, connections: 10, warm: GEN_WARM_S }));
    const rps = Math.round(median(runs.map((r) => r.rps)));
    // Latency is read at a fixed request rate (70% of the 10k maximum, as P1 does), the same for both sizes.
    const rate = pacedRate ?? Math.round(rps * 0.7);
    const paced = [];
    for (let i = 0; i < RUNS; i++) paced.push(await loadApart({ kind: 'autocannon', url, headers, duration: DURATION, connections: 10, rate, warm: GEN_WARM_S }));
    // The same rate, evenly spaced (evenlyPaced): the latency of a server that is 70% busy.
    const even = [];
    for (let i = 0; i < RUNS; i++) even.push(await loadApart({ kind: 'even', url, headers, duration: DURATION, connections: 10, rate, warm: GEN_WARM_S }));
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
console.log(`evenly paced (evenlyPaced, same rate): p99 ratio ${ratioEven}, p99 ${large.p99_even} ms at ${large.total}`);
record('P2', { small, large, p99_ratio: ratio, p99_ratio_even: ratioEven });

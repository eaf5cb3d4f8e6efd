// P2 (search row): GET /messages with a two-word `search` narrow, the 50 newest
// matches, over BENCH_SEARCH_SIZE (default 1M) stored messages that the reader
// received. The text is drawn from a 2,000-word vocabulary with Zipf-like
// frequencies (8 words a message), so the searched words are neither rare nor
// everywhere: each is in a few percent of messages, both together in ~0.1%.
// Target (performance.md): p99 <= 50 ms at 1M. Latency is read at a fixed rate.
//   node bench/p2-search.mjs     (BENCH_SEARCH_SIZE=1000000 BENCH_STORE=sqlite|postgres BENCH_RUNS=3 BENCH_DURATION=5 BENCH_RATE=20)
import fs from 'node:fs';
import { load, median, record, startParley, table } from './lib.mjs';
import { bulkInsertChannelMessages, createChannel, freshPgDatabase, ownerId } from './messages-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const SIZE = Number(process.env.BENCH_SEARCH_SIZE ?? 1_000_000);
const STORE = process.env.BENCH_STORE ?? 'sqlite';
const RATE = Number(process.env.BENCH_RATE ?? 20);

// Pronounceable made-up words, so that no stemmer merges two of them.
const SYL = ['ka', 'lo', 'mi', 'ten', 'dar', 'vu', 'sel', 'pon', 'ri', 'bax', 'tu', 'nem', 'for', 'gil', 'zo', 'quen'];
const VOCAB = Array.from({ length: 2000 }, (_, i) => SYL[i % 16] + SYL[(i >> 4) % 16] + SYL[(i >> 8) % 16] + 'x');
// Zipf weights 1/(rank+10): cumulative table for sampling.
const CUM = [];
let acc = 0;
for (let i = 0; i < VOCAB.length; i++) CUM.push((acc += 1 / (i + 10)));
let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const word = () => {
  const x = rand() * acc;
  let lo = 0;
  let hi = CUM.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUM[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
};
const text = () => Array.from({ length: 8 }, word).join(' ');
const QUERY = `${VOCAB[5]} ${VOCAB[12]}`;

const pg = STORE === 'postgres' ? await freshPgDatabase() : undefined;
const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast', ...(pg ? { PARLEY_DATABASE_URL: pg.url } : {}) });
// If the server dies (it did once at 1M), say how: exit code or signal, and its last resident size.
let lastRss = 0;
const rssTimer = setInterval(() => {
  try {
    lastRss = Number(fs.readFileSync(`/proc/${server.child.pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  } catch {
    /* gone, or not Linux */
  }
}, 500);
server.child.on('exit', (code, signal) => {
  if (!stopping) console.error(`server exited unexpectedly: code ${code}, signal ${signal}, last RSS ${Math.round(lastRss / 2 ** 20)} MB`);
});
let stopping = false;
try {
  const me = await ownerId(server);
  const channelId = await createChannel(server, 'bench', [me]);
  const seconds = await bulkInsertChannelMessages({ ...server, databaseUrl: pg?.url }, { channelId, senderId: me, readerIds: [me], count: SIZE, text });
  const narrow = encodeURIComponent(JSON.stringify([{ operator: 'search', operand: QUERY }]));
  const url = `${server.base}/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${narrow}`;
  const headers = { authorization: server.auth };
  const first = await (await fetch(url, { headers })).json();
  if (first.result !== 'success' || first.messages.length !== 50) throw new Error(`unexpected answer: ${JSON.stringify(first).slice(0, 300)}`);
  await load({ url, headers, duration: 2, connections: 4 });
  const max = [];
  for (let i = 0; i < RUNS; i++) max.push(await load({ url, headers, duration: DURATION, connections: 4 }));
  const paced = [];
  for (let i = 0; i < RUNS; i++) paced.push(await load({ url, headers, duration: DURATION, connections: 4, overallRate: RATE }));
  const r = {
    store: STORE,
    total: SIZE,
    query: QUERY,
    generate_s: +seconds.toFixed(1),
    rps: Math.round(median(max.map((x) => x.rps))),
    rate: RATE,
    p50: median(paced.map((x) => x.p50)),
    p99: median(paced.map((x) => x.p99)),
    errors: [...max, ...paced].reduce((s, x) => s + x.errors, 0),
  };
  table([{ bench: `P2 search (2 words, 50 newest) @ ${SIZE} ${STORE}`, max_rps: r.rps, paced_rps: r.rate, p50_ms: r.p50, p99_ms: r.p99, errors: r.errors, generate_s: r.generate_s }]);
  console.log('target: p99 <= 50 ms at 1M');
  record(`P2_search_${STORE}`, r);
} finally {
  stopping = true;
  clearInterval(rssTimer);
  await server.stop();
  await pg?.drop();
}

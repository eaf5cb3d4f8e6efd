// P6: memory per idle client: a registered queue with a parked long poll and
// its open keep-alive socket. Resident memory of the server is taken with LOW
// and HIGH idle clients and the figure is the slope (HIGH-LOW)/(HIGH-LOW
// clients), which leaves out the process's fixed cost. Two measurements:
//  - rss: `node dist/src/main.js` as deployed, RSS from /proc once the server has been
//    idle SETTLE_S seconds (its own idle collector has run; nothing forced), and 1.5 s
//    after the burst (still holding the burst's young generation and garbage);
//  - retained: the same server code in bench/support/gc-server.mjs, RSS and JS
//    heap after two forced full GCs.
// Median of RUNS servers each.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { freePort, median, record, ROOT, serverNodeArgs, startParley, table } from './lib.mjs';
import { makeUsers, poll, register, rssMb, sleep } from './events-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LOW = Number(process.env.BENCH_P6_LOW ?? 500);
const HIGH = Number(process.env.BENCH_P6_HIGH ?? 3000);
const USERS = 50;
const ENV = {
  PARLEY_PASSWORD_HASH_COST: 'fast',
  PARLEY_HEARTBEAT_MS: '300000',
  PARLEY_HEARTBEAT_JITTER_MS: '0',
  PARLEY_RATE_LIMIT_PER_USER: '0',
  PARLEY_RATE_LIMIT_PER_IP: '0',
};

async function park(server, users, from, to) {
  for (let i = from; i < to; i += 250) {
    const batch = [];
    for (let j = i; j < Math.min(to, i + 250); j++) batch.push(register(server.base, users[j % USERS].auth, { event_types: ['alert_words'] }));
    for (const q of await Promise.all(batch)) poll(server.base, q).catch(() => undefined);
  }
  await sleep(1500);
}

/** gc-server.mjs on a fresh data dir, with a function that collects garbage and returns memoryUsage(). */
async function startGcServer() {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-gc-'));
  const child = spawn(process.execPath, [...serverNodeArgs(['--expose-gc']), path.join(ROOT, 'bench/support/gc-server.mjs')], {
    env: { ...process.env, ...ENV, PARLEY_PORT: String(port), PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'warn', PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (l) => {
    if (l.startsWith('{')) waiting.shift()?.(JSON.parse(l));
  });
  const base = `http://127.0.0.1:${port}`;
  for (const end = Date.now() + 20_000; ; ) {
    if (Date.now() > end) throw new Error('gc-server did not start');
    try {
      if ((await fetch(`${base}/api/v1/server_settings`)).ok) break;
    } catch {
      /* not yet */
    }
    await sleep(20);
  }
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  const auth = 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)[1].trim()}:${/key=(.*)/.exec(rc)[1].trim()}`).toString('base64');
  return {
    base,
    auth,
    child,
    memory: () => new Promise((resolve) => {
      waiting.push(resolve);
      child.stdin.write('gc\n');
    }),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// The server's idle collector (src/idle-gc.ts) collects after 2 s of quiet following a burst and
// once more after 6 s of quiet, when V8 gives back the young generation the burst grew (2 x 16 MB):
// RSS is read 1.5 s after the clients parked (as before 2026-11-27) and once settled, SETTLE_S later.
const SETTLE_S = Number(process.env.BENCH_P6_SETTLE_S ?? 7);
const rssSlope = [];
const rssSlopeEarly = [];
const retainedRss = [];
const retainedHeap = [];
for (let run = 0; run < RUNS; run++) {
  const server = await startParley(ENV);
  try {
    const users = await makeUsers(server, USERS, `p6r${run}`);
    await park(server, users, 0, LOW);
    const lowEarly = rssMb(server.child.pid);
    await sleep(SETTLE_S * 1000);
    const low = rssMb(server.child.pid);
    await park(server, users, LOW, HIGH);
    rssSlopeEarly.push(((rssMb(server.child.pid) - lowEarly) * 1024) / (HIGH - LOW));
    await sleep(SETTLE_S * 1000);
    rssSlope.push(((rssMb(server.child.pid) - low) * 1024) / (HIGH - LOW));
  } finally {
    await server.stop();
  }
  const gcServer = await startGcServer();
  try {
    const users = await makeUsers(gcServer, USERS, `p6g${run}`);
    await park(gcServer, users, 0, LOW);
    const low = await gcServer.memory();
    await park(gcServer, users, LOW, HIGH);
    const high = await gcServer.memory();
    if (high.parked !== HIGH) throw new Error(`expected ${HIGH} parked polls, got ${high.parked}`);
    retainedRss.push((high.rss - low.rss) / 1024 / (HIGH - LOW));
    retainedHeap.push((high.heapUsed - low.heapUsed) / 1024 / (HIGH - LOW));
  } finally {
    await gcServer.stop();
  }
}
const figures = {
  kb_per_idle_client_rss: +median(rssSlope).toFixed(2),
  kb_per_idle_client_rss_1_5s: +median(rssSlopeEarly).toFixed(2),
  settle_s: SETTLE_S,
  kb_per_idle_client_retained_rss: +median(retainedRss).toFixed(2),
  kb_per_idle_client_retained_heap: +median(retainedHeap).toFixed(2),
  low_clients: LOW,
  high_clients: HIGH,
  runs: RUNS,
};
table([
  { bench: `P6 memory per idle client, RSS (no forced GC), idle ${SETTLE_S} s`, 'KB/client': figures.kb_per_idle_client_rss, target: '<= 12 KB' },
  { bench: 'P6 memory per idle client, RSS 1.5 s after the burst', 'KB/client': figures.kb_per_idle_client_rss_1_5s, target: '(the burst\'s young generation still held)' },
  { bench: 'P6 memory per idle client, retained RSS after GC', 'KB/client': figures.kb_per_idle_client_retained_rss, target: '(reference: what stays after GC)' },
  { bench: 'P6 memory per idle client, retained JS heap', 'KB/client': figures.kb_per_idle_client_retained_heap, target: '' },
]);
record('P6', figures);
process.exit(0);

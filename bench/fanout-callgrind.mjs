// P4/P5 in instructions: the user-space instructions one event delivery costs
// the server (the long poll's answer, and its re-poll that parks), with the
// server run under `valgrind --tool=callgrind`. Instruction counts do not
// depend on the machine's load, so this is the before/after figure on a shared
// machine. N long-polling clients (CG_USERS users, default 20) on a channel; each round parks
// every poll, then one typing notification to the channel answers them all.
// Per round: instructions from the first poll sent until all are parked
// (`park`), and from the typing request until the last answer arrived
// (`answer`, which includes the one typing request, /N). Kernel time is not
// counted. Slow (valgrind runs code ~50x slower): a few minutes.
// Not part of `npm run bench`; needs valgrind and callgrind_control.
//   node bench/fanout-callgrind.mjs   (CG_CLIENTS=300, CG_WARM=2 warm-up rounds, CG_ROUNDS=3 counted)
//   BENCH_PARLEY_MAIN=/other/dist/src/main.js node bench/fanout-callgrind.mjs   (another build)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PARLEY_MAIN, freePort, median } from './lib.mjs';
import { call, channelWith, makeUsers, poll, register, sleep } from './events-lib.mjs';

const N = Number(process.env.CG_CLIENTS ?? 300);
const WARM = Number(process.env.CG_WARM ?? 2);
const ROUNDS = Number(process.env.CG_ROUNDS ?? 3);
const USERS = Number(process.env.CG_USERS ?? 20);
const CAPS = { notification_settings_null: true, stream_typing_notifications: true };
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cg-'));

/** Instructions executed so far by a process under callgrind, all its threads together. */
function instructions(pid) {
  const text = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const threads = [...text.matchAll(/^\s*Th\s*\d+\s+([\d,]+)\s*$/gm)].map((m) => Number(m[1].replaceAll(',', '')));
  if (!threads.length) throw new Error(`callgrind_control said: ${text}`);
  return threads.reduce((a, b) => a + b, 0);
}

/** Waits until the server stops executing (its count moves by less than 1M instructions in 300 ms). */
async function settled(pid) {
  let last = instructions(pid);
  for (;;) {
    await sleep(300);
    const now = instructions(pid);
    if (now - last < 1e6) return now;
    last = now;
  }
}

const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cg-data-'));
const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${outDir}/cg.%p.out`, process.execPath, PARLEY_MAIN], {
  env: {
    ...process.env,
    PARLEY_PORT: String(port),
    PARLEY_DATA_DIR: dataDir,
    PARLEY_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1',
    PARLEY_RATE_LIMIT_PER_USER: '0',
    PARLEY_RATE_LIMIT_PER_IP: '0',
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_HEARTBEAT_MS: '600000',
    PARLEY_HEARTBEAT_JITTER_MS: '0',
  },
  stdio: ['ignore', 'ignore', 'ignore'],
});
// Killed (e.g. by timeout): take the server under valgrind along.
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => {
  child.kill('SIGKILL');
  process.exit(1);
});
try {
  const base = `http://127.0.0.1:${port}`;
  for (const end = Date.now() + 600_000; ; ) {
    if (Date.now() > end) throw new Error('Parley did not start under callgrind');
    try {
      if ((await fetch(`${base}/api/v1/server_settings`)).ok) break;
    } catch {
      /* not yet */
    }
    await sleep(500);
  }
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  const server = { base, auth: 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)[1].trim()}:${/key=(.*)/.exec(rc)[1].trim()}`).toString('base64') };
  const users = await makeUsers(server, USERS, 'cg');
  const channelId = await channelWith(server, 'cg fan-out', users);
  const queues = [];
  for (let i = 0; i < N; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(N, i + 100); j++) batch.push(register(base, users[j % USERS].auth, { event_types: ['typing'], client_capabilities: CAPS }));
    queues.push(...(await Promise.all(batch)));
  }
  const park = [];
  const answer = [];
  for (let round = -WARM; round < ROUNDS; round++) {
    const i0 = await settled(child.pid);
    const polls = queues.map((q) => poll(base, q));
    const i1 = await settled(child.pid);
    const r = await call(base, server.auth, 'POST', '/typing', { type: 'channel', op: round % 2 ? 'start' : 'stop', stream_id: channelId, topic: 'bench' });
    if (r.result !== 'success') throw new Error(`typing: ${JSON.stringify(r)}`);
    const got = await Promise.all(polls);
    if (got.some((events) => events.length !== 1)) throw new Error('a poll did not get exactly one event');
    const i2 = await settled(child.pid);
    if (round < 0) continue;
    park.push((i1 - i0) / N);
    answer.push((i2 - i1) / N);
  }
  const out = { build: PARLEY_MAIN, clients: N, rounds: ROUNDS, park_instructions: Math.round(median(park)), answer_instructions: Math.round(median(answer)) };
  out.delivery_instructions = out.park_instructions + out.answer_instructions;
  console.log(JSON.stringify(out));
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(outDir, { recursive: true, force: true });
}
process.exit(0);

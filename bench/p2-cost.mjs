// P2 in server cost rather than latency: the CPU time (from /proc) and, with
// P2_CALLGRIND=1, the instructions (valgrind --tool=callgrind, all threads) one
// GET /messages page costs, for one or two builds on copies of the same
// database, alternated in one run. Both are far steadier than req/s or p99 on a
// shared machine. The database (the P2 layout: a 50k-message channel "bench"
// among P2_SIZE messages, all received by the reader) is seeded once into
// P2_TEMPLATE and reused by later runs.
//   node bench/p2-cost.mjs
//   P2_BUILDS=/work/base/dist/src/main.js,dist/src/main.js P2_SIZE=1000000 P2_ROUNDS=4 P2_REQUESTS=3000 node bench/p2-cost.mjs
//   P2_CALLGRIND=1 P2_WARM=400 P2_REQUESTS=300 node bench/p2-cost.mjs
//   P2_NARROW='[{"operator":"search","operand":"..."}]' P2_QUERY='&apply_markdown=false'  (another page)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { PARLEY_MAIN, ROOT, waitFor, cpuMicros, freePort, median, table } from './lib.mjs';
import { bulkInsertChannelMessages, createChannel, ownerId } from './messages-lib.mjs';

const SIZE = Number(process.env.P2_SIZE ?? 1_000_000);
const TEMPLATE = process.env.P2_TEMPLATE ?? path.join(os.tmpdir(), `parley-p2-template-${SIZE}`);
const BUILDS = (process.env.P2_BUILDS ?? PARLEY_MAIN).split(',').map((b) => path.resolve(ROOT, b));
const ROUNDS = Number(process.env.P2_ROUNDS ?? 4);
const REQUESTS = Number(process.env.P2_REQUESTS ?? 3000);
const WARM = Number(process.env.P2_WARM ?? 1000);
const CALLGRIND = process.env.P2_CALLGRIND === '1';
const NARROW = process.env.P2_NARROW ?? JSON.stringify([{ operator: 'channel', operand: 'bench' }]);
const QUERY = process.env.P2_QUERY ?? '';
const cgDir = CALLGRIND ? fs.mkdtempSync(path.join(os.tmpdir(), 'parley-p2-cg-')) : undefined;

// P2_NODE_ARGS: node flags for the servers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
const NODE_ARGS = (process.env.P2_NODE_ARGS ?? '').split(' ').filter(Boolean);

function start(main, dataDir, port) {
  const args = [...NODE_ARGS, main];
  const env = {
    ...process.env,
    PARLEY_PORT: String(port),
    PARLEY_DATA_DIR: dataDir,
    PARLEY_LOG_LEVEL: 'warn',
    PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1',
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_RATE_LIMIT_PER_USER: '0',
    PARLEY_RATE_LIMIT_PER_IP: '0',
  };
  const child = CALLGRIND
    ? spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${cgDir}/cg.%p.out`, process.execPath, ...args], { env, stdio: ['ignore', 'ignore', 'ignore'] })
    : spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  return child;
}


function authOf(dataDir) {
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  return 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)[1].trim()}:${/key=(.*)/.exec(rc)[1].trim()}`).toString('base64');
}

async function seed() {
  if (fs.existsSync(path.join(TEMPLATE, 'done'))) return;
  fs.rmSync(TEMPLATE, { recursive: true, force: true });
  fs.mkdirSync(TEMPLATE, { recursive: true });
  const port = await freePort();
  const child = spawn(process.execPath, [BUILDS.at(-1)], {
    env: { ...process.env, PARLEY_PORT: String(port), PARLEY_DATA_DIR: TEMPLATE, PARLEY_LOG_LEVEL: 'warn', PARLEY_OWNER_PASSWORD: 'bench-Owner-pass-1', PARLEY_PASSWORD_HASH_COST: 'fast' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/api/v1/server_settings`);
    const server = { base, dataDir: TEMPLATE, auth: authOf(TEMPLATE) };
    const me = await ownerId(server);
    const channelId = await createChannel(server, 'bench', [me]);
    const other = await createChannel(server, 'elsewhere', [me]);
    const inBench = Math.min(SIZE, 50_000);
    const s =
      (await bulkInsertChannelMessages(server, { channelId: other, senderId: me, readerIds: [me], count: SIZE - inBench })) +
      (await bulkInsertChannelMessages(server, { channelId, senderId: me, readerIds: [me], count: inBench }));
    console.log(`seeded ${SIZE} messages in ${s.toFixed(1)} s into ${TEMPLATE}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  fs.writeFileSync(path.join(TEMPLATE, 'done'), '');
}

const send = (url, headers, amount) =>
  new Promise((resolve, reject) => autocannon({ url, headers, connections: 4, amount, timeout: 120 }, (err, r) => (err ? reject(err) : resolve(r))));

function instructions(pid) {
  const text = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const threads = [...text.matchAll(/^\s*Th\s*\d+\s+([\d,]+)\s*$/gm)].map((m) => Number(m[1].replaceAll(',', '')));
  if (!threads.length) throw new Error(`callgrind_control said: ${text}`);
  return threads.reduce((a, b) => a + b, 0);
}

await seed();
const servers = [];
try {
  for (const main of BUILDS) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-p2-copy-'));
    fs.cpSync(TEMPLATE, dataDir, { recursive: true });
    const port = await freePort();
    const child = start(main, dataDir, port);
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: authOf(dataDir) };
    const url = `${base}/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${encodeURIComponent(NARROW)}${QUERY}`;
    servers.push({ main, dataDir, child, url, headers, cpu: [], ir: [], bodies: new Set() });
    await waitFor(url, headers);
  }
  for (const s of servers) {
    const r = await send(s.url, s.headers, WARM);
    if (r.non2xx || r.errors) throw new Error(`${s.main}: ${r.non2xx} non-2xx, ${r.errors} errors in warm-up`);
    s.bodies.add(await (await fetch(s.url, { headers: s.headers })).text());
  }
  const bodies = new Set(servers.flatMap((s) => [...s.bodies]));
  console.log(`answers: ${bodies.size === 1 ? 'identical' : 'DIFFER'} (${[...bodies].map((b) => b.length).join(', ')} bytes)`);
  for (let round = 0; round < (CALLGRIND ? 1 : ROUNDS); round++) {
    for (const s of servers) {
      const before = CALLGRIND ? instructions(s.child.pid) : cpuMicros(s.child.pid);
      const r = await send(s.url, s.headers, REQUESTS);
      const after = CALLGRIND ? instructions(s.child.pid) : cpuMicros(s.child.pid);
      if (r.non2xx || r.errors) throw new Error(`${s.main}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      (CALLGRIND ? s.ir : s.cpu).push(Math.round((after - before) / r.requests.total));
    }
  }
  table(
    servers.map((s) =>
      CALLGRIND
        ? { build: s.main, instructions_per_request: s.ir[0] }
        : { build: s.main, cpu_us_per_request: s.cpu.join(' '), median: median(s.cpu) },
    ),
  );
} finally {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
    fs.rmSync(s.dataDir, { recursive: true, force: true });
  }
  if (cgDir) fs.rmSync(cgDir, { recursive: true, force: true });
}

// P3 in instructions: the user-space instructions one POST /register costs
// (the P3 realm: 100 users, 50 channels, the user subscribed to all), counted
// under `valgrind --tool=callgrind` for each build named, one after the other.
// The realm is built by the server running normally, which is then restarted
// on the same data directory under callgrind: CG_WARM registrations warm it
// up, CG_REQUESTS are counted (one at a time, each queue deleted after).
// Instruction counts do not depend on the machine's load. A few minutes.
//   node bench/p3-callgrind.mjs                      (this build)
//   CG_MAINS=/work/base/dist/src/main.js,dist/src/main.js node bench/p3-callgrind.mjs
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PARLEY_MAIN, freePort, startParley, table } from './lib.mjs';
import { call, makeUsers } from './events-lib.mjs';

const WARM = Number(process.env.CG_WARM ?? 30);
const N = Number(process.env.CG_REQUESTS ?? 30);
const MAINS = (process.env.CG_MAINS ?? PARLEY_MAIN).split(',').map((m) => path.resolve(m));
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-p3-cg-'));

function instructions(pid) {
  const text = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const threads = [...text.matchAll(/^\s*Th\s*\d+\s+([\d,]+)\s*$/gm)].map((m) => Number(m[1].replaceAll(',', '')));
  if (!threads.length) throw new Error(`callgrind_control said: ${text}`);
  return threads.reduce((a, b) => a + b, 0);
}

async function buildRealm(main) {
  const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast' }, { main });
  const users = await makeUsers(server, 99, 'p3');
  for (let i = 0; i < 50; i++) {
    const subscribers = [users[0].id, ...users.filter((_, k) => k > 0 && (k + i) % 3 === 0).map((u) => u.id)];
    const made = await call(server.base, server.auth, 'POST', '/channels/create', { name: `p3 channel ${i}`, subscribers, invite_only: i % 4 === 3 });
    if (made.result !== 'success') throw new Error(`create channel: ${JSON.stringify(made)}`);
    const sent = await call(server.base, i % 4 === 3 ? users[0].auth : server.auth, 'POST', '/messages', { type: 'stream', to: `p3 channel ${i}`, topic: `topic ${i}`, content: `hello ${i}` });
    if (sent.result !== 'success') throw new Error(`send: ${JSON.stringify(sent)}`);
  }
  server.child.kill('SIGTERM');
  await new Promise((r) => server.child.once('exit', r));
  return { dataDir: server.dataDir, auth: users[0].auth };
}

async function measure(main) {
  const { dataDir, auth } = await buildRealm(main);
  const port = await freePort();
  const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${outDir}/cg.%p.out`, process.execPath, main], {
    env: { ...process.env, PARLEY_PORT: String(port), PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'warn', PARLEY_RATE_LIMIT_PER_USER: '0', PARLEY_RATE_LIMIT_PER_IP: '0' },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + 600_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error('no answer under callgrind');
      try {
        if ((await fetch(`${base}/api/v1/server_settings`)).status === 200) break;
      } catch {
        /* not yet */
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const once = async () => {
      const r = await call(base, auth, 'POST', '/register');
      if (r.result !== 'success' || r.subscriptions.length !== 50) throw new Error(`register: ${JSON.stringify(r).slice(0, 300)}`);
      await call(base, auth, 'DELETE', '/events', { queue_id: r.queue_id });
    };
    for (let i = 0; i < WARM; i++) await once();
    // The DELETE /events of each counted pair is small next to the registration; counted with it.
    const before = instructions(child.pid);
    for (let i = 0; i < N; i++) await once();
    const after = instructions(child.pid);
    return Math.round((after - before) / N);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const rows = [];
for (const main of MAINS) rows.push({ build: main, 'instructions per register+delete': (await measure(main)).toLocaleString('en-US') });
table(rows);
fs.rmSync(outDir, { recursive: true, force: true });
process.exit(0);

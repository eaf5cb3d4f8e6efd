// Where GET /api/v1/users/me's time goes, layer by layer: each layer of the
// request path timed on its own in this process (best of 5 rounds of N
// calls, CPU microseconds per call), using the built server (dist/, or
// BENCH_PARLEY_DIST). The framework's own cost per request (a bare Fastify
// route against bare node:http) comes from bench/p1-auth-read.mjs. The
// machine's other load inflates every figure alike; compare within one run.
// Not part of `npm run bench`:  node bench/p1-layers.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, table } from './lib.mjs';

const DIST = process.env.BENCH_PARLEY_DIST ?? path.join(ROOT, 'dist');
const N = Number(process.env.LAYER_N ?? 20_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-layers-'));
Object.assign(process.env, { PARLEY_DATA_DIR: dataDir, PARLEY_PORT: '0', PARLEY_LOG_LEVEL: 'info', PARLEY_RATE_LIMIT_PER_USER: '0', PARLEY_RATE_LIMIT_PER_IP: '0' });
const mod = (p) => import(path.join(DIST, 'src', p));
const { buildApp, bootstrapRealm } = await mod('app.js');
const { loadConfig } = await mod('config.js');
const { authenticate } = await mod('http/auth.js');
const { presentUser } = await mod('presenters/user.js');
const { maxMessageIdForUser } = await mod('store/messages.js');
const { maxMessageIdForUser: preparedMaxId } = await mod('state/user-extras.js');
const params = await mod('http/params.js');
const { Metrics } = await mod('http/metrics.js');
const { default: pino } = await import('pino');

// The request log goes to /dev/null, asynchronously, as the server's own does to its stdout.
const devnull = pino.destination({ dest: '/dev/null', sync: false });
const config = loadConfig();
const app = await buildApp(config, { logger: pino({ level: 'info' }, devnull) });
const boot = await bootstrapRealm(app.ctx, { announce: false });
const header = 'Basic ' + Buffer.from(`${boot.ownerEmail}:${boot.ownerApiKey}`).toString('base64');
const ctx = app.ctx;

/** This process's CPU time in microseconds (user + system): unlike wall time, not inflated while other processes run. */
function cpuNow() {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function time(fn) {
  for (let i = 0; i < Math.min(N, 5000); i++) await fn(i);
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t = cpuNow();
    for (let i = 0; i < N; i++) await fn(i);
    best = Math.min(best, (cpuNow() - t) / N);
  }
  return +best.toFixed(2);
}
function timeSync(fn) {
  for (let i = 0; i < Math.min(N, 5000); i++) fn(i);
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t = cpuNow();
    for (let i = 0; i < N; i++) fn(i);
    best = Math.min(best, (cpuNow() - t) / N);
  }
  return +best.toFixed(2);
}

const rows = [];
const row = (layer, us, note = '') => rows.push({ layer, us, note });

// Layers.
// Formatting only: the server's destination is asynchronous and writes many lines per write() under load.
const log = pino({ level: 'info' }, { write() {} });
row('request log line (pino formatting)', timeSync((i) => log.info({ reqId: `abc-${i}`, method: 'GET', route: '/api/v1/users/me', status: 200, ms: 0.42, userId: 1 }, 'request')));
const metrics = new Metrics(ctx);
row('metrics.observe (prom-client counter + histogram)', timeSync(() => metrics.observe('GET', '/api/v1/users/me', 200, 0.4)));
row('authenticate(): Basic decode + cached key lookup + caller', await time(() => authenticate(ctx, header)), 'without the per-header memo');
const memo = new Map([[header, 1]]);
row('per-header auth memo hit (Map lookup + cache check)', timeSync(() => memo.get(header) === 1 && ctx.authCache.get('x') === undefined));
const empty = params.paramParser ? params.paramParser({}) : (src) => params.parseParams({}, src);
row('parameters: none declared, none sent', timeSync(() => empty({ body: {}, query: {}, path: {} })));
row('parameters: parseParams({}) (before: entries, Set, spreads)', timeSync(() => params.parseParams({}, { body: {}, query: {}, path: {} })));
const userRow = (await authenticate(ctx, header)).row;
const view = { viewerId: userRow.id, viewerRole: userRow.role, fakeEmailDomain: 'example.com', clientGravatar: false, includeCustomProfileFields: false };
row('presentUser (the caller)', timeSync(() => presentUser(userRow, view)));
const out = { ...presentUser(userRow, view), profile_data: {}, max_message_id: 13 };
row('JSON body (~470 bytes)', timeSync(() => JSON.stringify({ result: 'success', msg: '', ...out }) + '\n'));
row('max_message_id: Kysely builder + compile + run', await time(() => maxMessageIdForUser(ctx.db, userRow.id)));
const compiled = ctx.db.selectFrom('user_messages').select('message_id').where('user_id', '=', userRow.id).orderBy('message_id', 'desc').limit(1).compile();
row('max_message_id: compiled once, through Kysely\'s executor', await time(() => ctx.db.executeQuery(compiled)));
row('max_message_id: as GET /users/me runs it', await time(() => preparedMaxId(ctx, userRow.id)), 'state/user-extras.ts');

table(rows);
await app.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeRedisPrefix } from '../../src/scale/redis.js';
import { createPgDatabase, TEST_REDIS_URL } from '../support/server.js';
import { api, basic, buildOnce, ownerFromZuliprc, ROOT, startNode, stopNode, type Node } from './cluster-support.js';

/**
 * The scheduler across processes: two Parley processes on one PostgreSQL
 * database (+ Redis) both scan for due scheduled messages; each message is
 * delivered exactly once. And across a restart: messages scheduled before
 * every process stopped are delivered by the next process to start. The
 * same for outgoing-webhook jobs: each triggered request is made once and
 * answered once with both processes scanning.
 */

const PASSWORD = 'sched-Test-pa55word';
let database: { url: string; drop: () => Promise<void> };
const prefix = `parley:test:sched:${randomBytes(6).toString('hex')}:`;
const nodes: Node[] = [];
let main = '';
let env: Record<string, string>;
let dbUrl = '';
let hamlet = '';
let channelId = 0;

async function dbQuery<T>(q: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return (await c.query(q, params)).rows as T[];
  } finally {
    await c.end();
  }
}

async function start(name: string): Promise<Node> {
  const n = await startNode(name, env, main);
  nodes.push(n);
  return n;
}

async function waitFor(cond: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pending = async (): Promise<number> =>
  Number((await dbQuery<{ n: string }>('select count(*) as n from scheduled_messages where delivered = 0 and failed = 0'))[0]!.n);

beforeAll(async () => {
  main = buildOnce(path.join(ROOT, 'node_modules/.cache/parley-scheduler-build'));
  database = await createPgDatabase('parley_sched');
  dbUrl = database.url;
  env = {
    PARLEY_DATABASE_URL: dbUrl,
    PARLEY_REDIS_URL: TEST_REDIS_URL,
    PARLEY_REDIS_PREFIX: prefix,
    PARLEY_OWNER_PASSWORD: PASSWORD,
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_EXTERNAL_HOST: 'sched.test',
    // Short scans so both processes race for every due message.
    PARLEY_SCHEDULER_POLL_MS: '100',
    PARLEY_RATE_LIMIT_PER_USER: '0',
    // The outgoing-webhook case's bot server is this test process, on loopback.
    PARLEY_OUTGOING_WEBHOOK_ALLOW_PRIVATE: '1',
  };
  const a = await start('a');
  const o = ownerFromZuliprc(a.dataDir);
  const owner = basic(o.email, o.key);
  const created = await api(a, 'POST', '/users', { email: 'hamlet@sched.test', password: PASSWORD, full_name: 'Hamlet' }, owner);
  expect(created.status).toBe(200);
  const key = await api(a, 'POST', '/fetch_api_key', { username: 'hamlet@sched.test', password: PASSWORD });
  hamlet = basic('hamlet@sched.test', key.body.api_key);
  const ch = await api(a, 'POST', '/channels/create', { name: 'timed', subscribers: [created.body.user_id] }, owner);
  expect(ch.status).toBe(200);
  channelId = ch.body.id;
}, 300_000);

afterAll(async () => {
  for (const n of nodes) await stopNode(n);
  await purgeRedisPrefix(TEST_REDIS_URL, prefix);
  await database?.drop();
});

describe('scheduled delivery across processes', () => {
  it('two processes: every scheduled message is delivered exactly once', async () => {
    const a = nodes[0]!;
    const b = await start('b');
    // Far enough ahead for every request to get in first on a loaded machine.
    const due = Math.floor(Date.now() / 1000) + 20;
    const N = 40;
    // Scheduled through both processes, all due at the same second.
    for (let i = 0; i < N; i++) {
      const r = await api(i % 2 ? b : a, 'POST', '/scheduled_messages', { type: 'stream', to: String(channelId), topic: 'race', content: `once ${i}`, scheduled_delivery_timestamp: due }, hamlet);
      expect(r.body).toEqual({ result: 'success', msg: '', scheduled_message_id: expect.any(Number) });
    }
    expect(Math.floor(Date.now() / 1000)).toBeLessThan(due);
    await waitFor(async () => (await pending()) === 0, 60_000);
    const sent = await dbQuery<{ content: string; n: string }>("select content, count(*) as n from messages where topic = 'race' group by content");
    expect(sent).toHaveLength(N);
    expect(sent.every((r) => Number(r.n) === 1)).toBe(true);
    const settled = await dbQuery<{ delivered: number; failed: number; n: string }>("select delivered, failed, count(*) as n from scheduled_messages where topic = 'race' group by delivered, failed");
    expect(settled.map((r) => [r.delivered, r.failed, Number(r.n)])).toEqual([[1, 0, N]]);
    // Each row points at its own message.
    const distinct = await dbQuery<{ n: string }>("select count(distinct delivered_message_id) as n from scheduled_messages where topic = 'race'");
    expect(Number(distinct[0]!.n)).toBe(N);
  }, 120_000);

  it('outgoing webhooks with two processes: each mention is POSTed once and answered once', async () => {
    const a = nodes[0]!;
    const b = nodes[1] ?? (await start('b'));
    const seen: string[] = [];
    const hook = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        seen.push(body.data);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ content: `re: ${body.data}` }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`;
      const bot = await api(a, 'POST', '/bots', { full_name: 'Racer', short_name: 'racer', bot_type: 3, payload_url: JSON.stringify(url) }, hamlet);
      expect(bot.status).toBe(200);
      const N = 20;
      for (let i = 0; i < N; i++) {
        const r = await api(i % 2 ? b : a, 'POST', '/messages', { type: 'stream', to: String(channelId), topic: 'hook race', content: `@**Racer** q${i}` }, hamlet);
        expect(r.status).toBe(200);
      }
      const answers = async () => dbQuery<{ content: string; n: string }>("select content, count(*) as n from messages where topic = 'hook race' and content like 're: %' group by content");
      await waitFor(async () => (await answers()).length === N && Number((await dbQuery<{ n: string }>('select count(*) as n from outgoing_webhook_jobs'))[0]!.n) === 0, 60_000);
      // Settle a little longer: a second request or answer would show up now.
      await new Promise((r) => setTimeout(r, 500));
      expect((await answers()).every((r) => Number(r.n) === 1)).toBe(true);
      expect((await answers()).length).toBe(N);
      expect(seen.length).toBe(N);
      expect(new Set(seen).size).toBe(N);
    } finally {
      hook.closeAllConnections();
      await new Promise((r) => hook.close(r));
    }
  }, 120_000);

  it('a restart: scheduled before every process stopped, delivered by the next one to start', async () => {
    const a = nodes[0]!;
    const due = Math.floor(Date.now() / 1000) + 2;
    const r = await api(a, 'POST', '/scheduled_messages', { type: 'stream', to: String(channelId), topic: 'restart', content: 'survives', scheduled_delivery_timestamp: due }, hamlet);
    expect(r.status).toBe(200);
    for (const n of nodes) await stopNode(n);
    nodes.length = 0;
    // Falls due while nothing runs.
    await new Promise((res) => setTimeout(res, 3000));
    expect(await dbQuery("select id from messages where topic = 'restart'")).toEqual([]);
    await start('c');
    await waitFor(async () => (await pending()) === 0, 20_000);
    const sent = await dbQuery<{ content: string }>("select content from messages where topic = 'restart'");
    expect(sent).toEqual([{ content: 'survives' }]);
  }, 120_000);
});

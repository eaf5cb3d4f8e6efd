import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeRedisPrefix } from '../../src/scale/redis.js';
import { PG_ADMIN_URL, TEST_REDIS_URL } from '../support/server.js';
import { api, basic, buildOnce, ownerFromZuliprc, ROOT, startNode, stopNode, type Node } from './cluster-support.js';

/**
 * The scheduler across processes: two Parley processes on one PostgreSQL
 * database (+ Redis) both scan for due scheduled messages; each message is
 * delivered exactly once. And across a restart: messages scheduled before
 * every process stopped are delivered by the next process to start.
 */

const PASSWORD = 'sched-Test-pa55word';
const dbName = `parley_sched_${process.pid}_${randomBytes(4).toString('hex')}`;
const prefix = `parley:test:sched:${randomBytes(6).toString('hex')}:`;
const nodes: Node[] = [];
let main = '';
let env: Record<string, string>;
let dbUrl = '';
let hamlet = '';
let channelId = 0;

async function adminQuery(q: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(q);
  } finally {
    await c.end();
  }
}

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
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = '/' + dbName;
  dbUrl = url.toString();
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
  await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
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

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeRedisPrefix } from '../../src/scale/redis.js';
import { createPgDatabase, TEST_REDIS_URL } from '../support/server.js';
import { api, basic, createUsers, buildOnce, ownerFromZuliprc, startNode, stopNode, type Node } from './cluster-support.js';

/**
 * Scale-out acceptance: several Parley processes on one PostgreSQL database
 * and one Redis. A queue registered through A is served by B; a user
 * deactivated through A is refused by B; failed logins count across
 * processes; SIGTERM drains; kill -9 of a process loses neither queues nor
 * committed events.
 */

const PASSWORD = 'scale-Test-pa55word';
let database: { url: string; drop: () => Promise<void> };
const prefix = `parley:test:scale:${randomBytes(6).toString('hex')}:`;
const nodes: Node[] = [];
let A: Node;
let B: Node;
let env: Record<string, string>;
let owner: string;
const users: Record<'hamlet' | 'cordelia' | 'othello', { id: number; email: string; auth: string }> = {} as never;

async function start(name: string, extra: Record<string, string> = {}): Promise<Node> {
  const n = await startNode(name, { ...env, ...extra });
  nodes.push(n);
  return n;
}

beforeAll(async () => {
  buildOnce();
  database = await createPgDatabase('parley_scale');
  env = {
    PARLEY_DATABASE_URL: database.url,
    PARLEY_REDIS_URL: TEST_REDIS_URL,
    PARLEY_REDIS_PREFIX: prefix,
    PARLEY_OWNER_PASSWORD: PASSWORD,
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_HEARTBEAT_MS: '20000',
    PARLEY_HEARTBEAT_JITTER_MS: '0',
    PARLEY_EXTERNAL_HOST: 'scale.test',
  };
  // A migrates and creates the organization; B starts on the same database afterwards.
  A = await start('a');
  B = await start('b');
  const o = ownerFromZuliprc(A.dataDir);
  owner = basic(o.email, o.key);
  Object.assign(users, await createUsers(A, B, owner, ['hamlet', 'cordelia', 'othello'] as const, PASSWORD, 'scale.test'));
}, 300_000);

afterAll(async () => {
  for (const n of nodes) await stopNode(n);
  await purgeRedisPrefix(TEST_REDIS_URL, prefix);
  await database?.drop();
});

describe('several processes on PostgreSQL and Redis', () => {
  let queueId = '';
  let lastEventId = -1;

  it('health and readiness answer on every process', async () => {
    for (const n of [A, B]) {
      const h = await fetch(`${n.base}/health`);
      expect([h.status, await h.json()]).toEqual([200, { status: 'up' }]);
      const r = await fetch(`${n.base}/ready`);
      expect([r.status, await r.json()]).toEqual([200, { status: 'ready', database: 'ok', redis: 'ok' }]);
    }
  });

  it('a queue registered through A long-polls on B and gets a message sent through A exactly once', async () => {
    const reg = await api(A, 'POST', '/register', { event_types: ['message'], apply_markdown: false }, users.hamlet.auth);
    expect(reg.status).toBe(200);
    queueId = reg.body.queue_id;
    lastEventId = reg.body.last_event_id;
    // B parks the poll (nothing is pending yet).
    const parked = api(B, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId }, users.hamlet.auth);
    await new Promise((r) => setTimeout(r, 200));
    const sent = await api(A, 'POST', '/messages', { type: 'direct', to: [users.hamlet.id], content: 'across processes' }, users.cordelia.auth);
    expect(sent.status).toBe(200);
    const got = await parked;
    expect(got.status).toBe(200);
    expect(got.body.events).toHaveLength(1);
    const [ev] = got.body.events;
    expect(ev).toMatchObject({ type: 'message', id: lastEventId + 1, message: { id: sent.body.id, content: 'across processes', sender_id: users.cordelia.id } });
    lastEventId = ev.id;
    // Acknowledged through B; neither process has it again.
    for (const n of [B, A]) {
      const again = await api(n, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true }, users.hamlet.auth);
      expect([again.status, again.body.events]).toEqual([200, []]);
    }
  });

  it('a settings change through B reaches a queue polled through A', async () => {
    const reg = await api(B, 'POST', '/register', { event_types: ['user_settings'] }, users.othello.auth);
    const parked = api(A, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id }, users.othello.auth);
    await new Promise((r) => setTimeout(r, 200));
    expect((await api(B, 'PATCH', '/settings', { left_side_userlist: true }, users.othello.auth)).status).toBe(200);
    const got = await parked;
    expect(got.body.events).toEqual([{ type: 'user_settings', op: 'update', property: 'left_side_userlist', value: true, id: reg.body.last_event_id + 1 }]);
    await api(A, 'DELETE', '/events', { queue_id: reg.body.queue_id }, users.othello.auth);
  });

  it('a user deactivated through A is refused by B on the next request', async () => {
    // Warm B's auth cache for cordelia first: B must forget the cached row.
    expect((await api(B, 'GET', '/users/me', {}, users.cordelia.auth)).status).toBe(200);
    expect((await api(A, 'DELETE', `/users/${users.cordelia.id}`, {}, owner)).status).toBe(200);
    const refused = await api(B, 'GET', '/users/me', {}, users.cordelia.auth);
    expect(refused).toEqual({ status: 401, body: { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' } });
  });

  it('failed logins are counted across processes', async () => {
    // Five failures (PARLEY_LOGIN_FAIL_LIMIT's default), alternating processes; then even the right password is refused.
    for (let i = 0; i < 5; i++) {
      const res = await api(i % 2 ? B : A, 'POST', '/fetch_api_key', { username: users.othello.email, password: 'wrong-password' });
      expect(res.status).toBe(401);
    }
    const limited = await api(B, 'POST', '/fetch_api_key', { username: users.othello.email, password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ result: 'error', code: 'RATE_LIMIT_HIT' });
  });

  it('SIGTERM drains: readiness goes 503, the parked poll is answered, the queue lives on', async () => {
    const C = await start('c', { PARLEY_DRAIN_DELAY_MS: '600' });
    const parked = api(C, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId }, users.hamlet.auth);
    await new Promise((r) => setTimeout(r, 200));
    C.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const ready = await fetch(`${C.base}/ready`);
    expect([ready.status, await ready.json()]).toEqual([503, { status: 'draining', database: 'ok', redis: 'ok' }]);
    const got = await parked;
    expect(got.status).toBe(200);
    expect(got.body.events).toEqual([{ type: 'heartbeat', id: lastEventId + 1 }]);
    lastEventId += 1;
    expect(await C.exited).toBe(0);
    const after = await api(B, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true }, users.hamlet.auth);
    expect([after.status, after.body.events]).toEqual([200, []]);
  });

  it('after kill -9 of A, the queue keeps working through B and no committed event is lost', async () => {
    // A poll parked on A, and a message committed through A just before A dies.
    const ac = new AbortController();
    const parkedOnA = api(A, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId }, users.hamlet.auth, ac.signal).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 200));
    const sent = await api(A, 'POST', '/messages', { type: 'direct', to: [users.hamlet.id], content: 'just before the crash' }, users.othello.auth);
    expect(sent.status).toBe(200);
    A.child.kill('SIGKILL');
    await A.exited;
    ac.abort();
    await parkedOnA;
    // Whether or not A's poll answered before dying, the event was acknowledged by nobody: B serves it.
    const fromB = await api(B, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true }, users.hamlet.auth);
    expect(fromB.status).toBe(200);
    expect(fromB.body.events).toHaveLength(1);
    expect(fromB.body.events[0]).toMatchObject({ type: 'message', id: lastEventId + 1, message: { id: sent.body.id, content: 'just before the crash' } });
    lastEventId += 1;
    // And the queue goes on through B.
    const parked = api(B, 'GET', '/events', { queue_id: queueId, last_event_id: lastEventId }, users.hamlet.auth);
    await new Promise((r) => setTimeout(r, 200));
    const next = await api(B, 'POST', '/messages', { type: 'direct', to: [users.hamlet.id], content: 'after the crash' }, users.othello.auth);
    const got = await parked;
    expect(got.body.events).toHaveLength(1);
    expect(got.body.events[0]).toMatchObject({ type: 'message', id: lastEventId + 1, message: { id: next.body.id, content: 'after the crash' } });
  });
});

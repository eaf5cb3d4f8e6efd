import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeRedisPrefix } from '../../src/scale/redis.js';
import { createPgDatabase, TEST_REDIS_URL } from '../support/server.js';
import { api, basic, createUsers, BUILD_DIR, buildOnce, ownerFromZuliprc, startNode, stopNode, type Node } from './cluster-support.js';

/**
 * Two Parley processes on one PostgreSQL database and one Redis: presence
 * reported to one is seen by the other (reads, /register, the update-id
 * sequence and the events, as in one process); per-process caches follow
 * writes made through the other; API rate limits are counted once for both.
 */

const PASSWORD = 'scale-Test-pa55word';
const RATE_LIMIT = 40;
let database: { url: string; drop: () => Promise<void> };
const prefix = `parley:test:scale-presence:${randomBytes(6).toString('hex')}:`;
const nodes: Node[] = [];
let A: Node;
let B: Node;
let owner: string;
type Name = 'hamlet' | 'cordelia' | 'othello' | 'iago';
const users: Record<Name, { id: number; email: string; auth: string }> = {} as never;

beforeAll(async () => {
  // Its own build directory: cluster.test.ts may be building into the default one at the same time.
  const main = buildOnce(BUILD_DIR + '-presence');
  database = await createPgDatabase('parley_scale_presence');
  const env = {
    PARLEY_DATABASE_URL: database.url,
    PARLEY_REDIS_URL: TEST_REDIS_URL,
    PARLEY_REDIS_PREFIX: prefix,
    PARLEY_OWNER_PASSWORD: PASSWORD,
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_HEARTBEAT_MS: '20000',
    PARLEY_HEARTBEAT_JITTER_MS: '0',
    PARLEY_EXTERNAL_HOST: 'scale.test',
    PARLEY_RATE_LIMIT_PER_USER: String(RATE_LIMIT),
  };
  A = await startNode('pa', env, main);
  nodes.push(A);
  B = await startNode('pb', env, main);
  nodes.push(B);
  const o = ownerFromZuliprc(A.dataDir);
  owner = basic(o.email, o.key);
  Object.assign(users, await createUsers(A, B, owner, ['hamlet', 'cordelia', 'othello', 'iago'] as const, PASSWORD, 'scale.test'));
}, 300_000);

afterAll(async () => {
  for (const n of nodes) await stopNode(n);
  await purgeRedisPrefix(TEST_REDIS_URL, prefix);
  await database?.drop();
});

const report = (n: Node, who: Name, params: Record<string, unknown>) => api(n, 'POST', '/users/me/presence', { status: 'active', ...params }, users[who].auth);

describe('presence across processes', () => {
  let queue = { id: '', last: -1 };

  it('a first report to A: B answers it in /realm/presence, /users/{id}/presence and /register; one event', async () => {
    // Othello's queue lives in Redis; registered through B.
    const reg = await api(B, 'POST', '/register', { event_types: ['presence'] }, users.othello.auth);
    expect(reg.status).toBe(200);
    queue = { id: reg.body.queue_id, last: reg.body.last_event_id };

    const first = await report(A, 'hamlet', { new_user_input: true });
    expect(first.status).toBe(200);
    expect(first.body.presence_last_update_id).toBe(1);
    const hamletLegacy = first.body.presences[users.hamlet.email];
    expect(hamletLegacy.website).toMatchObject({ client: 'website', status: 'active', pushable: false });

    const realm = await api(B, 'GET', '/realm/presence', {}, users.cordelia.auth);
    expect(realm.status).toBe(200);
    expect(realm.body.presences).toEqual({ [users.hamlet.email]: hamletLegacy });

    const one = await api(B, 'GET', `/users/${users.hamlet.id}/presence`, {}, users.cordelia.auth);
    expect(one.status).toBe(200);
    // The one-user legacy form has no client keys in it.
    expect(one.body.presence.website).toEqual({ status: 'active', timestamp: hamletLegacy.website.timestamp });

    const state = await api(B, 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true }, users.cordelia.auth);
    expect(state.status).toBe(200);
    expect(state.body.presence_last_update_id).toBe(1);
    expect(Object.keys(state.body.presences)).toEqual([String(users.hamlet.id)]);
    await api(B, 'DELETE', '/events', { queue_id: state.body.queue_id }, users.cordelia.auth);
  });

  it('update ids come from one sequence: a report to B takes the next id, and the modern protocol sees both', async () => {
    const second = await report(B, 'cordelia', { last_update_id: -1 });
    expect(second.status).toBe(200);
    expect(second.body.presence_last_update_id).toBe(2);
    expect(Object.keys(second.body.presences).sort()).toEqual([String(users.hamlet.id), String(users.cordelia.id)].sort());
    // Asked through A with id 1: only Cordelia's change.
    const since = await report(A, 'othello', { last_update_id: 1, ping_only: false });
    expect(since.status).toBe(200);
    // Othello's own first report took id 3.
    expect(since.body.presence_last_update_id).toBe(3);
    expect(Object.keys(since.body.presences).sort()).toEqual([String(users.cordelia.id), String(users.othello.id)].sort());
    expect(since.body.presences[String(users.cordelia.id)]).toEqual(second.body.presences[String(users.cordelia.id)]);
  });

  it('a report to B right after one to A is no change there either: no second event, no new id', async () => {
    const again = await report(B, 'hamlet', { last_update_id: 3 });
    expect(again.status).toBe(200);
    expect([again.body.presences, again.body.presence_last_update_id]).toEqual([{}, 3]);
    // The queue has one event per user's first report, in order, whichever process took it.
    const got = await api(A, 'GET', '/events', { queue_id: queue.id, last_event_id: queue.last, dont_block: true }, users.othello.auth);
    expect(got.status).toBe(200);
    expect(got.body.events.map((e: any) => [e.type, e.user_id, e.id])).toEqual([
      ['presence', users.hamlet.id, queue.last + 1],
      ['presence', users.cordelia.id, queue.last + 2],
      ['presence', users.othello.id, queue.last + 3],
    ]);
    expect(got.body.events[0]).toMatchObject({ email: users.hamlet.email, presence: { website: { client: 'website', status: 'active', pushable: false } } });
  });
});

describe('caches and rate limits across processes', () => {
  it('a linkifier added through A applies to the next message rendered by B (B had cached the empty list)', async () => {
    const stream = 'Verona';
    expect((await api(A, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: stream }] }, users.iago.auth)).status).toBe(200);
    const send = async () => {
      const sent = await api(B, 'POST', '/messages', { type: 'stream', to: stream, topic: 'links', content: 'see #123' }, users.iago.auth);
      expect(sent.status).toBe(200);
      const got = await api(B, 'GET', `/messages/${sent.body.id}`, {}, users.iago.auth);
      return got.body.message.content as string;
    };
    expect(await send()).toBe('<p>see #123</p>');
    const added = await api(A, 'POST', '/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' }, owner);
    expect(added.status).toBe(200);
    expect(await send()).toBe('<p>see <a href="https://trac.example.com/ticket/123">#123</a></p>');
  });

  it('the API rate limit is one count for both processes', async () => {
    // Iago has made some limited requests already (the linkifier test): start from what the header says is left.
    const first = await fetch(`${A.base}/api/v1/users/me`, { headers: { authorization: users.iago.auth } });
    expect(first.status).toBe(200);
    let remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(first.headers.get('x-ratelimit-limit')).toBe(String(RATE_LIMIT));
    expect(remaining).toBeLessThan(RATE_LIMIT - 1);
    for (let i = 0; remaining > 0; i++) {
      const n = i % 2 ? A : B;
      const res = await fetch(`${n.base}/api/v1/users/me`, { headers: { authorization: users.iago.auth } });
      expect(res.status).toBe(200);
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
      remaining -= 1;
    }
    for (const n of [A, B]) {
      const res = await fetch(`${n.base}/api/v1/users/me`, { headers: { authorization: users.iago.auth } });
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ result: 'error', code: 'RATE_LIMIT_HIT' });
    }
  });
});

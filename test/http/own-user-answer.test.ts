import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { openStore } from '../../src/store/db.js';
import { maxMessageIdNow } from '../../src/state/user-extras.js';

// GET /users/me keeps its answer's JSON per user row and profile data (endpoints/users.ts,
// ownUserJson) and answers without a promise when max_message_id is kept too. Each case reads
// /users/me (so its JSON is kept), changes what the answer shows, and reads it again.
let t: TestServer;
let u: TestUser;
beforeAll(async () => {
  t = await startTestServer();
  u = await t.createUser({ email: 'own-answer@zulip.com', fullName: 'Own Answer' });
});
afterAll(async () => t.close());

const me = async (): Promise<Record<string, unknown>> => expectSuccess(await t.get('/users/me', {}, u));

describe('GET /users/me: the kept answer follows every change of what it shows', () => {
  it('the user row (full name, then role)', async () => {
    expect((await me()).full_name).toBe('Own Answer');
    expect((await me()).full_name).toBe('Own Answer');
    expectSuccess(await t.patch('/settings', { full_name: 'Own Renamed' }, u));
    expect((await me()).full_name).toBe('Own Renamed');
    expectSuccess(await t.patch(`/users/${u.id}`, { role: 200 }, 'owner'));
    const after = await me();
    expect([after.role, after.is_admin]).toEqual([200, true]);
  });

  it('the profile data', async () => {
    const field = expectSuccess(await t.post('/realm/profile_fields', { name: 'Desk', field_type: 1 }, 'iago')).id as number;
    expect((await me()).profile_data).toEqual({});
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: field, value: 'north' }] }, u));
    expect(((await me()).profile_data as Record<string, { value: string }>)[field]!.value).toBe('north');
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: field, value: 'south' }] }, u));
    expect(((await me()).profile_data as Record<string, { value: string }>)[field]!.value).toBe('south');
  });

  it('the kept answer is the answer built from objects, fields in the same order', async () => {
    const kept = await me();
    expect(Object.keys(kept).slice(0, 2)).toEqual(['result', 'msg']);
    expect(Object.keys(kept).at(-1)).toBe('max_message_id');
    // A new row object (any write to users drops the cached rows) builds the answer again.
    expectSuccess(await t.patch('/settings', { full_name: 'Own Answer' }, u));
    expectSuccess(await t.patch('/settings', { full_name: 'Own Renamed' }, u));
    const rebuilt = await me();
    expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(kept));
  });
});

describe('max_message_id: data_version read once per poll phase (maxMessageIdNow)', () => {
  it('requests of one phase share one PRAGMA data_version; the next phase reads it again and sees another connection\'s commit', async () => {
    const app = t.app.ctx;
    if (app.store.dialect !== 'sqlite') return;
    await me();
    // Start of a fresh phase.
    await new Promise((r) => setImmediate(r));
    const queries = app.store.stats.queries;
    const cached = maxMessageIdNow(app, u.id, true);
    expect(cached).toBeDefined();
    expect(maxMessageIdNow(app, u.id, true)).toBe(cached);
    expect(app.store.stats.queries).toBe(queries + 1);
    // Not from one batch (Fastify's path, a pipelined request): the pragma every time.
    maxMessageIdNow(app, u.id, false);
    expect(app.store.stats.queries).toBe(queries + 2);

    const id = expectSuccess(await t.post('/messages', { type: 'direct', to: JSON.stringify([t.users.iago.id]), content: 'to someone else' }, 'hamlet')).id as number;
    // The send dropped the kept values (a write to user_messages): read again.
    await me();
    await new Promise((r) => setImmediate(r));
    expect(maxMessageIdNow(app, u.id, true)).toBe(cached);
    const other = openStore({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir });
    try {
      await other.db.insertInto('user_messages').values({ user_id: u.id, message_id: id, flags: 0 }).execute();
      // The next phase: the data_version read in the last one is gone, the commit is seen and the
      // kept value dropped (kept for good, the stale value would answer).
      await new Promise((r) => setImmediate(r));
      expect(maxMessageIdNow(app, u.id, true)).toBeUndefined();
      expect((await me()).max_message_id).toBe(id);
      await new Promise((r) => setImmediate(r));
      expect(maxMessageIdNow(app, u.id, true)).toBe(id);
      await other.db.deleteFrom('user_messages').where('user_id', '=', u.id).where('message_id', '=', id).execute();
      await new Promise((r) => setImmediate(r));
      expect(maxMessageIdNow(app, u.id, true)).toBeUndefined();
      expect((await me()).max_message_id).toBe(cached);
    } finally {
      await other.close();
    }
  });
});

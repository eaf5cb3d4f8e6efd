import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { openStore } from '../../src/store/db.js';

// GET /users/me's max_message_id is kept in memory on SQLite (state/user-extras.ts). Each case
// reads it (so it is cached), changes the user's messages by another path, and reads it again.
let t: TestServer;
let u: TestUser;
beforeAll(async () => {
  t = await startTestServer();
  u = await t.createUser({ email: 'maxid@zulip.com', fullName: 'Max Id' });
  await createChannel(t, 'Denmark', ['hamlet', 'iago']);
});
afterAll(async () => t.close());

const maxId = async (): Promise<number> => expectSuccess(await t.get('/users/me', {}, u)).max_message_id;
const newest = async (): Promise<number> => {
  const r = await t.app.ctx.db.selectFrom('user_messages').select('message_id').where('user_id', '=', u.id).orderBy('message_id', 'desc').limit(1).executeTakeFirst();
  return r ? r.message_id : -1;
};

describe('GET /users/me max_message_id follows every change of the user\'s messages', () => {
  it('a message received, then deleted', async () => {
    const before = await maxId();
    expect(await maxId()).toBe(before);
    const sent = expectSuccess(await t.post('/messages', { type: 'direct', to: JSON.stringify([u.id]), content: 'hello' }, 'iago')).id as number;
    expect(await maxId()).toBe(sent);
    expectSuccess(await t.delete(`/messages/${sent}`, {}, 'iago'));
    expect(await maxId()).toBe(before);
  });

  it('a historical row added by reacting to a channel message the user never received', async () => {
    await maxId();
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'max-id', 'react to me');
    expect(await maxId()).not.toBe(id);
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'astonished' }, u));
    expect(await maxId()).toBe(id);
  });

  it('a write outside any action (an operator\'s SQL through the server\'s own handle)', async () => {
    const cached = await maxId();
    expect(cached).toBeGreaterThan(0);
    await t.app.ctx.db.deleteFrom('user_messages').where('user_id', '=', u.id).where('message_id', '=', cached).execute();
    const expected = await newest();
    expect(expected).not.toBe(cached);
    expect(await maxId()).toBe(expected);
  });

  it('a write by another connection to the same database (the CLI, another process)', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'max-id', 'someone else writes');
    const cached = await maxId();
    expect(cached).not.toBe(id);
    const other = openStore({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir });
    try {
      await other.db.insertInto('user_messages').values({ user_id: u.id, message_id: id, flags: 0 }).execute();
      expect(await maxId()).toBe(id);
      await other.db.deleteFrom('user_messages').where('user_id', '=', u.id).where('message_id', '=', id).execute();
      expect(await maxId()).toBe(cached);
    } finally {
      await other.close();
    }
  });

  it('a rolled-back write leaves the committed value', async () => {
    const cached = await maxId();
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'max-id', 'rolled back');
    await expect(
      t.app.ctx.db.transaction().execute(async (trx) => {
        await trx.insertInto('user_messages').values({ user_id: u.id, message_id: id, flags: 0 }).execute();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await maxId()).toBe(cached);
  });
});

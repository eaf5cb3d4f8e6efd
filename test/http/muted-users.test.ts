import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectStateConsistent } from '../support/events.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { createChannel, getMessage, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { mutedUsersModule } from '../../src/state/muted-users.js';

/** POST/DELETE /users/me/muted_users/{id} (Zulip's views/muted_users.py and actions/muted_users.py). */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const mutes = async (userId: number) =>
  (await t.app.ctx.db.selectFrom('muted_users').select(['muted_user_id']).where('user_id', '=', userId).orderBy('muted_user_id').execute()).map((r) => r.muted_user_id);
const mutedList = async (who: 'hamlet' | 'cordelia') => expectSuccess(await t.post('/register', { fetch_event_types: ['muted_users'] }, who)).muted_users;

async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string): Promise<void> {
  const before = await t.app.ctx.db.selectFrom('muted_users').selectAll().orderBy('user_id').orderBy('muted_user_id').execute();
  let res!: Res;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, status, code, msg);
  expect(deliveries).toEqual([]);
  expect(await t.app.ctx.db.selectFrom('muted_users').selectAll().orderBy('user_id').orderBy('muted_user_id').execute()).toEqual(before);
}

describe('muted users', () => {
  it('muting sends the muter the whole list, marks the muted user\'s unread messages read, and /register carries it', async () => {
    await createChannel(t, 'mutes', ['hamlet', 'othello', 'cordelia']);
    const unread1 = await sendChannelMessage(t, 'othello', 'mutes', 'noise', 'first');
    const unread2 = await sendDirectMessage(t, 'othello', ['hamlet'], 'psst');
    const other = await sendChannelMessage(t, 'cordelia', 'mutes', 'noise', 'not from othello');
    const before = Math.floor(Date.now() / 1000);
    const deliveries = await t.captureEvents(async () => {
      expect(expectSuccess(await t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'hamlet'))).toEqual({ result: 'success', msg: '' });
    });
    const events = deliveries.map((d) => ({ event: d.event, userIds: d.userIds }));
    expect(events).toEqual([
      { event: { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [unread1, unread2], all: false }, userIds: [t.users.hamlet.id] },
      { event: { type: 'muted_users', muted_users: [{ id: t.users.othello.id, timestamp: expect.any(Number) }] }, userIds: [t.users.hamlet.id] },
    ]);
    const ts = (deliveries[1]!.event.muted_users as { timestamp: number }[])[0]!.timestamp;
    expect(ts).toBeGreaterThanOrEqual(before);
    expect((await getMessage(t, 'hamlet', unread1)).flags).toContain('read');
    expect((await getMessage(t, 'hamlet', other)).flags).not.toContain('read');
    // Othello's own view and Cordelia's are untouched.
    expect((await getMessage(t, 'cordelia', unread1)).flags).not.toContain('read');
    expect(await mutedList('hamlet')).toEqual([{ id: t.users.othello.id, timestamp: ts }]);
    expect(await mutedList('cordelia')).toEqual([]);
  });

  it('a muted sender\'s new messages arrive already read for the muter, channel and direct (and nobody else)', async () => {
    const ch = await sendChannelMessage(t, 'othello', 'mutes', 'later', 'still talking');
    const dm = await sendDirectMessage(t, 'othello', ['hamlet', 'cordelia'], 'group chat');
    for (const id of [ch, dm]) {
      expect((await getMessage(t, 'hamlet', id)).flags).toContain('read');
      expect((await getMessage(t, 'cordelia', id)).flags).not.toContain('read');
    }
    const body = expectSuccess(await t.post('/register', {}, 'hamlet'));
    const unreadIds = [...body.unread_msgs.streams, ...body.unread_msgs.huddles, ...body.unread_msgs.pms].flatMap((u: { unread_message_ids: number[] }) => u.unread_message_ids);
    expect(unreadIds).not.toContain(ch);
    expect(unreadIds).not.toContain(dm);
  });

  it('bots and deactivated users can be muted; unmuting sends the shorter list', async () => {
    expectSuccess(await t.post(`/users/me/muted_users/${t.users.bot.id}`, {}, 'hamlet'));
    const gone = await t.createUser({ email: 'gone-mute@zulip.com', fullName: 'Gone Mute' });
    expectSuccess(await t.delete(`/users/${gone.id}`, {}, 'iago'));
    expectSuccess(await t.post(`/users/me/muted_users/${gone.id}`, {}, 'hamlet'));
    expect(await mutes(t.users.hamlet.id)).toEqual([t.users.othello.id, t.users.bot.id, gone.id].sort((a, b) => a - b));
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.delete(`/users/me/muted_users/${t.users.bot.id}`, {}, 'hamlet'));
    });
    expect(deliveries.map((d) => [d.event.type, d.userIds])).toEqual([['muted_users', [t.users.hamlet.id]]]);
    expect((deliveries[0]!.event.muted_users as { id: number }[]).map((m) => m.id)).toEqual([t.users.othello.id, gone.id].sort((a, b) => a - b));
  });

  it('Zulip\'s errors, each writing nothing and sending nothing', async () => {
    const me = t.users.cordelia.id;
    await refused(() => t.post(`/users/me/muted_users/${me}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Cannot mute self');
    await refused(() => t.post('/users/me/muted_users/424242', {}, 'cordelia'), 400, 'BAD_REQUEST', 'No such user');
    await refused(() => t.post(`/users/me/muted_users/99999999999999`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'No such user');
    await refused(() => t.delete('/users/me/muted_users/424242', {}, 'cordelia'), 400, 'BAD_REQUEST', 'No such user');
    await refused(() => t.delete(`/users/me/muted_users/${t.users.iago.id}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'User is not muted');
    expectSuccess(await t.post(`/users/me/muted_users/${t.users.iago.id}`, {}, 'cordelia'));
    await refused(() => t.post(`/users/me/muted_users/${t.users.iago.id}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'User already muted');
    // As Zulip's URL pattern ([0-9]+), a non-number is no route at all.
    await refused(() => t.post('/users/me/muted_users/abc', {}, 'cordelia'), 404, 'BAD_REQUEST', 'Not Found');
  });

  it('stale /register state + muted_users events == fresh state (Iago is still muted from the errors test)', async () => {
    await expectStateConsistent(t, 'cordelia', async () => {
      expectSuccess(await t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'cordelia'));
      expectSuccess(await t.delete(`/users/me/muted_users/${t.users.iago.id}`, {}, 'cordelia'));
    });
    await expectModuleConsistent(t, mutedUsersModule, 'cordelia', async () => {
      expectSuccess(await t.post(`/users/me/muted_users/${t.users.shiva.id}`, {}, 'cordelia'));
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { realmSetting } from '../support/channels.js';

let t: TestServer;
let channel: number;
let secret: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'receipts', ['hamlet', 'othello', 'cordelia', 'iago', 'bot']);
  secret = await createChannel(t, 'receipts-secret', ['iago'], { invite_only: true });
});
afterAll(async () => t.close());

const read = async (who: 'hamlet' | 'othello' | 'cordelia' | 'iago' | 'bot', id: number) =>
  expectSuccess(await t.post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }, who));

describe('GET /messages/{message_id}/read_receipts', () => {
  it('lists active readers with send_read_receipts on, never the sender', async () => {
    const { hamlet, othello, cordelia, bot } = t.users;
    const id = await sendChannelMessage(t, 'hamlet', channel, 'r', 'read me', { read_by_sender: true });
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'othello')).user_ids).toEqual([]);
    await read('othello', id);
    await read('cordelia', id);
    await read('bot', id);
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'hamlet'))).toEqual({ result: 'success', msg: '', user_ids: [cordelia.id, othello.id, bot.id].sort((a, b) => a - b) });
    // Cordelia turns read receipts off; Othello marks it unread again.
    expectSuccess(await t.patch('/settings', { send_read_receipts: false }, 'cordelia'));
    expectSuccess(await t.post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' }, 'othello'));
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'iago')).user_ids).toEqual([bot.id]);
    expectSuccess(await t.patch('/settings', { send_read_receipts: true }, 'cordelia'));
    // Deactivated readers are left out.
    await read('othello', id);
    expectSuccess(await t.delete(`/users/${othello.id}`, {}, 'owner'));
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'hamlet')).user_ids).toEqual([cordelia.id, bot.id].sort((a, b) => a - b));
    expectSuccess(await t.post(`/users/${othello.id}/reactivate`, {}, 'owner'));
    expect(hamlet.id).toBeGreaterThan(0);
  });

  it('leaves out users who muted the caller and users the caller muted', async () => {
    const { othello, cordelia, iago } = t.users;
    const id = await sendChannelMessage(t, 'hamlet', channel, 'mute', 'read by many', { read_by_sender: true });
    await read('othello', id);
    await read('cordelia', id);
    await read('iago', id);
    const all = [othello.id, cordelia.id, iago.id].sort((a, b) => a - b);
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'hamlet')).user_ids).toEqual(all);
    // Othello muted Iago (the caller next); Iago muted Cordelia.
    expectSuccess(await t.post(`/users/me/muted_users/${iago.id}`, {}, 'othello'));
    expectSuccess(await t.post(`/users/me/muted_users/${cordelia.id}`, {}, 'iago'));
    // The caller's own read is listed, as in Zulip.
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'iago')).user_ids).toEqual([iago.id]);
    // Another caller still sees everyone: the mutes are about the caller, not the sender.
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'hamlet')).user_ids).toEqual(all);
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'othello')).user_ids).toEqual([othello.id, cordelia.id].sort((a, b) => a - b));
    expectSuccess(await t.delete(`/users/me/muted_users/${iago.id}`, {}, 'othello'));
    expectSuccess(await t.delete(`/users/me/muted_users/${cordelia.id}`, {}, 'iago'));
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'iago')).user_ids).toEqual(all);
  });

  it('works for direct messages the caller is part of', async () => {
    const id = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'psst');
    await read('cordelia', id);
    expect(expectSuccess(await t.get(`/messages/${id}/read_receipts`, {}, 'hamlet')).user_ids).toEqual([t.users.cordelia.id]);
    expectError(await t.get(`/messages/${id}/read_receipts`, {}, 'othello'), 400, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('refuses messages the caller cannot see (same error as missing), then a realm with receipts off', async () => {
    const hidden = await sendChannelMessage(t, 'iago', secret, 'x', 'hidden');
    expectError(await t.get(`/messages/${hidden}/read_receipts`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.get('/messages/99999999/read_receipts', {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    const id = await sendChannelMessage(t, 'hamlet', channel, 'r', 'x');
    await realmSetting(t, 'enable_read_receipts', false);
    expectError(await t.get(`/messages/${id}/read_receipts`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Read receipts are disabled in this organization.');
    // The access check comes first.
    expectError(await t.get(`/messages/${hidden}/read_receipts`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    await realmSetting(t, 'enable_read_receipts', true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, getMessage, newestMessages, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

let t: TestServer;
let denmark: number;
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago']);
});
afterAll(async () => t.close());

const countReactions = async (): Promise<number> => Number((await t.app.ctx.db.selectFrom('reactions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

async function expectRefused(fn: () => Promise<any>, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await countReactions();
  let res: any;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, 400, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await countReactions()).toBe(before);
}

const userBrief = (name: 'hamlet' | 'cordelia' | 'othello') => ({ user_id: t.users[name].id, email: t.users[name].email, full_name: t.users[name].name });

describe('POST /messages/{id}/reactions', () => {
  it('adds by name: a reaction event to everyone who can see the message; reactions listed oldest first', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'react to me');
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'astonished' }, 'cordelia')));
    expect(deliveries).toEqual([
      {
        realmId: t.realmId,
        event: { type: 'reaction', op: 'add', user_id: t.users.cordelia.id, user: userBrief('cordelia'), message_id: id, emoji_name: 'astonished', emoji_code: '1f632', reaction_type: 'unicode_emoji' },
        userIds: [t.users.iago.id, t.users.hamlet.id, t.users.cordelia.id].sort((a, b) => a - b),
      },
    ]);
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'zulip' }, 'hamlet'));
    const m = await getMessage(t, 'iago', id);
    expect(m.reactions).toEqual([
      { emoji_name: 'astonished', emoji_code: '1f632', reaction_type: 'unicode_emoji', user_id: t.users.cordelia.id, user: { email: 'cordelia@zulip.com', id: t.users.cordelia.id, full_name: "Cordelia, Lear's daughter" } },
      { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji', user_id: t.users.hamlet.id, user: { email: 'hamlet@zulip.com', id: t.users.hamlet.id, full_name: 'King Hamlet' } },
    ]);
  });

  it('votes on an existing reaction by code, keeping its name', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'vote');
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'astonished', emoji_code: '1f632', reaction_type: 'unicode_emoji' }, 'cordelia'));
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'whatever name', emoji_code: '1f632', reaction_type: 'unicode_emoji' }, 'iago'));
    expect((await getMessage(t, 'hamlet', id)).reactions.map((r: any) => [r.user_id, r.emoji_name])).toEqual([
      [t.users.cordelia.id, 'astonished'],
      [t.users.iago.id, 'astonished'],
    ]);
  });

  it('refuses with Zulip\'s errors', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'errors');
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'astonished' }, 'cordelia'));
    await expectRefused(() => t.post(`/messages/${id}/reactions`, { emoji_name: 'astonished' }, 'cordelia'), 'REACTION_ALREADY_EXISTS', 'Reaction already exists.');
    await expectRefused(() => t.post(`/messages/${id}/reactions`, { emoji_name: 'no_such_emoji_here' }, 'cordelia'), 'BAD_REQUEST', "Emoji 'no_such_emoji_here' does not exist");
    await expectRefused(() => t.post(`/messages/${id}/reactions`, { emoji_name: 'smile', emoji_code: 'ffff9', reaction_type: 'unicode_emoji' }, 'cordelia'), 'BAD_REQUEST', 'Invalid emoji code.');
    // On a message nobody reacted to, so this is no vote: the name must match the code.
    const fresh = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'fresh');
    await expectRefused(() => t.post(`/messages/${fresh}/reactions`, { emoji_name: 'smile', emoji_code: '1f632', reaction_type: 'unicode_emoji' }, 'cordelia'), 'BAD_REQUEST', 'Invalid emoji name.');
    await expectRefused(() => t.post(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip2', reaction_type: 'zulip_extra_emoji' }, 'cordelia'), 'BAD_REQUEST', 'Invalid emoji code.');
    await expectRefused(() => t.post(`/messages/${id}/reactions`, { emoji_name: 'party', emoji_code: '42', reaction_type: 'realm_emoji' }, 'cordelia'), 'BAD_REQUEST', 'Invalid custom emoji.');
    await expectRefused(() => t.post(`/messages/${id}/reactions`, { emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'sticker' }, 'cordelia'), 'BAD_REQUEST', 'Invalid emoji type.');
    await expectRefused(() => t.post(`/messages/${id}/reactions`, {}, 'cordelia'), 'REQUEST_VARIABLE_MISSING', "Missing 'emoji_name' argument", { var_name: 'emoji_name' });
  });

  it('never on messages the caller cannot see', async () => {
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'private');
    await expectRefused(() => t.post(`/messages/${dm}/reactions`, { emoji_name: 'smile' }, 'iago'), 'BAD_REQUEST', 'Invalid message(s)');
    await expectRefused(() => t.post('/messages/999999/reactions', { emoji_name: 'smile' }, 'iago'), 'BAD_REQUEST', 'Invalid message(s)');
    const secret = await createChannel(t, 'secret', ['iago'], { invite_only: true });
    const s = await sendChannelMessage(t, 'iago', secret, 'x', 'hidden');
    await expectRefused(() => t.post(`/messages/${s}/reactions`, { emoji_name: 'smile' }, 'hamlet'), 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('reacting to public history one never received creates a historical row', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'history');
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'smile' }, 'othello'));
    const [m] = await newestMessages(t, 'othello', [], 1);
    expect(m.id).toBe(id);
    expect(m.flags).toEqual(['read', 'historical']);
  });
});

describe('custom emoji reactions', () => {
  it('react by name (realm emoji win over Unicode names), by id, and refuse deactivated or mismatched ones', async () => {
    const png = await pngImage(64, 64);
    expectSuccess(await multipartRequest(t, 'POST', '/realm/emoji/green_tick', [{ field: 'f1', filename: 'g.png', contentType: 'image/png', data: png }], {}, 'hamlet'));
    const emoji = expectSuccess(await t.get('/realm/emoji', {}, 'hamlet')).emoji;
    const [id] = Object.keys(emoji);
    const m = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'custom');
    expectSuccess(await t.post(`/messages/${m}/reactions`, { emoji_name: 'green_tick' }, 'cordelia'));
    expect((await getMessage(t, 'hamlet', m)).reactions.map((r: any) => [r.emoji_name, r.emoji_code, r.reaction_type])).toEqual([['green_tick', id, 'realm_emoji']]);
    const fresh = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'custom 2');
    await expectRefused(() => t.post(`/messages/${fresh}/reactions`, { emoji_name: 'other', emoji_code: id, reaction_type: 'realm_emoji' }, 'cordelia'), 'BAD_REQUEST', 'Invalid custom emoji name.');
    expectSuccess(await t.delete('/realm/emoji/green_tick', {}, 'iago'));
    await expectRefused(() => t.post(`/messages/${fresh}/reactions`, { emoji_name: 'green_tick', emoji_code: id, reaction_type: 'realm_emoji' }, 'cordelia'), 'BAD_REQUEST', 'This custom emoji has been deactivated.');
    await expectRefused(() => t.post(`/messages/${fresh}/reactions`, { emoji_name: 'green_tick' }, 'cordelia'), 'BAD_REQUEST', "Emoji 'green_tick' does not exist");
    // Removing still works after deactivation.
    expectSuccess(await t.delete(`/messages/${m}/reactions`, { emoji_code: id, reaction_type: 'realm_emoji' }, 'cordelia'));
  });
});

describe('DELETE /messages/{id}/reactions', () => {
  it('removes by name or by code; the event carries the stored name', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'remove');
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'astonished' }, 'hamlet'));
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'smile' }, 'hamlet'));
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.delete(`/messages/${id}/reactions`, { emoji_code: '1f632' }, 'hamlet')));
    expect(deliveries[0]!.event).toEqual({
      type: 'reaction',
      op: 'remove',
      user_id: t.users.hamlet.id,
      user: userBrief('hamlet'),
      message_id: id,
      emoji_name: 'astonished',
      emoji_code: '1f632',
      reaction_type: 'unicode_emoji',
    });
    expectSuccess(await t.delete(`/messages/${id}/reactions`, { emoji_name: 'smile' }, 'hamlet'));
    expect((await getMessage(t, 'hamlet', id)).reactions).toEqual([]);
  });

  it('refuses with Zulip\'s errors', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'remove errors');
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'zulip' }, 'hamlet'));
    await expectRefused(() => t.delete(`/messages/${id}/reactions`, { emoji_name: 'smile' }, 'hamlet'), 'REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.");
    await expectRefused(() => t.delete(`/messages/${id}/reactions`, {}, 'hamlet'), 'BAD_REQUEST', 'At least one of the following arguments must be present: emoji_name, emoji_code');
    await expectRefused(() => t.delete(`/messages/${id}/reactions`, { emoji_name: 'not_an_emoji_at_all' }, 'hamlet'), 'BAD_REQUEST', "Emoji 'not_an_emoji_at_all' does not exist");
    // reaction_type defaults to unicode_emoji, so the extra emoji needs it named.
    await expectRefused(() => t.delete(`/messages/${id}/reactions`, { emoji_code: 'zulip' }, 'hamlet'), 'REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.");
    expectSuccess(await t.delete(`/messages/${id}/reactions`, { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }, 'hamlet'));
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'private');
    await expectRefused(() => t.delete(`/messages/${dm}/reactions`, { emoji_name: 'smile' }, 'iago'), 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('zulip-js puts DELETE parameters in the query string', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'r', 'query');
    expectSuccess(await t.post(`/messages/${id}/reactions`, { emoji_name: 'smile' }, 'hamlet'));
    const res = await t.request('DELETE', `/messages/${id}/reactions?emoji_name=smile&message_id=${id}`, {}, 'hamlet');
    expect(expectSuccess(res).ignored_parameters_unsupported).toEqual(['message_id']);
    expect(denmark).toBeGreaterThan(0);
  });
});

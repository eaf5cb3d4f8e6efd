import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// zulip-js ships no types; it is the real npm client Zulip users run.
// @ts-expect-error no declaration file
import zulipInit from 'zulip-js';
import { createChannel } from '../support/messages.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

/**
 * A full session of the real zulip-js client against Parley (issue 10):
 * one user registers a queue and polls it the way zulip-js does while
 * another sends to a channel and a DM, edits, reacts, types, reports
 * presence; custom emoji and a settings change arrive too. Every event
 * must arrive exactly once, in order, with the fields clients read.
 */

let t: TestServer;
let site: string;
beforeAll(async () => {
  t = await startTestServer();
  site = await t.listen();
  await createChannel(t, 'Verona', ['hamlet', 'cordelia']);
});
afterAll(async () => t.close());

const client = (name: 'hamlet' | 'cordelia' | 'iago') => zulipInit({ username: t.users[name].email, apiKey: t.users[name].apiKey, realm: site });

describe('zulip-js: a whole session', () => {
  it('register, send (channel and DM), edit, react, type, settings, presence, custom emoji: each event exactly once', async () => {
    const hamlet = await client('hamlet');
    const cordelia = await client('cordelia');
    const queue = await cordelia.queues.register({
      event_types: ['message', 'update_message', 'reaction', 'typing', 'user_settings', 'presence', 'realm_emoji'],
    });
    expect(queue).toMatchObject({ result: 'success', queue_id: expect.any(String), last_event_id: -1 });

    const received: Record<string, any>[] = [];
    let last = queue.last_event_id as number;
    const poll = async (): Promise<void> => {
      const res = await cordelia.events.retrieve({ queue_id: queue.queue_id, last_event_id: last, dont_block: true });
      expect(res.result).toBe('success');
      for (const e of res.events) {
        received.push(e);
        last = Math.max(last, e.id);
      }
    };

    const channelMsg = await hamlet.messages.send({ type: 'stream', to: 'Verona', topic: 'balcony', content: 'But soft' });
    expect(channelMsg).toMatchObject({ result: 'success', id: expect.any(Number) });
    const dm = await hamlet.messages.send({ type: 'private', to: [t.users.cordelia.id], content: 'a word' });
    expect(dm).toMatchObject({ result: 'success', id: expect.any(Number) });
    expect(await hamlet.messages.update({ message_id: channelMsg.id, content: 'But *soft*' })).toMatchObject({ result: 'success' });
    expect(await hamlet.reactions.add({ message_id: channelMsg.id, emoji_name: 'heart' })).toMatchObject({ result: 'success' });
    expect(await hamlet.typing.send({ to: [t.users.cordelia.id], op: 'start' })).toEqual({ result: 'success', msg: '' });
    expect(await cordelia.callEndpoint('/settings', 'PATCH', { twenty_four_hour_time: true })).toMatchObject({ result: 'success' });
    const presence = await hamlet.callEndpoint('/users/me/presence', 'POST', { status: 'active', new_user_input: 'true' });
    expect(presence).toMatchObject({ result: 'success', presences: { [t.users.hamlet.email]: { aggregated: { status: 'active' } } } });
    expect((await multipartRequest(t, 'POST', '/realm/emoji/verona_rose', [{ filename: 'rose.png', contentType: 'image/png', data: await pngImage(32, 32) }], {}, 'iago')).body).toEqual({ result: 'success', msg: '' });
    const emoji = await cordelia.emojis.retrieve();
    expect(Object.values(emoji.emoji).map((e: any) => e.name)).toEqual(['verona_rose']);

    await poll();
    await poll();
    expect(received.map((e) => e.type)).toEqual(['message', 'message', 'update_message', 'reaction', 'typing', 'user_settings', 'presence', 'realm_emoji']);
    expect(new Set(received.map((e) => e.id)).size).toBe(received.length);
    const [m1, m2, edit, reaction, typing, setting, pres, realmEmoji] = received;
    expect(m1).toMatchObject({ message: { id: channelMsg.id, type: 'stream', display_recipient: 'Verona', subject: 'balcony', sender_id: t.users.hamlet.id }, flags: [] });
    expect(m2).toMatchObject({ message: { id: dm.id, type: 'private', content: 'a word' } });
    expect(edit).toMatchObject({ message_id: channelMsg.id, content: 'But *soft*', rendered_content: '<p>But <em>soft</em></p>' });
    expect(reaction).toMatchObject({ op: 'add', message_id: channelMsg.id, emoji_name: 'heart', emoji_code: '2764', reaction_type: 'unicode_emoji', user_id: t.users.hamlet.id });
    expect(typing).toMatchObject({ op: 'start', sender: { user_id: t.users.hamlet.id, email: t.users.hamlet.email } });
    expect(setting).toMatchObject({ op: 'update', property: 'twenty_four_hour_time', value: true });
    expect(pres).toMatchObject({ user_id: t.users.hamlet.id, email: t.users.hamlet.email, presence: { website: { status: 'active', client: 'website' } } });
    expect(realmEmoji).toMatchObject({ op: 'update', realm_emoji: emoji.emoji });

    // Nothing more, nothing twice.
    await poll();
    expect(received).toHaveLength(8);
    expect(await cordelia.queues.deregister({ queue_id: queue.queue_id })).toEqual({ result: 'success', msg: '' });
  });

  it('the message client is the name in the User-Agent zulip-js sends (node-fetch\'s: zulip-js sets none)', async () => {
    const hamlet = await client('hamlet');
    const sent = await hamlet.messages.send({ type: 'stream', to: 'Verona', topic: 'client', content: 'which client?' });
    const one = await hamlet.messages.getById({ message_id: sent.id });
    expect(one.message.client).toBe('node-fetch');
  });

  it('custom emoji in use: a reaction by name is realm_emoji with the emoji id as code; :name: renders the image', async () => {
    const hamlet = await client('hamlet');
    const emoji = Object.values((await hamlet.emojis.retrieve()).emoji).find((e: any) => e.name === 'verona_rose') as any;
    const sent = await hamlet.messages.send({ type: 'stream', to: 'Verona', topic: 'roses', content: 'a :verona_rose: by any other name' });
    expect(await hamlet.reactions.add({ message_id: sent.id, emoji_name: 'verona_rose' })).toMatchObject({ result: 'success' });
    const one = await hamlet.messages.getById({ message_id: sent.id });
    expect(one.message.reactions).toEqual([expect.objectContaining({ emoji_name: 'verona_rose', emoji_code: emoji.id, reaction_type: 'realm_emoji', user_id: t.users.hamlet.id })]);
    const html = (await hamlet.messages.retrieve({ anchor: sent.id, num_before: 0, num_after: 0, apply_markdown: true })).messages[0].content;
    expect(html).toContain(`<img alt=":verona_rose:" class="emoji" src="${emoji.source_url}" title="verona rose">`);
  });
});

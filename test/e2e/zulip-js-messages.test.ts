import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
// zulip-js ships no types; it is the real npm client Zulip users run.
// @ts-expect-error no declaration file
import zulipInit from 'zulip-js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createChannel } from '../support/messages.js';

// callOnEachEvent loops forever; swapping the library's fetch for one that never
// settles when the test is done stops it quietly (as in zulip-js-events.test.ts).
const zulipHelper = createRequire(import.meta.url)('zulip-js/lib/helper') as { fetch: (...a: unknown[]) => Promise<unknown> };

let t: TestServer;
let site: string;
beforeAll(async () => {
  t = await startTestServer();
  site = await t.listen();
  await createChannel(t, 'Denmark', ['hamlet', 'cordelia']);
});
afterAll(async () => {
  zulipHelper.fetch = () => new Promise(() => {});
  await t.close();
});

async function until<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('zulip-js: messages end to end', () => {
  it('one client sends a channel message and a DM, then edits; another, long-polling, gets each event once and sees the history', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const sender = await zulipInit({ username: t.users.hamlet.email, apiKey: t.users.hamlet.apiKey, realm: site });
    const reader = await zulipInit({ username: t.users.cordelia.email, apiKey: t.users.cordelia.apiKey, realm: site });
    const received: Record<string, any>[] = [];
    const parkedBefore = t.app.ctx.queues.parkedPolls;
    void reader.callOnEachEvent((event: Record<string, any>) => received.push(event), ['message', 'update_message']);
    await until(() => (t.app.ctx.queues.parkedPolls > parkedBefore ? true : undefined));

    const channelMsg = await sender.messages.send({ type: 'stream', to: 'Denmark', topic: 'castle', content: 'To be, or not to be' });
    expect(channelMsg).toMatchObject({ result: 'success', msg: '', id: expect.any(Number) });
    const dm = await sender.messages.send({ type: 'private', to: [t.users.cordelia.id], content: 'a word in private' });
    expect(dm).toMatchObject({ result: 'success', id: expect.any(Number) });

    const messages = await until(() => {
      const got = received.filter((e) => e.type === 'message');
      return got.length >= 2 ? got : undefined;
    });
    expect(messages.map((e) => e.message.id)).toEqual([channelMsg.id, dm.id]);
    expect(messages[0]).toMatchObject({ type: 'message', flags: [], message: { type: 'stream', display_recipient: 'Denmark', subject: 'castle', content: 'To be, or not to be' } });
    expect(messages[1]).toMatchObject({ type: 'message', message: { type: 'private', content: 'a word in private' } });

    const edit = await sender.messages.update({ message_id: channelMsg.id, content: 'To be, or **not** to be' });
    expect(edit).toEqual({ result: 'success', msg: '', detached_uploads: [], ignored_parameters_unsupported: ['message_id'] });
    const update = await until(() => received.find((e) => e.type === 'update_message'));
    expect(update).toMatchObject({ message_id: channelMsg.id, content: 'To be, or **not** to be', rendered_content: '<p>To be, or <strong>not</strong> to be</p>', message_ids: [channelMsg.id] });

    const history = await reader.messages.getHistoryById({ message_id: channelMsg.id });
    expect(history.result).toBe('success');
    expect(history.message_history.map((h: any) => h.content)).toEqual(['To be, or not to be', 'To be, or **not** to be']);
    const fetched = await reader.messages.retrieve({ anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: 'Denmark' }] });
    expect(fetched.messages.map((m: any) => m.id)).toEqual([channelMsg.id]);
    expect(fetched.messages[0].last_edit_timestamp).toEqual(expect.any(Number));

    // Each event arrived exactly once.
    await new Promise((r) => setTimeout(r, 200));
    expect(received.filter((e) => e.type === 'message')).toHaveLength(2);
    expect(received.filter((e) => e.type === 'update_message')).toHaveLength(1);
    expect(new Set(received.map((e) => e.id)).size).toBe(received.length);
  });

  it('reactions, flags, single fetch and deletion through zulip-js', async () => {
    const client = await zulipInit({ username: t.users.hamlet.email, apiKey: t.users.hamlet.apiKey, realm: site });
    const sent = await client.messages.send({ type: 'stream', to: 'Denmark', topic: 'misc', content: 'react' });
    expect(await client.reactions.add({ message_id: sent.id, emoji_name: 'octopus' })).toMatchObject({ result: 'success' });
    expect(await client.messages.flags.add({ messages: [sent.id], flag: 'starred' })).toMatchObject({ result: 'success', messages: [sent.id] });
    const one = await client.messages.getById({ message_id: sent.id });
    expect(one.message.flags).toEqual(['starred']);
    expect(one.message.reactions.map((r: any) => r.emoji_name)).toEqual(['octopus']);
    expect(await client.reactions.remove({ message_id: sent.id, emoji_name: 'octopus' })).toMatchObject({ result: 'success' });
    expect(await client.messages.deleteById({ message_id: sent.id })).toMatchObject({ result: 'success' });
    expect(await client.messages.getById({ message_id: sent.id })).toEqual({ result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
  });
});

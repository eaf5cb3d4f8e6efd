import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectStateConsistent, getEvents, registerQueue, withoutIds } from '../support/events.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { applyDeliveries, registerContext } from '../support/module-consistency.js';
import { messagesModule } from '../../src/state/messages.js';

let t: TestServer;
let denmark: number;
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago', 'othello']);
  await createChannel(t, 'Verona', ['hamlet', 'cordelia']);
});
afterAll(async () => t.close());

const STATE = {
  event_types: ['message', 'update_message_flags', 'update_message', 'delete_message', 'subscription'],
  fetch_event_types: ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'],
};
const WITH_EMPTY_TOPIC = { ...STATE, client_capabilities: { notification_settings_null: true, empty_topic_name: true } };
// Subscription events change other modules' keys too; only the message keys are compared here.
const OTHER_KEYS = ['subscriptions', 'unsubscribed', 'never_subscribed'];

describe('/register message state: stale state + events == fresh state', () => {
  it('unread_msgs, max_message_id, recent_private_conversations after sends', async () => {
    await expectStateConsistent(t, 'cordelia', async () => {
      await sendChannelMessage(t, 'hamlet', 'Denmark', 'castle', 'hello @**Cordelia, Lear\'s daughter**');
      await sendChannelMessage(t, 'hamlet', 'Denmark', 'Castle', 'same topic, other case');
      await sendChannelMessage(t, 'hamlet', 'Denmark', '', 'empty topic');
      await sendDirectMessage(t, 'hamlet', ['cordelia'], 'dm');
      await sendDirectMessage(t, 'hamlet', ['cordelia', 'othello'], 'group');
      await sendDirectMessage(t, 'cordelia', ['cordelia'], 'self', { read_by_sender: false });
      await sendChannelMessage(t, 'cordelia', 'Verona', 'mine', 'read by me', { read_by_sender: true });
    }, STATE);
    const state = expectSuccess(await t.post('/register', STATE, 'cordelia'));
    expect(state.unread_msgs.count).toBe(6);
    expect(state.unread_msgs.mentions).toHaveLength(1);
    expect(state.unread_msgs.streams.map((s: any) => [s.stream_id, s.topic, s.unread_message_ids.length])).toEqual([
      [denmark, 'castle', 2],
      [denmark, 'general chat', 1],
    ]);
    expect(state.unread_msgs.pms.map((p: any) => [p.other_user_id, p.sender_id])).toEqual([
      [t.users.hamlet.id, t.users.hamlet.id],
      [t.users.cordelia.id, t.users.cordelia.id],
    ].sort((a, b) => a[0]! - b[0]!));
    expect(state.unread_msgs.huddles[0].user_ids_string).toBe([t.users.hamlet.id, t.users.cordelia.id, t.users.othello.id].sort((a, b) => a - b).join(','));
    expect(state.recent_private_conversations.map((c: any) => c.user_ids)).toEqual([[], [t.users.hamlet.id, t.users.othello.id].sort((a, b) => a - b), [t.users.hamlet.id]]);
    // The capability keeps the empty topic as "".
    await expectStateConsistent(t, 'cordelia', () => sendChannelMessage(t, 'hamlet', 'Denmark', '', 'another empty'), WITH_EMPTY_TOPIC);
  });

  it('marking read and unread, starring', async () => {
    const a = await sendChannelMessage(t, 'hamlet', 'Denmark', 'flags', 'a @**all**');
    const b = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'b');
    await expectStateConsistent(t, 'cordelia', () => t.post('/messages/flags', { messages: [a, b], op: 'add', flag: 'read' }, 'cordelia'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.post('/messages/flags', { messages: [a, b], op: 'remove', flag: 'read' }, 'cordelia'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.post('/messages/flags', { messages: [a], op: 'add', flag: 'starred' }, 'cordelia'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.post('/messages/flags', { messages: [a], op: 'remove', flag: 'starred' }, 'cordelia'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.post('/mark_topic_as_read', { stream_id: denmark, topic_name: 'flags' }, 'cordelia'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.post('/mark_all_as_read', {}, 'cordelia'), STATE);
  });

  it('moves and deletions', async () => {
    const a = await sendChannelMessage(t, 'hamlet', 'Denmark', 'to move', 'a');
    await sendChannelMessage(t, 'hamlet', 'Denmark', 'to move', 'b');
    await expectStateConsistent(t, 'cordelia', () => t.patch(`/messages/${a}`, { topic: 'moved', propagate_mode: 'change_all' }, 'hamlet'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.patch(`/messages/${a}`, { topic: '', propagate_mode: 'change_all' }, 'hamlet'), STATE);
    // Deleting the newest message: a fresh max_message_id goes down, a stale one stays (Zulip
    // recomputes it with a query while applying; ours is pure). Its only use, a floor for
    // clients' local ids, is unaffected, so it is left out of these comparisons.
    const deleted = { ignore: ['max_message_id'] };
    await expectStateConsistent(t, 'cordelia', () => t.delete(`/messages/${a}`, {}, 'hamlet'), STATE, deleted);
    const starred = await sendChannelMessage(t, 'hamlet', 'Denmark', 'star', 'to star');
    expectSuccess(await t.post('/messages/flags', { messages: [starred], op: 'add', flag: 'starred' }, 'cordelia'));
    await expectStateConsistent(t, 'cordelia', () => t.delete(`/messages/${starred}`, {}, 'hamlet'), STATE, deleted);
  });

  it('content edits that add or remove a mention', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'edit', 'plain');
    await expectStateConsistent(t, 'cordelia', () => t.patch(`/messages/${id}`, { content: 'now @**Cordelia, Lear\'s daughter**' }, 'hamlet'), STATE);
    await expectStateConsistent(t, 'cordelia', () => t.patch(`/messages/${id}`, { content: 'plain again' }, 'hamlet'), STATE);
  });

  it('unsubscribing drops the channel\'s unread messages', async () => {
    await sendChannelMessage(t, 'hamlet', 'Verona', 'bye', 'unread in Verona');
    await expectStateConsistent(t, 'cordelia', () => t.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['Verona']) }, 'cordelia'), STATE, { ignore: OTHER_KEYS });
  });
});

describe('message event delivery', () => {
  it('narrowed queues get only matching messages; all_public_streams queues see public channels', async () => {
    const q = await registerQueue(t, 'iago', { event_types: ['message'], narrow: JSON.stringify([['stream', 'Denmark']]) });
    const watcher = await registerQueue(t, 'owner', { event_types: ['message'], all_public_streams: true });
    const inDenmark = await sendChannelMessage(t, 'hamlet', 'Denmark', 'n', 'in Denmark');
    await sendDirectMessage(t, 'hamlet', ['iago'], 'a DM');
    expect((await getEvents(t, 'iago', q.queue_id, q.last_event_id)).map((e: any) => e.message.id)).toEqual([inDenmark]);
    const seen = withoutIds(await getEvents(t, 'owner', watcher.queue_id, watcher.last_event_id));
    expect(seen.map((e) => [e.message.id, e.flags])).toEqual([[inDenmark, []]]);
  });

  it('the empty topic is named for clients without empty_topic_name', async () => {
    const plain = await registerQueue(t, 'cordelia', { event_types: ['message', 'update_message'] });
    const modern = await registerQueue(t, 'cordelia', { event_types: ['message', 'update_message'], client_capabilities: { notification_settings_null: true, empty_topic_name: true } });
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', '', 'x');
    expectSuccess(await t.patch(`/messages/${id}`, { topic: 'named' }, 'hamlet'));
    const [m1, u1] = withoutIds(await getEvents(t, 'cordelia', plain.queue_id, plain.last_event_id));
    const [m2, u2] = withoutIds(await getEvents(t, 'cordelia', modern.queue_id, modern.last_event_id));
    expect([m1.message.subject, u1.orig_subject, u1.subject]).toEqual(['general chat', 'general chat', 'named']);
    expect([m2.message.subject, u2.orig_subject, u2.subject]).toEqual(['', '', 'named']);
  });
});

describe('unread_msgs and muting (Zulip: muted channels and topics stay listed, out of count; wildcard mentions there out of mentions)', () => {
  const MUTE_STATE = {
    event_types: [...STATE.event_types, 'user_topic'],
    fetch_event_types: [...STATE.fetch_event_types, 'subscription', 'user_topic'],
  };
  const IGNORE = { ignore: [...OTHER_KEYS, 'user_topics'] };
  const fresh = async () => expectSuccess(await t.post('/register', MUTE_STATE, 'othello')).unread_msgs;
  const ids = (u: any) => ({ count: u.count, mentions: u.mentions, listed: u.streams.flatMap((s: any) => s.unread_message_ids).length + u.pms.length });

  it('channel and topic mutes change count and mentions; the register+events states follow', async () => {
    const loud = await createChannel(t, 'Loud', ['hamlet', 'othello']);
    const calm = await createChannel(t, 'Calm', ['hamlet', 'othello']);
    expectSuccess(await t.post('/mark_all_as_read', {}, 'othello'));
    let m1 = 0, m2 = 0, m3 = 0, m4 = 0, dm = 0;
    await expectStateConsistent(t, 'othello', async () => {
      m1 = await sendChannelMessage(t, 'hamlet', loud, 't1', 'hi @**all**');
      m2 = await sendChannelMessage(t, 'hamlet', loud, 't2', 'hi @**Othello, the Moor of Venice**');
      m3 = await sendChannelMessage(t, 'hamlet', calm, 't3', 'plain');
      m4 = await sendChannelMessage(t, 'hamlet', calm, 't4', 'hi again');
      dm = await sendDirectMessage(t, 'hamlet', ['othello'], 'dm');
    }, MUTE_STATE, IGNORE);
    expect(ids(await fresh())).toEqual({ count: 5, mentions: [m1, m2], listed: 5 });
    // Muting the channel: its messages stay listed but leave count. (Wildcard mentions in muted places: next test.)
    await expectStateConsistent(t, 'othello', () => t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: calm, property: 'is_muted', value: true }] }, 'othello'), MUTE_STATE, IGNORE);
    expect(ids(await fresh())).toEqual({ count: 3, mentions: [m1, m2], listed: 5 });
    // An unmuted (or followed) topic inside the muted channel counts again.
    await expectStateConsistent(t, 'othello', () => t.post('/user_topics', { stream_id: calm, topic: 't4', visibility_policy: 2 }, 'othello'), MUTE_STATE, IGNORE);
    expect(ids(await fresh())).toEqual({ count: 4, mentions: [m1, m2], listed: 5 });
    // A muted topic in an unmuted channel: out of count; a direct mention there stays in mentions.
    await expectStateConsistent(t, 'othello', () => t.post('/user_topics', { stream_id: loud, topic: 't2', visibility_policy: 1 }, 'othello'), MUTE_STATE, IGNORE);
    expect(ids(await fresh())).toEqual({ count: 3, mentions: [m1, m2], listed: 5 });
    // New messages into muted places arrive listed but uncounted.
    let m5 = 0;
    await expectStateConsistent(t, 'othello', async () => {
      m5 = await sendChannelMessage(t, 'hamlet', loud, 't2', 'more');
      await sendChannelMessage(t, 'hamlet', calm, 't3', 'more plain');
    }, MUTE_STATE, IGNORE);
    const u = await fresh();
    expect(ids(u)).toEqual({ count: 3, mentions: [m1, m2], listed: 7 });
    expect(u.streams.find((s: any) => s.stream_id === loud && s.topic === 't2').unread_message_ids).toEqual([m2, m5]);
    // Back to normal: everything counts.
    await expectStateConsistent(t, 'othello', () => t.post('/user_topics', { stream_id: loud, topic: 't2', visibility_policy: 0 }, 'othello'), MUTE_STATE, IGNORE);
    await expectStateConsistent(t, 'othello', () => t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: calm, property: 'is_muted', value: false }] }, 'othello'), MUTE_STATE, IGNORE);
    expect(ids(await fresh())).toEqual({ count: 7, mentions: [m1, m2], listed: 7 });
    expect(dm).toBeGreaterThan(m4);
    expect(m3).toBeGreaterThan(m2);
  });

  it('wildcard mentions in muted channels and topics leave mentions (the in-memory state /register applies raced events to)', async () => {
    const ch = await createChannel(t, 'Later muted', ['hamlet', 'othello']);
    expectSuccess(await t.post('/mark_all_as_read', {}, 'othello'));
    const w = await sendChannelMessage(t, 'hamlet', ch, 'x', 'hey @**all**');
    const d = await sendChannelMessage(t, 'hamlet', ch, 'x', 'hey @**Othello, the Moor of Venice**');
    // A JSON state cannot tell a wildcard mention from a direct one; the state /register builds in memory can.
    const ctx = { ...(await registerContext(t, 'othello')), want: () => true };
    const check = async (fn: () => Promise<unknown>) => {
      const state = await messagesModule.fetch(ctx);
      applyDeliveries(messagesModule, state, await t.captureEvents(fn), ctx);
      expect(state).toEqual(await messagesModule.fetch(ctx));
      return state.unread_msgs as any;
    };
    expect(ids(await check(() => t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ch, property: 'is_muted', value: true }] }, 'othello')))).toEqual({ count: 0, mentions: [d], listed: 2 });
    expect(ids(await fresh())).toEqual({ count: 0, mentions: [d], listed: 2 });
    expect(ids(await check(() => t.post('/user_topics', { stream_id: ch, topic: 'x', visibility_policy: 3 }, 'othello')))).toEqual({ count: 2, mentions: [w, d], listed: 2 });
    let y = 0;
    const later = await check(async () => (y = await sendChannelMessage(t, 'hamlet', ch, 'y', 'and @**all** in another topic')));
    expect(ids(later)).toEqual({ count: 2, mentions: [w, d], listed: 3 });
    expect(ids(await check(() => t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ch, property: 'is_muted', value: false }] }, 'othello')))).toEqual({ count: 3, mentions: [w, d, y], listed: 3 });
    expect(ids(await check(() => t.post('/user_topics', { stream_id: ch, topic: 'y', visibility_policy: 1 }, 'othello')))).toEqual({ count: 2, mentions: [w, d], listed: 3 });
  });
});

import { describe, expect, it } from 'vitest';
import { accepts, shapeFor, stripHints, type QueueDescriptor } from '../../src/events/delivery.js';
import { checkNarrowForEvents, messageMatchesNarrow } from '../../src/events/narrow.js';
import { NO_CAPABILITIES } from '../../src/state/register.js';

const channelMsg = { type: 'stream', display_recipient: 'Denmark', subject: 'Lunch plans today', sender_email: 'Iago@zulip.com' };
const dm = { type: 'private', display_recipient: [], subject: '', sender_email: 'hamlet@zulip.com' };

describe('event narrows (Zulip narrow_predicate)', () => {
  it('channel (and its legacy name stream) and sender compare case-insensitively', () => {
    expect(messageMatchesNarrow([['stream', 'denmark']], channelMsg, [])).toBe(true);
    expect(messageMatchesNarrow([['channel', 'Verona']], channelMsg, [])).toBe(false);
    expect(messageMatchesNarrow([['channel', 'Denmark']], dm, [])).toBe(false);
    expect(messageMatchesNarrow([['sender', 'iago@zulip.com']], channelMsg, [])).toBe(true);
  });

  it('topic matches the whole topic or one of its words; exact-topic only the whole, case-sensitively', () => {
    expect(messageMatchesNarrow([['topic', 'lunch plans today']], channelMsg, [])).toBe(true);
    expect(messageMatchesNarrow([['topic', 'PLANS']], channelMsg, [])).toBe(true);
    expect(messageMatchesNarrow([['topic', 'plan']], channelMsg, [])).toBe(false);
    expect(messageMatchesNarrow([['exact-topic', 'Lunch plans today']], channelMsg, [])).toBe(true);
    expect(messageMatchesNarrow([['exact-topic', 'lunch plans today']], channelMsg, [])).toBe(false);
  });

  it('is: dm/private, starred, unread, mentioned/alerted, resolved; every term must hold', () => {
    expect(messageMatchesNarrow([['is', 'dm']], dm, [])).toBe(true);
    expect(messageMatchesNarrow([['is', 'private']], channelMsg, [])).toBe(false);
    expect(messageMatchesNarrow([['is', 'starred']], channelMsg, ['starred'])).toBe(true);
    expect(messageMatchesNarrow([['is', 'unread']], channelMsg, ['read'])).toBe(false);
    expect(messageMatchesNarrow([['is', 'alerted']], channelMsg, ['mentioned'])).toBe(true);
    expect(messageMatchesNarrow([['is', 'resolved']], { ...channelMsg, subject: '✔ done' }, [])).toBe(true);
    expect(messageMatchesNarrow([['stream', 'Denmark'], ['is', 'starred']], channelMsg, [])).toBe(false);
    expect(messageMatchesNarrow([], dm, [])).toBe(true);
  });

  it('refuses operators an event queue cannot filter by', () => {
    expect(() => checkNarrowForEvents([['search', 'x']])).toThrow('Operator search not supported.');
    expect(() => checkNarrowForEvents([['is', 'followed']])).toThrow('Operand followed not supported.');
    expect(() => checkNarrowForEvents([['stream', 'x'], ['is', 'mentioned']])).not.toThrow();
  });
});

const queue = (over: Partial<QueueDescriptor> = {}): QueueDescriptor => ({
  id: 'q',
  userId: 1,
  realmId: 1,
  eventTypes: null,
  narrow: [],
  capabilities: NO_CAPABILITIES,
  applyMarkdown: false,
  clientGravatar: false,
  slimPresence: false,
  allPublicStreams: false,
  includeSubscribers: false,
  clientName: 'test',
  timeoutSecs: 600,
  ...over,
});
const shape = (event: Record<string, unknown>, q: QueueDescriptor) =>
  shapeFor({ event: event as never, clean: stripHints(event as never), queue: q, userId: 1, memo: new Map() });

describe('per-queue acceptance and shaping', () => {
  it('event types; muted_topics is suppressed for clients that ask for user_topic', () => {
    expect(accepts(queue({ eventTypes: ['alert_words'] }), { type: 'realm_user' })).toBe(false);
    expect(accepts(queue({ eventTypes: ['muted_topics', 'user_topic'] }), { type: 'muted_topics' })).toBe(false);
    expect(accepts(queue({ eventTypes: ['muted_topics'] }), { type: 'muted_topics' })).toBe(true);
  });

  it('legacy settings events only without user_settings_object; channel typing only with stream_typing_notifications', () => {
    const modern = queue({ capabilities: { ...NO_CAPABILITIES, user_settings_object: true, stream_typing_notifications: true } });
    expect(accepts(queue(), { type: 'update_display_settings' })).toBe(true);
    expect(accepts(modern, { type: 'update_global_notifications' })).toBe(false);
    expect(accepts(queue(), { type: 'typing', stream_id: 3 })).toBe(false);
    expect(accepts(modern, { type: 'typing', stream_id: 3 })).toBe(true);
    expect(accepts(queue(), { type: 'typing', recipients: [] })).toBe(true);
  });

  it('user_group remove / deactivation follow include_deactivated_groups', () => {
    const keeps = queue({ capabilities: { ...NO_CAPABILITIES, include_deactivated_groups: true } });
    expect(accepts(queue(), { type: 'user_group', op: 'remove', group_id: 1 })).toBe(true);
    expect(accepts(keeps, { type: 'user_group', op: 'remove', group_id: 1 })).toBe(false);
    expect(accepts(keeps, { type: 'user_group', op: 'update', data: { deactivated: true } })).toBe(true);
    expect(accepts(queue(), { type: 'user_group', op: 'update', data: { deactivated: true } })).toBe(false);
  });

  it('hints never reach a queue; presence loses email for slim_presence clients', () => {
    expect(shape({ type: 'alert_words', alert_words: [], __secret: 1 }, queue())).toEqual([{ type: 'alert_words', alert_words: [] }]);
    const presence = { type: 'presence', user_id: 5, email: 'x@y.z', server_timestamp: 1, presence: {} };
    expect(shape(presence, queue({ slimPresence: true }))).toEqual([{ type: 'presence', user_id: 5, server_timestamp: 1, presence: {} }]);
    expect(shape(presence, queue())).toEqual([presence]);
  });

  it('realm_user add: gravatar URLs nulled only for client_gravatar clients and public addresses', () => {
    const url = 'https://secure.gravatar.com/avatar/abc?d=identicon&version=1';
    const pub = { type: 'realm_user', op: 'add', person: { user_id: 9, email: 'a@b.c', delivery_email: 'a@b.c', avatar_url: url } };
    const hidden = { type: 'realm_user', op: 'add', person: { user_id: 9, email: 'user9@b.c', delivery_email: 'a@b.c', avatar_url: url } };
    expect((shape(pub, queue({ clientGravatar: true }))[0] as any).person.avatar_url).toBeNull();
    expect((shape(pub, queue())[0] as any).person.avatar_url).toBe(url);
    expect((shape(hidden, queue({ clientGravatar: true }))[0] as any).person.avatar_url).toBe(url);
  });
});

describe('message events in a fan-out', () => {
  it('queues of the same variant whose users have the same flags share one event object; the sender\'s own queue and other flags do not', async () => {
    await import('../../src/domain/actions/message-events.js');
    const message = { id: 7, type: 'stream', subject: 'lunch', content: '<p>hi</p>', avatar_url: null };
    const event = {
      type: 'message',
      message,
      __raw_content: 'hi',
      __flags: { '1': [], '2': [], '3': ['read'], '4': ['mentioned'], '5': ['read'] },
      __local_id: '1.5',
      __sender_queue_id: 'sender-q',
      __sender_id: 3,
    };
    const memo = new Map<string, unknown>();
    const clean = stripHints(event as never);
    const one = (userId: number, over: Partial<QueueDescriptor> = {}) =>
      shapeFor({ event: event as never, clean, queue: queue({ id: `q${userId}`, userId, applyMarkdown: true, ...over }), userId, memo })[0]!;
    const [a, b, c, d, e] = [one(1), one(2), one(4), one(5), one(3, { id: 'sender-q' })];
    expect(a).toEqual({ type: 'message', message, flags: [] });
    expect(b).toBe(a);
    expect(c).toEqual({ type: 'message', message, flags: ['mentioned'] });
    expect(c).not.toBe(a);
    expect(d).toEqual({ type: 'message', message, flags: ['read'] });
    // The sender's own queue gets its local id on an object of its own.
    expect(e).toEqual({ type: 'message', message, flags: ['read'], local_message_id: '1.5' });
    expect(one(5)).toBe(d);
    // Another variant (raw Markdown) is another object, shared among its own queues.
    const raw = one(1, { id: 'r1', applyMarkdown: false });
    expect(raw).toEqual({ type: 'message', message: { ...message, content: 'hi', content_type: 'text/x-markdown' }, flags: [] });
    expect(one(2, { id: 'r2', applyMarkdown: false })).toBe(raw);
  });
});

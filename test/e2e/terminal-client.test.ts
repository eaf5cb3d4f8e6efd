import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel } from '../support/messages.js';
import { realmUrl } from '../../src/config.js';
import { basicAuth, startTestServer, type FixtureName, type TestServer } from '../support/server.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

/**
 * zulip-terminal 0.7.0 as clients.md describes it, replayed byte for byte
 * the way its Python client sends: the ZulipTerminal User-Agent, GET
 * parameters in the query string, everything else form-encoded, values
 * that are not strings JSON-encoded with Python's separators, and no
 * client_capabilities (so every legacy shape). Each step checks that every
 * key the terminal reads is there with the right type.
 */

const UA = 'ZulipTerminal/0.7.0 Linux-6.1.0-18-amd64-x86_64-with-glibc2.36';

/** json.dumps with Python's default separators. */
function pyJson(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(pyJson).join(', ') + ']';
  if (v && typeof v === 'object') return '{' + Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(', ') + '}';
  return JSON.stringify(v);
}

let t: TestServer;
let site: string;
let denmark: number;
beforeAll(async () => {
  t = await startTestServer();
  site = await t.listen();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'othello']);
});
afterAll(async () => t.close());

async function py(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, params: Record<string, unknown> = {}, who: FixtureName = 'hamlet'): Promise<any> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) form.append(k, typeof v === 'string' ? v : pyJson(v));
  const headers: Record<string, string> = { 'user-agent': UA, authorization: basicAuth(t.users[who]) };
  let url = `${site}/api/v1${path}`;
  let body: string | undefined;
  if (method === 'GET') {
    if ([...form].length) url += '?' + form.toString();
  } else {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = form.toString();
  }
  const res = await fetch(url, { method, headers, body });
  return res.json();
}

type Kind = 'number' | 'string' | 'boolean' | 'array' | 'object' | 'null';
const kind = (v: unknown): Kind | 'undefined' => (v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as Kind));

/** Every key present with one of the allowed types. */
function expectShape(obj: any, spec: Record<string, Kind | Kind[]>, where: string): void {
  for (const [k, want] of Object.entries(spec)) {
    const allowed = Array.isArray(want) ? want : [want];
    expect(allowed, `${where}.${k} is ${kind(obj?.[k])}`).toContain(kind(obj?.[k]));
  }
}

const MESSAGE_SHAPE: Record<string, Kind | Kind[]> = {
  id: 'number',
  sender_id: 'number',
  sender_full_name: 'string',
  sender_email: 'string',
  timestamp: 'number',
  type: 'string',
  content: 'string',
  is_me_message: 'boolean',
  display_recipient: ['string', 'array'],
  subject: 'string',
  reactions: 'array',
  submessages: 'array',
  topic_links: 'array',
  client: 'string',
};

const REGISTER = {
  event_types: ['message', 'update_message', 'reaction', 'submessage', 'subscription', 'typing', 'update_message_flags', 'user_settings', 'realm_emoji', 'realm_user'],
  fetch_event_types: [
    'realm', 'presence', 'subscription', 'message', 'starred_messages', 'update_message_flags', 'muted_topics', 'realm_user',
    'realm_user_groups', 'user_settings', 'realm_emoji', 'custom_profile_fields', 'zulip_version',
  ],
  client_gravatar: true,
  apply_markdown: true,
  include_subscribers: true,
};

describe('zulip-terminal startup', () => {
  let queue: any;
  let state: any;

  it('1. GET /server_settings with credentials attached, and the interactive-login keys', async () => {
    const s = await py('GET', '/server_settings');
    expect(s.result).toBe('success');
    expectShape(s, { zulip_version: 'string', zulip_feature_level: 'number', realm_uri: 'string', require_email_format_usernames: 'boolean', email_auth_enabled: 'boolean' }, 'server_settings');
    // The configured external URL (PARLEY_EXTERNAL_HOST); the test server names itself zulip.testserver.
    expect(s.realm_uri).toBe(realmUrl(t.config));
  });

  it('2. GET /messages with its exact parameters: nothing unread gives anchor 10000000000000000', async () => {
    const params = { anchor: 0, num_before: 30, num_after: 10, apply_markdown: true, use_first_unread_anchor: true, client_gravatar: true, narrow: [] };
    let body = await py('GET', '/messages', params);
    expect(body).toMatchObject({ result: 'success', anchor: 10000000000000000, found_newest: true, messages: [] });
    // With something unread, the anchor is that message (and is a list index the terminal can use).
    const sent = await py('POST', '/messages', { type: 'stream', to: 'Denmark', subject: 'castle', content: 'Who is there?' }, 'cordelia');
    expect(sent).toMatchObject({ result: 'success', id: expect.any(Number) });
    body = await py('GET', '/messages', params);
    expect(body).toMatchObject({ result: 'success', anchor: sent.id, found_newest: true });
    expect(body.messages.map((m: any) => m.id)).toEqual([sent.id]);
    expectShape(body.messages[0], { ...MESSAGE_SHAPE, stream_id: 'number', flags: 'array' }, 'message');
    expect(body.messages[0]).toMatchObject({ subject: 'castle', display_recipient: 'Denmark', stream_id: denmark, client: 'ZulipTerminal' });
  });

  it('3. POST /register with its event types and no client_capabilities: the legacy shapes', async () => {
    // Data for each key: a DM, a group DM and a mention (unread), a starred message, a muted topic, custom emoji and profile fields.
    await py('POST', '/messages', { type: 'private', to: [t.users.hamlet.id], content: 'psst' }, 'othello');
    await py('POST', '/messages', { type: 'private', to: [t.users.hamlet.id, t.users.othello.id], content: 'all three' }, 'cordelia');
    const mention = await py('POST', '/messages', { type: 'stream', to: 'Denmark', subject: 'castle', content: '@**King Hamlet** look' }, 'othello');
    expect((await py('POST', '/messages/flags', { op: 'add', flag: 'starred', messages: [mention.id] })).result).toBe('success');
    expect((await py('POST', '/user_topics', { stream_id: denmark, topic: 'noise', visibility_policy: 1 })).result).toBe('success');
    expect((await multipartRequest(t, 'POST', '/realm/emoji/elsinore', [{ filename: 'e.png', contentType: 'image/png', data: await pngImage(20, 20) }], {}, 'iago')).status).toBe(200);
    expect((await py('POST', '/realm/profile_fields', { name: 'Phone', field_type: 1 }, 'iago')).result).toBe('success');
    expect((await py('POST', '/users/me/presence', { status: 'active' }, 'cordelia')).result).toBe('success');

    state = await py('POST', '/register', REGISTER);
    queue = state;
    expect(state.result).toBe('success');
    expectShape(state, {
      user_id: 'number', email: 'string', full_name: 'string', realm_name: 'string', zulip_version: 'string', queue_id: 'string',
      last_event_id: 'number', max_message_id: 'number', realm_users: 'array', cross_realm_bots: 'array', presences: 'object',
      subscriptions: 'array', muted_topics: 'array', unread_msgs: 'object', starred_messages: 'array', realm_user_groups: 'array',
      realm_emoji: 'object', custom_profile_fields: 'array', realm_message_retention_days: ['number', 'null'],
      realm_allow_message_editing: 'boolean', realm_allow_edit_history: 'boolean', realm_message_content_edit_limit_seconds: ['number', 'null'],
      user_settings: 'object', server_presence_ping_interval_seconds: 'number', server_presence_offline_threshold_seconds: 'number',
    }, 'register');
    expect(state.user_id).toBe(t.users.hamlet.id);
    for (const u of state.realm_users) {
      expectShape(u, { user_id: 'number', full_name: 'string', email: 'string', is_bot: 'boolean', role: 'number', timezone: 'string', date_joined: 'string' }, `realm_users[${u.user_id}]`);
      // As in Zulip: profile_data for people, bot_owner_id for bots.
      expectShape(u, u.is_bot ? { bot_owner_id: ['number', 'null'] } : { profile_data: 'object' }, `realm_users[${u.user_id}]`);
    }
    expect(state.realm_users.some((u: any) => u.is_bot)).toBe(true);
    // Presence keyed by email, per client plus aggregated.
    expect(state.presences[t.users.cordelia.email]).toEqual({
      website: { client: 'website', status: 'active', timestamp: expect.any(Number), pushable: false },
      aggregated: { client: 'website', status: 'active', timestamp: expect.any(Number) },
    });
    for (const s of state.subscriptions) {
      expectShape(s, {
        stream_id: 'number', name: 'string', color: 'string', description: 'string', rendered_description: 'string', invite_only: 'boolean',
        pin_to_top: 'boolean', is_muted: 'boolean', desktop_notifications: ['boolean', 'null'], subscribers: 'array',
        message_retention_days: ['number', 'null'], date_created: 'number', stream_post_policy: 'number',
        history_public_to_subscribers: 'boolean', stream_weekly_traffic: ['number', 'null'],
      }, `subscriptions[${s.name}]`);
    }
    // No notification_settings_null capability: the user's defaults, never null.
    expect(state.subscriptions.find((s: any) => s.name === 'Denmark').desktop_notifications).toEqual(expect.any(Boolean));
    expect(state.muted_topics).toEqual([['Denmark', 'noise', expect.any(Number)]]);
    const u = state.unread_msgs;
    expectShape(u, { pms: 'array', streams: 'array', huddles: 'array', mentions: 'array' }, 'unread_msgs');
    expect(u.pms).toEqual([expect.objectContaining({ sender_id: t.users.othello.id, unread_message_ids: [expect.any(Number)] })]);
    expect(u.streams).toEqual([expect.objectContaining({ stream_id: denmark, topic: 'castle', unread_message_ids: expect.any(Array) })]);
    expect(u.huddles).toEqual([
      expect.objectContaining({ user_ids_string: [t.users.hamlet.id, t.users.cordelia.id, t.users.othello.id].sort((a, b) => a - b).join(','), unread_message_ids: [expect.any(Number)] }),
    ]);
    expect(u.mentions).toEqual([mention.id]);
    expect(state.starred_messages).toEqual([mention.id]);
    expect(Object.values(state.realm_emoji).map((e: any) => [e.name, e.deactivated])).toEqual([['elsinore', false]]);
    expect(state.custom_profile_fields.map((f: any) => f.name)).toEqual(['Phone']);
    expectShape(state.user_settings, { send_private_typing_notifications: 'boolean', twenty_four_hour_time: 'boolean', pm_content_in_desktop_notifications: 'boolean' }, 'user_settings');
  });

  it('4. POST /users/me/presence every interval: presences keyed by email', async () => {
    const body = await py('POST', '/users/me/presence', { status: 'active', new_user_input: true });
    expect(body.result).toBe('success');
    expectShape(body, { presences: 'object', server_timestamp: 'number' }, 'presence');
    expect(Object.keys(body.presences).sort()).toEqual([t.users.cordelia.email, t.users.hamlet.email].sort());
    expect(body.presences[t.users.hamlet.email].aggregated).toEqual({ client: 'website', status: 'active', timestamp: expect.any(Number) });
  });

  it('5. the GET /events loop; a bad queue id is the code it re-registers on', async () => {
    const body = await py('GET', '/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true });
    expect(body).toMatchObject({ result: 'success', events: expect.any(Array) });
    expect(await py('GET', '/events', { queue_id: 'no-such-queue', last_event_id: -1, dont_block: true })).toEqual({
      result: 'error', msg: 'Bad event queue ID: no-such-queue', code: 'BAD_EVENT_QUEUE_ID', queue_id: 'no-such-queue',
    });
  });
});

describe('zulip-terminal traffic after startup', () => {
  let queue: any;
  beforeAll(async () => {
    queue = await py('POST', '/register', REGISTER);
  });
  const events = async (): Promise<any[]> => {
    const body = await py('GET', '/events', { queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true });
    expect(body.result).toBe('success');
    if (body.events.length) queue.last_event_id = body.events[body.events.length - 1].id;
    return body.events;
  };

  it('legacy list narrows and operator names', async () => {
    const ids = async (narrow: unknown): Promise<number[]> => {
      const body = await py('GET', '/messages', { anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: true, client_gravatar: true, narrow });
      expect(body.result, JSON.stringify(narrow)).toBe('success');
      return body.messages.map((m: any) => m.id);
    };
    const all = await ids([]);
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect((await ids([['stream', 'Denmark']])).length).toBe(2);
    expect((await ids([['stream', 'Denmark'], ['topic', 'castle']])).length).toBe(2);
    expect((await ids([['is', 'private']])).length).toBe(2);
    expect((await ids([['pm-with', t.users.othello.email]])).length).toBe(1);
    expect((await ids([['is', 'mentioned']])).length).toBe(1);
    expect((await ids([['is', 'starred']])).length).toBe(1);
    expect((await ids([['search', 'look']])).length).toBe(1);
  });

  it('POST /messages with subject and a channel name, and a DM by ids; the message event carries the legacy fields', async () => {
    await events();
    const sent = await py('POST', '/messages', { type: 'stream', to: 'Denmark', subject: 'castle', content: 'Stay, illusion!', read_by_sender: true });
    expect(sent).toMatchObject({ result: 'success', id: expect.any(Number) });
    const dm = await py('POST', '/messages', { type: 'private', to: [t.users.cordelia.id], content: 'a note', read_by_sender: true });
    expect(dm).toMatchObject({ result: 'success' });
    const got = (await events()).filter((e) => e.type === 'message');
    expect(got.map((e) => e.message.id)).toEqual([sent.id, dm.id]);
    expectShape(got[0], { message: 'object', flags: 'array' }, 'message event');
    expectShape(got[0].message, { ...MESSAGE_SHAPE, stream_id: 'number' }, 'event message');
    expect(got[0].flags).toContain('read');
    expect(got[0].message).toMatchObject({ subject: 'castle', client: 'ZulipTerminal', content: '<p>Stay, illusion!</p>' });
  });

  it('typing with only `to` and `op`; flags; topics; single message and history; subscription properties; the channel email address', async () => {
    await events();
    expect(await py('POST', '/typing', { to: [t.users.cordelia.id], op: 'start' })).toEqual({ result: 'success', msg: '' });
    // An unread message from someone else, which the terminal then marks read.
    const id = (await py('POST', '/messages', { type: 'stream', to: 'Denmark', subject: 'castle', content: 'Mark me' }, 'othello')).id;
    expect(await py('POST', '/messages/flags', { op: 'add', flag: 'read', messages: [id] })).toMatchObject({ result: 'success' });
    const topics = await py('GET', `/users/me/${denmark}/topics`);
    expect(topics).toMatchObject({ result: 'success', topics: [{ name: 'castle', max_id: id }] });
    const one = await py('GET', `/messages/${id}`);
    expect(one.result).toBe('success');
    expectShape(one.message, MESSAGE_SHAPE, 'GET /messages/{id}');
    expect((await py('GET', `/messages/${id}/history`)).result).toBe('success');
    expect(await py('POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: denmark, property: 'pin_to_top', value: true }] })).toMatchObject({ result: 'success' });
    expect(await py('GET', `/streams/${denmark}/email_address`)).toEqual({ result: 'success', msg: '', email: '' });
    const got = await events();
    const typing = got.find((e) => e.type === 'typing');
    expectShape(typing, { op: 'string', sender: 'object', recipients: 'array' }, 'typing');
    expect(typing.sender).toEqual({ user_id: t.users.hamlet.id, email: t.users.hamlet.email });
    const flags = got.find((e) => e.type === 'update_message_flags');
    expect(flags).toMatchObject({ op: 'add', flag: 'read', messages: [id], all: false });
    expect(got.find((e) => e.type === 'subscription')).toMatchObject({ op: 'update', stream_id: denmark, property: 'pin_to_top', value: true });
  });

  it('edits and topic moves: update_message with rendered_content, and subject / orig_subject for moves', async () => {
    await events();
    const sent = await py('POST', '/messages', { type: 'stream', to: 'Denmark', subject: 'ghost', content: 'Speak' });
    await events();
    expect((await py('PATCH', `/messages/${sent.id}`, { content: 'Speak **to me**' })).result).toBe('success');
    expect((await py('PATCH', `/messages/${sent.id}`, { topic: 'apparition', propagate_mode: 'change_all' })).result).toBe('success');
    const got = (await events()).filter((e) => e.type === 'update_message');
    expect(got).toHaveLength(2);
    expectShape(got[0], { message_id: 'number', rendered_content: 'string', is_me_message: 'boolean' }, 'content edit');
    expect(got[0].rendered_content).toBe('<p>Speak <strong>to me</strong></p>');
    expectShape(got[1], { subject: 'string', orig_subject: 'string', stream_id: 'number', message_ids: 'array' }, 'topic move');
    expect(got[1]).toMatchObject({ subject: 'apparition', orig_subject: 'ghost', stream_id: denmark, message_ids: [sent.id] });
    const one = await py('GET', `/messages/${sent.id}`);
    expect(one.message.edit_history).toEqual(expect.any(Array));
  });

  it('reactions, settings, custom emoji and another user\'s profile change reach the terminal', async () => {
    await events();
    const newest = await py('GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [] });
    const id = newest.messages[0].id;
    expect((await py('POST', `/messages/${id}/reactions`, { emoji_name: 'thumbs_up' })).result).toBe('success');
    expect((await py('PATCH', '/settings', { twenty_four_hour_time: true })).result).toBe('success');
    expect((await multipartRequest(t, 'POST', '/realm/emoji/yorick', [{ filename: 'y.png', contentType: 'image/png', data: await pngImage(20, 20) }], {}, 'iago')).status).toBe(200);
    expect((await py('PATCH', '/settings', { full_name: 'Cordelia of Britain' }, 'cordelia')).result).toBe('success');
    const got = await events();
    expect(got.map((e) => e.type)).toEqual(['reaction', 'user_settings', 'realm_emoji', 'realm_user']);
    expect(got[0]).toMatchObject({ op: 'add', message_id: id, emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: t.users.hamlet.id });
    expect(got[1]).toMatchObject({ op: 'update', property: 'twenty_four_hour_time', value: true });
    expect(got[2]).toMatchObject({ op: 'update', realm_emoji: expect.any(Object) });
    expect(got[3]).toMatchObject({ op: 'update', person: { user_id: t.users.cordelia.id, full_name: 'Cordelia of Britain' } });
  });

  it('older clients registering for everything get the legacy settings keys at the top level; user_settings_object drops them', async () => {
    const legacy = await py('POST', '/register', {});
    expect(legacy.twenty_four_hour_time).toBe(true);
    expectShape(legacy, { enable_desktop_notifications: 'boolean', emojiset: 'string', timezone: 'string', user_settings: 'object', realm_filters: 'array', realm_linkifiers: 'array' }, 'register (all)');
    const modern = await py('POST', '/register', { client_capabilities: { notification_settings_null: true, user_settings_object: true } });
    expect(modern).not.toHaveProperty('twenty_four_hour_time');
    expect(modern.user_settings.twenty_four_hour_time).toBe(true);
    await py('DELETE', '/events', { queue_id: legacy.queue_id });
    await py('DELETE', '/events', { queue_id: modern.queue_id });
  });

  it('DELETE /events on exit', async () => {
    expect(await py('DELETE', '/events', { queue_id: queue.queue_id })).toEqual({ result: 'success', msg: '' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, getMessage, newestMessages, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

let t: TestServer;
let denmark: number;
const ids: Record<string, number> = {};
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago']);
  await createChannel(t, 'Verona', ['othello', 'polonius']);
  await createChannel(t, 'protected', ['iago', 'othello'], { invite_only: true, history_public_to_subscribers: false });
  await createChannel(t, 'shared', ['iago'], { invite_only: true, history_public_to_subscribers: true });
  ids.d1 = await sendChannelMessage(t, 'hamlet', 'Denmark', 'castle', 'first in **castle**');
  ids.d2 = await sendChannelMessage(t, 'cordelia', 'Denmark', 'Castle', 'second in castle, Pineapple');
  ids.d3 = await sendChannelMessage(t, 'hamlet', 'Denmark', 'garden', 'a garden message');
  ids.dm1 = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'secret one to one');
  ids.dm2 = await sendDirectMessage(t, 'cordelia', ['hamlet'], 'reply');
  ids.g1 = await sendDirectMessage(t, 'hamlet', ['cordelia', 'othello'], 'group pineapple');
  ids.v1 = await sendChannelMessage(t, 'othello', 'Verona', 'balcony', 'verona history');
  ids.p1 = await sendChannelMessage(t, 'iago', 'protected', 'plans', 'before cordelia joined');
  ids.s1 = await sendChannelMessage(t, 'iago', 'shared', 'plans', 'shared history');
  ids.d4 = await sendChannelMessage(t, 'iago', 'Denmark', 'garden', 'last @**King Hamlet**');
});
afterAll(async () => t.close());

const get = (who: string, params: Record<string, unknown>) => t.get('/messages', params, who as never);
const idsOf = (body: any): number[] => body.messages.map((m: any) => m.id);

describe('GET /messages: anchors and ranges', () => {
  it('newest with num_before gives the user\'s latest messages and found_newest', async () => {
    const body = expectSuccess(await get('hamlet', { anchor: 'newest', num_before: 3, num_after: 0 }));
    expect(idsOf(body)).toEqual([ids.dm2, ids.g1, ids.d4]);
    expect(body).toMatchObject({ found_anchor: false, found_oldest: false, found_newest: true, history_limited: false, anchor: 10000000000000000 });
  });

  it('oldest with num_after walks forward', async () => {
    const body = expectSuccess(await get('hamlet', { anchor: 'oldest', num_before: 0, num_after: 2 }));
    expect(idsOf(body)).toEqual([ids.d1, ids.d2]);
    expect(body).toMatchObject({ found_oldest: true, found_newest: false, anchor: 0 });
  });

  it('an id anchor on both sides, with and without the anchor', async () => {
    const both = expectSuccess(await get('hamlet', { anchor: String(ids.d3), num_before: 1, num_after: 1 }));
    expect(idsOf(both)).toEqual([ids.d2, ids.d3, ids.dm1]);
    expect(both).toMatchObject({ found_anchor: true, found_oldest: false, found_newest: false, anchor: ids.d3 });
    const after = expectSuccess(await get('hamlet', { anchor: ids.d3, num_before: 0, num_after: 2, include_anchor: false }));
    expect(idsOf(after)).toEqual([ids.dm1, ids.dm2]);
    expect(after.found_anchor).toBe(false);
    const exact = expectSuccess(await get('hamlet', { anchor: ids.d3, num_before: 0, num_after: 0 }));
    expect(idsOf(exact)).toEqual([ids.d3]);
    expect(exact.found_anchor).toBe(true);
  });

  it('first_unread (and the legacy use_first_unread_anchor) anchors at the first unread; with none, at 10000000000000000', async () => {
    const body = expectSuccess(await get('othello', { anchor: 'first_unread', num_before: 0, num_after: 1 }));
    expect(body.anchor).toBe(ids.g1);
    // The anchor plus num_after messages after it.
    expect(idsOf(body)).toEqual([ids.g1, ids.v1]);
    // zulip-terminal's startup request.
    expectSuccess(await t.post('/mark_all_as_read', {}, 'othello'));
    const term = expectSuccess(
      await get('othello', { anchor: 0, num_before: 30, num_after: 10, apply_markdown: true, use_first_unread_anchor: true, client_gravatar: true, narrow: [] }),
    );
    expect(term.anchor).toBe(10000000000000000);
    expect(term.found_newest).toBe(true);
    expect(JSON.parse(JSON.stringify(term)).anchor).toBe(10000000000000000);
  });

  it('refuses bad ranges with Zulip\'s errors', async () => {
    expectError(await get('hamlet', { num_before: 1 }), 400, 'BAD_REQUEST', "Missing 'anchor' argument.");
    expectError(await get('hamlet', { anchor: 'latest', num_before: 1 }), 400, 'BAD_REQUEST', 'Invalid anchor');
    expectError(await get('hamlet', { anchor: 'newest', num_before: 4000, num_after: 1001 }), 400, 'BAD_REQUEST', 'Too many messages requested (maximum 5000).');
    expectError(await get('hamlet', { anchor: 5, num_before: 1, num_after: 1, include_anchor: false }), 400, 'BAD_REQUEST', 'The anchor can only be excluded at an end of the range');
    expectError(await get('hamlet', { anchor: 'newest', num_before: -1 }), 400, 'BAD_REQUEST', 'num_before is too small');
    expectError(await get('hamlet', { anchor: 'newest', num_before: 'x' }), 400, 'BAD_REQUEST', 'num_before is not valid JSON');
  });

  it('negative anchors read as 0 and huge ones as the newest', async () => {
    expect(expectSuccess(await get('hamlet', { anchor: '-5', num_after: 1 })).anchor).toBe(0);
    expect(expectSuccess(await get('hamlet', { anchor: '99999999999999999999', num_before: 1 })).anchor).toBe(10000000000000000);
  });

  it('message_ids returns those the caller may see, and refuses mixing with a range', async () => {
    const body = expectSuccess(await get('cordelia', { message_ids: [ids.d1, ids.dm1, ids.p1, 999999] }));
    // zulip-js sends lists comma-joined in query strings.
    expect(idsOf(expectSuccess(await get('cordelia', { message_ids: `${ids.d1},${ids.dm1}` })))).toEqual([ids.d1, ids.dm1]);
    expect(idsOf(body)).toEqual([ids.d1, ids.dm1]);
    expect(body).toEqual({ result: 'success', msg: '', messages: body.messages, history_limited: false, found_anchor: false, found_oldest: false, found_newest: false });
    expectError(await get('cordelia', { message_ids: [ids.d1], anchor: 'newest' }), 400, 'BAD_REQUEST', 'Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor', {
      parameters: ['num_before', 'num_after', 'anchor', 'message_ids', 'include_anchor', 'use_first_unread_anchor'],
    });
  });
});

describe('GET /messages: narrows', () => {
  const narrowIds = async (who: string, narrow: unknown): Promise<number[]> => idsOf(expectSuccess(await get(who, { anchor: 'newest', num_before: 100, narrow })));

  it('channel (by name or id, legacy "stream"), topic (case-insensitive), both forms', async () => {
    expect(await narrowIds('hamlet', [['stream', 'Denmark']])).toEqual([ids.d1, ids.d2, ids.d3, ids.d4]);
    expect(await narrowIds('hamlet', [{ operator: 'channel', operand: denmark }])).toEqual([ids.d1, ids.d2, ids.d3, ids.d4]);
    expect(await narrowIds('hamlet', [['stream', 'denmark'], ['topic', 'CASTLE']])).toEqual([ids.d1, ids.d2]);
    expect(await narrowIds('hamlet', [{ operator: 'channel', operand: 'Denmark' }, { operator: 'topic', operand: 'castle', negated: true }])).toEqual([ids.d3, ids.d4]);
  });

  it('a public channel\'s history is readable without having received it; flags are then read+historical', async () => {
    const body = expectSuccess(await get('othello', { anchor: 'newest', num_before: 10, narrow: [['stream', 'Denmark']] }));
    expect(idsOf(body)).toEqual([ids.d1, ids.d2, ids.d3, ids.d4]);
    expect(body.messages[0].flags).toEqual(['read', 'historical']);
    // Without the channel term only received messages come back.
    expect(await narrowIds('othello', [])).toEqual([ids.g1, ids.v1, ids.p1]);
  });

  it('never leaks other users\' DMs or protected private-channel history', async () => {
    expect(await narrowIds('iago', [['is', 'dm']])).toEqual([]);
    expect(await narrowIds('iago', [{ operator: 'dm', operand: [t.users.hamlet.id, t.users.cordelia.id] }])).toEqual([]);
    expect(await narrowIds('othello', [{ operator: 'search', operand: 'secret' }])).toEqual([]);
    expect(await narrowIds('othello', [{ operator: 'id', operand: ids.dm1 }])).toEqual([]);
    // Cordelia joins the protected channel: earlier messages stay invisible; the shared one opens up.
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'protected' }, { name: 'shared' }], principals: [t.users.cordelia.id] }, 'iago'));
    expect(await narrowIds('cordelia', [['stream', 'protected']])).toEqual([]);
    expectError(await t.get(`/messages/${ids.p1}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expect(await narrowIds('cordelia', [['stream', 'shared']])).toEqual([ids.s1]);
    expect((await getMessage(t, 'cordelia', ids.s1)).flags).toEqual(['read', 'historical']);
    // Hamlet (not subscribed) sees neither.
    expect(await narrowIds('hamlet', [['stream', 'shared']])).toEqual([]);
    expectError(await t.get(`/messages/${ids.s1}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('dm / pm-with (ids or emails), dm-including, group-pm-with, is:dm', async () => {
    expect(await narrowIds('hamlet', [{ operator: 'dm', operand: [t.users.cordelia.id] }])).toEqual([ids.dm1, ids.dm2]);
    expect(await narrowIds('cordelia', [['pm-with', 'hamlet@zulip.com']])).toEqual([ids.dm1, ids.dm2]);
    expect(await narrowIds('hamlet', [['pm-with', 'cordelia@zulip.com,othello@zulip.com']])).toEqual([ids.g1]);
    expect(await narrowIds('hamlet', [{ operator: 'dm-including', operand: t.users.othello.id }])).toEqual([ids.g1]);
    expect(await narrowIds('hamlet', [{ operator: 'dm-including', operand: t.users.cordelia.id }])).toEqual([ids.dm1, ids.dm2, ids.g1]);
    expect(await narrowIds('hamlet', [{ operator: 'group-pm-with', operand: 'cordelia@zulip.com' }])).toEqual([ids.g1]);
    expect(await narrowIds('hamlet', [['is', 'private']])).toEqual([ids.dm1, ids.dm2, ids.g1]);
    expect(await narrowIds('hamlet', [{ operator: 'is', operand: 'dm', negated: true }])).toEqual([ids.d1, ids.d2, ids.d3, ids.d4]);
  });

  it('sender, is:mentioned, is:starred, is:unread, id, search with highlighting', async () => {
    expect(await narrowIds('hamlet', [['sender', 'cordelia@zulip.com']])).toEqual([ids.d2, ids.dm2, ]);
    expect(await narrowIds('hamlet', [{ operator: 'sender', operand: t.users.iago.id }])).toEqual([ids.d4]);
    expect(await narrowIds('hamlet', [['is', 'mentioned']])).toEqual([ids.d4]);
    expectSuccess(await t.post('/messages/flags', { messages: [ids.d2], op: 'add', flag: 'starred' }, 'hamlet'));
    expect(await narrowIds('hamlet', [['is', 'starred']])).toEqual([ids.d2]);
    expect(await narrowIds('hamlet', [{ operator: 'id', operand: ids.d3 }])).toEqual([ids.d3]);
    const search = expectSuccess(await get('hamlet', { anchor: 'newest', num_before: 10, narrow: [{ operator: 'search', operand: 'pineapple' }] }));
    expect(idsOf(search)).toEqual([ids.d2, ids.g1]);
    expect(search.messages[0].match_content).toBe('<p>second in castle, <span class="highlight">Pineapple</span></p>');
    expect(search.messages[0].match_subject).toBe('Castle');
    expect(await narrowIds('hamlet', [['search', 'castle']])).toEqual([ids.d1, ids.d2]);
  });

  it('refuses bad narrows with BAD_NARROW and Zulip\'s descriptions', async () => {
    const bad = async (narrow: unknown, desc: string) =>
      expectError(await get('hamlet', { anchor: 'newest', num_before: 1, narrow }), 400, 'BAD_NARROW', `Invalid narrow operator: ${desc}`, { desc });
    await bad([['stream', 'Atlantis']], 'unknown channel Atlantis');
    await bad([['sender', 'nobody@zulip.com']], 'unknown user nobody@zulip.com');
    await bad([{ operator: 'dm', operand: [999999] }], 'unknown user in [999999]');
    await bad([['is', 'shiny']], "unknown 'is' operand shiny");
    await bad([['frobnicate', 'x']], 'unknown operator frobnicate');
    await bad([['has', 'cheese']], "unknown 'has' operand cheese");
    await bad([['id', 'abc']], 'Invalid message ID');
    await bad([['stream', 'Denmark'], ['is', 'dm']], 'No message can be both a channel message and direct message');
    expectError(await get('hamlet', { anchor: 'newest', narrow: '{"a":1}' }), 400, 'BAD_REQUEST', 'narrow is not a list');
    expectError(await get('hamlet', { anchor: 'newest', narrow: '[["stream"]]' }), 400, 'BAD_REQUEST', 'Invalid narrow[0]: Value error, element is not a string pair');
    expectError(await get('hamlet', { anchor: 'newest', narrow: '[{"operator":"stream"}]' }), 400, 'BAD_REQUEST', 'Invalid narrow[0]: Value error, operand is missing');
    expectError(await get('hamlet', { anchor: 'newest', narrow: '[{"operator":"search","operand":"  "}]' }), 400, 'BAD_REQUEST', 'operand cannot be blank');
  });
});

describe('GET /messages: presentation', () => {
  it('apply_markdown=false gives raw Markdown; client_gravatar nulls gravatar URLs; the empty topic is named unless allowed', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', '', '**bold**');
    const raw = expectSuccess(await get('cordelia', { anchor: id, num_before: 0, num_after: 0, apply_markdown: false, client_gravatar: false })).messages[0];
    expect(raw).toMatchObject({ content: '**bold**', content_type: 'text/x-markdown', subject: 'general chat' });
    expect(raw.avatar_url).toMatch(/^https:/);
    const html = expectSuccess(await get('cordelia', { anchor: id, num_before: 0, num_after: 0, allow_empty_topic_name: true })).messages[0];
    expect(html).toMatchObject({ content: '<p><strong>bold</strong></p>', content_type: 'text/html', subject: '', avatar_url: null });
  });

  it('GET /messages/{id}: raw_content, apply_markdown, uniform errors', async () => {
    const body = expectSuccess(await t.get(`/messages/${ids.d1}`, { apply_markdown: false }, 'hamlet'));
    expect(body.raw_content).toBe('first in **castle**');
    expect(body.message.content).toBe('first in **castle**');
    // Sent by an API client without read_by_sender: unread for the sender too (Zulip's default).
    expect(body.message.flags).toEqual([]);
    expectError(await t.get('/messages/999999', {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.get(`/messages/${ids.dm1}`, {}, 'iago'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.get(`/messages/${ids.dm1}`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    // Guests see public channels only when subscribed.
    expectError(await t.get(`/messages/${ids.d1}`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expect((await getMessage(t, 'polonius', ids.v1)).id).toBe(ids.v1);
  });

  it('keys of a message object', async () => {
    const [m] = await newestMessages(t, 'hamlet', [{ operator: 'id', operand: ids.d1 }]);
    expect(Object.keys(m).sort()).toEqual(
      ['avatar_url', 'client', 'content', 'content_type', 'display_recipient', 'flags', 'id', 'is_me_message', 'reactions', 'recipient_id', 'sender_email', 'sender_full_name', 'sender_id', 'sender_realm_str', 'stream_id', 'subject', 'submessages', 'timestamp', 'topic_links', 'type'].sort(),
    );
  });
});

describe('out-of-range ids are refused like unknown ones, never a 500', () => {
  it('on every message endpoint', async () => {
    const huge = 99999999999999;
    expectError(await t.get(`/messages/${huge}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.get(`/messages/${huge}/history`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.patch(`/messages/${huge}`, { content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.delete(`/messages/${huge}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.post(`/messages/${huge}/reactions`, { emoji_name: 'smile' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.post('/messages/flags', { messages: [huge], op: 'add', flag: 'starred' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectSuccess(await t.post('/messages/flags', { messages: [huge], op: 'add', flag: 'read' }, 'hamlet'));
    expect(idsOf(expectSuccess(await get('hamlet', { anchor: huge, num_before: 0, num_after: 5 })))).toEqual([]);
    expect(idsOf(expectSuccess(await get('hamlet', { anchor: 'newest', num_before: 5, narrow: [{ operator: 'id', operand: huge }] })))).toEqual([]);
    expect(idsOf(expectSuccess(await get('hamlet', { message_ids: [huge] })))).toEqual([]);
    expectError(await get('hamlet', { anchor: 'newest', num_before: 1, narrow: [{ operator: 'sender', operand: huge }] }), 400, 'BAD_NARROW', `Invalid narrow operator: unknown user ${huge}`, { desc: `unknown user ${huge}` });
    expectError(await t.post('/messages', { type: 'direct', to: [huge], content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', `Invalid user ID ${huge}`);
    expectError(await t.post('/messages', { type: 'stream', to: String(huge), topic: 'x', content: 'x' }, 'hamlet'), 400, 'STREAM_DOES_NOT_EXIST', `Channel with ID '${huge}' does not exist`, { stream_id: huge });
  });
});

describe('GET /messages: query counts', () => {
  it('a channel narrow page costs a fixed number of statements whatever its size', async () => {
    const stats = t.app.ctx.store.stats;
    let body: any;
    const measure = async (n: number): Promise<number> => {
      const before = stats.queries;
      body = expectSuccess(await get('iago', { anchor: 'newest', num_before: n, narrow: [['stream', 'Denmark']] }));
      return stats.queries - before;
    };
    const one = await measure(1);
    const many = await measure(50);
    expect(many).toBe(one);
    // The channel (by name), the page (which says whether each message has reactions), people;
    // the channel's name comes from the narrow's read, and no message has a reaction.
    expect(one).toBe(3);
    expectSuccess(await t.post(`/messages/${ids.d1}/reactions`, { emoji_name: 'octopus' }, 'iago'));
    // The newest message has none: still 3. A page with a reacted message reads the reactions too.
    expect(await measure(1)).toBe(3);
    expect(await measure(50)).toBe(4);
    const reacted = body.messages.find((m: any) => m.id === ids.d1);
    expect(reacted.reactions).toMatchObject([{ emoji_name: 'octopus', user_id: expect.any(Number) }]);
    expect(body.messages.filter((m: any) => m.reactions.length > 0).map((m: any) => m.id)).toEqual([ids.d1]);
  });
});

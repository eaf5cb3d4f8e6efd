import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectNoChange, ids, mkChannel, realmSetting } from '../support/channels.js';
import { sendChannelMessage } from '../support/messages.js';

/**
 * Notification Bot and Welcome Bot (Zulip's system bots), the default
 * channels, and what a new organization starts with.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const notificationBot = () => t.users.bot.id + 1;

/** The raw Markdown of a channel's messages in a topic (as the owner, who is subscribed for the check). */
async function topicMessages(channelId: number, topic: string, who: Parameters<TestServer['get']>[2] = 'iago'): Promise<[number, string][]> {
  const narrow = [{ operator: 'channel', operand: channelId }, { operator: 'topic', operand: topic }];
  const msgs = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, narrow, apply_markdown: false }, who)).messages;
  return msgs.map((m: any) => [m.sender_id, m.content]);
}

describe('Notification Bot', () => {
  it('announces a new channel in the announcements channel and in the channel itself', async () => {
    const general = await mkChannel(t, 'announcements', { subscribers: [t.users.iago.id, t.users.hamlet.id] });
    await realmSetting(t, 'new_stream_announcements_stream_id', general);
    const id = expectSuccess(await t.post('/channels/create', { name: 'kitchen', subscribers: [t.users.iago.id], description: 'Food', announce: true }, 'iago')).id;
    expect(await topicMessages(general, 'new channels')).toEqual([[notificationBot(), `@_**Iago|${t.users.iago.id}** created a new channel #**kitchen**.`]]);
    expect(await topicMessages(id, 'channel events')).toEqual([[notificationBot(), `**Public** channel created by @_**Iago|${t.users.iago.id}**. **Description:**\n\`\`\`\` quote\nFood\n\`\`\`\``]]);
    // Several at once, through POST /users/me/subscriptions; a private channel's notice.
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'alpha' }, { name: 'beta' }], announce: true, invite_only: true }, 'iago'));
    const [, last] = (await topicMessages(general, 'new channels')).slice(-2);
    expect(last).toEqual([notificationBot(), `@_**Iago|${t.users.iago.id}** created the following channels: #**alpha**, #**beta**.`]);
    const alpha = expectSuccess(await t.get('/get_stream_id', { stream: 'alpha' }, 'iago')).stream_id;
    expect(await topicMessages(alpha, 'channel events')).toEqual([[notificationBot(), `**Private, protected history** channel created by @_**Iago|${t.users.iago.id}**. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``]]);
    // The announcement starts read for the creator, unread for others.
    const flags = async (who: 'iago' | 'hamlet') =>
      expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: general }] }, who)).messages[0].flags;
    expect([await flags('iago'), await flags('hamlet')]).toEqual([['read'], []]);
  });

  it('"subscribed you" direct messages to others, not to oneself, bots or for new channels; new_subscription_messages_sent', async () => {
    await mkChannel(t, 'sub-a', { subscribers: [] });
    await mkChannel(t, 'sub-b', { subscribers: [] });
    const body = expectSuccess(
      await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-a' }, { name: 'sub-b' }, { name: 'sub-new' }], principals: [t.users.othello.id, t.users.iago.id, t.users.bot.id] }, 'iago'),
    );
    expect(body.new_subscription_messages_sent).toBe(true);
    const dms = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }], apply_markdown: false }, 'othello')).messages;
    expect(dms.map((m: any) => [m.sender_email, m.content])).toEqual([
      ['notification-bot@zulip.com', `@_**Iago|${t.users.iago.id}** subscribed you to the following channels:\n\n* #**sub-a**\n* #**sub-b**`],
    ]);
    // Opting out: no message, and the answer says so.
    await mkChannel(t, 'sub-c', { subscribers: [] });
    const quiet = expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-c' }], principals: [t.users.cordelia.id], send_new_subscription_messages: false }, 'iago'));
    expect(quiet).not.toHaveProperty('new_subscription_messages_sent');
    const one = expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-c' }], principals: [t.users.othello.id] }, 'iago'));
    expect(one.new_subscription_messages_sent).toBe(true);
    const last = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }], apply_markdown: false }, 'othello')).messages[0];
    expect(last.content).toBe(`@_**Iago|${t.users.iago.id}** subscribed you to #**sub-c**.`);
    expect(expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] }, 'cordelia')).messages).toEqual([]);
  });

  it('resolving a topic, moving messages: the notices in both topics', async () => {
    const id = await mkChannel(t, 'moves', { subscribers: [t.users.hamlet.id, t.users.iago.id] });
    const other = await mkChannel(t, 'moves-to', { subscribers: [t.users.hamlet.id, t.users.iago.id] });
    const m1 = await sendChannelMessage(t, 'hamlet', 'moves', 'bug', 'it breaks');
    await sendChannelMessage(t, 'hamlet', 'moves', 'bug', 'still');
    expectSuccess(await t.patch(`/messages/${m1}`, { topic: '✔ bug', propagate_mode: 'change_all' }, 'hamlet'));
    expect((await topicMessages(id, '✔ bug')).slice(-1)).toEqual([[notificationBot(), `@_**King Hamlet|${t.users.hamlet.id}** has marked this topic as resolved.`]]);
    expectSuccess(await t.patch(`/messages/${m1}`, { topic: 'bug', propagate_mode: 'change_all' }, 'hamlet'));
    expect((await topicMessages(id, 'bug')).slice(-1)).toEqual([[notificationBot(), `@_**King Hamlet|${t.users.hamlet.id}** has marked this topic as unresolved.`]]);
    // Move everything to another channel, with a notice in both places.
    expectSuccess(await t.patch(`/messages/${m1}`, { stream_id: other, propagate_mode: 'change_all', send_notification_to_old_thread: true }, 'iago'));
    expect(await topicMessages(id, 'bug')).toEqual([[notificationBot(), `This topic was moved to #**moves-to>bug** by @_**Iago|${t.users.iago.id}**.`]]);
    expect((await topicMessages(other, 'bug')).slice(-1)).toEqual([[notificationBot(), `This topic was moved here from #**moves>bug** by @_**Iago|${t.users.iago.id}**.`]]);
    // One message into an existing topic: a link to it.
    const m3 = await sendChannelMessage(t, 'hamlet', 'moves', 'misc', 'stray');
    await sendChannelMessage(t, 'hamlet', 'moves-to', 'bug', 'already here');
    expectSuccess(await t.patch(`/messages/${m3}`, { stream_id: other, topic: 'bug', send_notification_to_old_thread: true }, 'iago'));
    expect((await topicMessages(other, 'bug')).slice(-1)).toEqual([
      [notificationBot(), `[A message](http://zulip.testserver/#narrow/channel/${other}-moves-to/topic/bug/near/${m3}) was moved here from #**moves>misc** by @_**Iago|${t.users.iago.id}**.`],
    ]);
    expect(await topicMessages(id, 'misc')).toEqual([[notificationBot(), `This topic was moved to #**moves-to>bug** by @_**Iago|${t.users.iago.id}**.`]]);
    // Without notices when asked.
    const m4 = await sendChannelMessage(t, 'hamlet', 'moves', 'quiet', 'shh');
    expectSuccess(await t.patch(`/messages/${m4}`, { topic: 'quieter', send_notification_to_new_thread: false }, 'hamlet'));
    expect(await topicMessages(id, 'quieter')).toEqual([[t.users.hamlet.id, 'shh']]);
  });

  it('Zulip does not tell people they were added to a user group', async () => {
    const before = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] }, 'cordelia')).messages.length;
    expectSuccess(await t.post('/user_groups/create', { name: 'quiet group', description: '', members: [t.users.cordelia.id] }, 'iago'));
    expect(expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] }, 'cordelia')).messages).toHaveLength(before);
  });
});

describe('POST/DELETE /default_streams', () => {
  it('administrators add and remove; default_streams to every non-guest; exact refusals', async () => {
    const id = await mkChannel(t, 'defaults-here', { subscribers: [] });
    const priv = await mkChannel(t, 'defaults-private', { invite_only: true, subscribers: [t.users.iago.id] });
    await expectNoChange(t, async () => expectError(await t.post('/default_streams', { stream_id: id }, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'));
    await expectNoChange(t, async () => expectError(await t.post('/default_streams', { stream_id: priv }, 'iago'), 400, 'BAD_REQUEST', 'Private channels cannot be made default.'));
    await expectNoChange(t, async () => expectError(await t.post('/default_streams', { stream_id: 424242 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID'));
    await expectNoChange(t, async () => expectError(await t.post('/default_streams', { stream_id: 2 ** 40 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID'));
    await expectNoChange(t, async () => expectError(await t.post('/default_streams', {}, 'iago'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'stream_id' argument", { var_name: 'stream_id' }));
    const nonGuests = ids(t, 'owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'bot');
    const added = await t.captureEvents(async () => expectSuccess(await t.post('/default_streams', { stream_id: id }, 'iago')));
    expect(added.map((d) => [d.event, [...d.userIds].sort((a, b) => a - b)])).toEqual([[{ type: 'default_streams', default_streams: [id] }, nonGuests]]);
    // Adding again changes nothing and sends nothing.
    expect(await t.captureEvents(async () => expectSuccess(await t.post('/default_streams', { stream_id: id }, 'iago')))).toEqual([]);
    expect(expectSuccess(await t.post('/register', { fetch_event_types: ['default_streams'] }, 'hamlet')).realm_default_streams).toEqual([id]);
    expect(expectSuccess(await t.post('/register', { fetch_event_types: ['default_streams'] }, 'polonius')).realm_default_streams).toEqual([]);
    const removed = await t.captureEvents(async () => expectSuccess(await t.delete('/default_streams', { stream_id: id }, 'owner')));
    expect(removed.map((d) => [d.event, [...d.userIds].sort((a, b) => a - b)])).toEqual([[{ type: 'default_streams', default_streams: [] }, nonGuests]]);
  });
});

describe('a new organization on first start', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({}, { initialContent: true });
  });
  afterAll(async () => s.close());

  it('has general, Parley and sandbox as default channels, announcements in general, and Welcome Bot\'s first messages', async () => {
    const owner = s.users.owner;
    const streams = expectSuccess(await s.get('/streams', { include_default: true }, owner)).streams;
    expect(streams.map((c: any) => [c.name, c.description, c.is_default])).toEqual([
      ['Parley', 'Questions and discussion about using Parley.', true],
      ['general', 'For team-wide conversations', true],
      ['sandbox', 'Experiment with Parley here. :test_tube:', true],
    ]);
    const general = streams[1].stream_id;
    const reg = expectSuccess(await s.post('/register', { fetch_event_types: ['realm'] }, owner));
    expect([reg.realm_new_stream_announcements_stream_id, reg.realm_signup_announcements_stream_id, reg.realm_zulip_update_announcements_stream_id]).toEqual([general, general, general]);
    const subs = expectSuccess(await s.get('/users/me/subscriptions', {}, owner)).subscriptions.map((x: any) => x.name).sort();
    expect(subs).toEqual(['Parley', 'general', 'sandbox']);
    const msgs = expectSuccess(await s.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 50, apply_markdown: false }, owner)).messages;
    const welcome = msgs[0].sender_id;
    expect(msgs.map((m: any) => [m.sender_email, m.display_recipient, m.subject]).filter((x: any[]) => x[0] === 'welcome-bot@zulip.com')).toEqual([
      ['welcome-bot@zulip.com', 'Parley', 'moving messages'],
      ['welcome-bot@zulip.com', 'Parley', 'moving messages'],
      ['welcome-bot@zulip.com', 'sandbox', 'experiments'],
      ['welcome-bot@zulip.com', 'sandbox', 'experiments'],
      ['welcome-bot@zulip.com', 'sandbox', 'start a conversation'],
      ['welcome-bot@zulip.com', 'sandbox', 'start a conversation'],
      ['welcome-bot@zulip.com', 'sandbox', 'start a conversation'],
      ['welcome-bot@zulip.com', 'general', 'greetings'],
      ['welcome-bot@zulip.com', 'general', 'greetings'],
      ['welcome-bot@zulip.com', 'Parley', 'welcome to Parley!'],
      ['welcome-bot@zulip.com', 'Parley', 'welcome to Parley!'],
      ['welcome-bot@zulip.com', 'Parley', 'welcome to Parley!'],
      ['welcome-bot@zulip.com', [expect.objectContaining({ id: owner.id }), expect.objectContaining({ email: 'welcome-bot@zulip.com', full_name: 'Welcome Bot' })], ''],
    ]);
    const greeting = msgs.find((m: any) => m.subject === 'greetings');
    expect(greeting.content).toBe('This **greetings** topic is a great place to say “hi” :wave: to your teammates.');
    const first = msgs.find((m: any) => m.subject === 'welcome to Parley!');
    expect(first.content).toBe(
      'Parley is organized to help you communicate more efficiently. Conversations are labeled with topics, which summarize what the conversation is about.\n\n' +
        'For example, this message is in the “welcome to Parley!” topic in the #**Parley** channel, as you can see in the left sidebar and above.',
    );
    const dm = msgs[msgs.length - 1];
    // Zulip's template after remove_single_newlines (its spacing included).
    expect(dm.content).toBe(
      "Hello, and welcome to Parley!👋  I've kicked off some conversations to help you get started. You can find them in your [Inbox](/#inbox).\n\n\n\n" +
        'To learn more, check out our [getting started guide](https://zulip.com/help/getting-started-with-zulip)!  ' +
        'We also have a guide for [moving your organization to Parley](https://zulip.com/help/moving-to-zulip).',
    );
    expect(dm.flags).toContain('starred');
    expect(welcome).toBeGreaterThan(owner.id);
  });
});

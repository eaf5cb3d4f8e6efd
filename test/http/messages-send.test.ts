import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemGroupId } from '../../src/domain/rules/group-settings.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { getEvents, registerQueue, withoutIds } from '../support/events.js';
import { createChannel, getMessage, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

let t: TestServer;
let denmark: number;
let secret: number;
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago', 'polonius']);
  secret = await createChannel(t, 'secret', ['iago', 'cordelia'], { invite_only: true });
});
afterAll(async () => t.close());

const countMessages = async (): Promise<number> => Number((await t.app.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

/** Runs a refused request: exact error, nothing stored, no event. */
async function expectRefused(fn: () => Promise<any>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await countMessages();
  let res: any;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, status, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await countMessages()).toBe(before);
}

describe('POST /messages: direct messages', () => {
  it('sends a one-to-one DM by user ids and returns its id', async () => {
    const res = await t.post('/messages', { type: 'direct', to: [t.users.cordelia.id], content: 'hello' }, 'hamlet');
    const body = expectSuccess(res);
    expect(Object.keys(body).sort()).toEqual(['id', 'msg', 'result']);
    const m = await getMessage(t, 'cordelia', body.id);
    expect(m).toMatchObject({
      id: body.id,
      type: 'private',
      subject: '',
      content: '<p>hello</p>',
      sender_id: t.users.hamlet.id,
      sender_email: 'hamlet@zulip.com',
      display_recipient: [
        { id: t.users.hamlet.id, email: 'hamlet@zulip.com', full_name: 'King Hamlet', is_mirror_dummy: false },
        { id: t.users.cordelia.id, email: 'cordelia@zulip.com', full_name: "Cordelia, Lear's daughter", is_mirror_dummy: false },
      ],
      flags: [],
    });
    expect(m.stream_id).toBeUndefined();
  });

  it('accepts emails as a JSON list and as a comma-separated string, and the legacy type "private"', async () => {
    const a = expectSuccess(await t.post('/messages', { type: 'private', to: JSON.stringify(['cordelia@zulip.com']), content: 'a' }, 'hamlet')).id;
    const b = expectSuccess(await t.post('/messages', { type: 'private', to: 'cordelia@zulip.com, othello@zulip.com', content: 'b' }, 'hamlet')).id;
    expect((await getMessage(t, 'hamlet', a)).display_recipient.map((r: any) => r.id)).toEqual([t.users.hamlet.id, t.users.cordelia.id]);
    expect((await getMessage(t, 'hamlet', b)).display_recipient.map((r: any) => r.id)).toEqual(
      [t.users.hamlet.id, t.users.cordelia.id, t.users.othello.id].sort((x, y) => x - y),
    );
  });

  it('group and self DMs; recipient_id is the group or the personal recipient', async () => {
    const g1 = await sendDirectMessage(t, 'hamlet', ['cordelia', 'othello'], 'group');
    const g2 = await sendDirectMessage(t, 'othello', ['cordelia', 'hamlet'], 'group again');
    const self = await sendDirectMessage(t, 'hamlet', ['hamlet'], 'note to self');
    const m1 = await getMessage(t, 'cordelia', g1);
    const m2 = await getMessage(t, 'cordelia', g2);
    expect(m1.recipient_id).toBe(m2.recipient_id);
    const s = await getMessage(t, 'hamlet', self);
    expect(s.display_recipient).toEqual([{ id: t.users.hamlet.id, email: 'hamlet@zulip.com', full_name: 'King Hamlet', is_mirror_dummy: false }]);
    expectError(await t.get(`/messages/${self}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('delivers one message event per recipient queue with its own flags; read_by_sender marks it read for the sender', async () => {
    const qh = await registerQueue(t, 'hamlet', { event_types: ['message'], apply_markdown: true, client_gravatar: false });
    const qc = await registerQueue(t, 'cordelia', { event_types: ['message'], apply_markdown: false, client_gravatar: true });
    const id = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'hi @**Cordelia, Lear\'s daughter**', { read_by_sender: true });
    const [eh] = withoutIds(await getEvents(t, 'hamlet', qh.queue_id, qh.last_event_id));
    const [ec] = withoutIds(await getEvents(t, 'cordelia', qc.queue_id, qc.last_event_id));
    expect(eh.flags).toEqual(['read']);
    expect(ec.flags).toEqual(['mentioned']);
    expect(eh.message.content).toBe(`<p>hi <span class="user-mention" data-user-id="${t.users.cordelia.id}">@Cordelia, Lear's daughter</span></p>`);
    expect(eh.message.content_type).toBe('text/html');
    expect(eh.message.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
    expect(ec.message.content).toBe("hi @**Cordelia, Lear's daughter**");
    expect(ec.message.content_type).toBe('text/x-markdown');
    expect(ec.message.avatar_url).toBeNull();
    expect(ec.message.id).toBe(id);
    expect(Object.keys(eh).sort()).toEqual(['flags', 'message', 'type']);
    for (const e of [eh, ec]) for (const k of Object.keys(e.message)) expect(k.startsWith('__')).toBe(false);
  });

  it('echoes local_id as local_message_id to the sending queue only', async () => {
    const q1 = await registerQueue(t, 'hamlet', { event_types: ['message'] });
    const q2 = await registerQueue(t, 'hamlet', { event_types: ['message'] });
    const qc = await registerQueue(t, 'cordelia', { event_types: ['message'] });
    await sendDirectMessage(t, 'hamlet', ['cordelia'], 'x', { local_id: '17.01', queue_id: q1.queue_id });
    const [e1] = await getEvents(t, 'hamlet', q1.queue_id, q1.last_event_id);
    const [e2] = await getEvents(t, 'hamlet', q2.queue_id, q2.last_event_id);
    const [ec] = await getEvents(t, 'cordelia', qc.queue_id, qc.last_event_id);
    expect(e1.local_message_id).toBe('17.01');
    expect(e2.local_message_id).toBeUndefined();
    expect(ec.local_message_id).toBeUndefined();
  });

  it('refuses bad recipients with Zulip\'s errors, storing and sending nothing', async () => {
    await expectRefused(() => t.post('/messages', { type: 'direct', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Message must have recipients');
    await expectRefused(() => t.post('/messages', { type: 'direct', to: '[]', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Message must have recipients');
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [999999], content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user ID 999999');
    await expectRefused(() => t.post('/messages', { type: 'direct', to: 'nobody@zulip.com', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', "Invalid email 'nobody@zulip.com'");
    await expectRefused(
      () => t.post('/messages', { type: 'direct', to: JSON.stringify([t.users.cordelia.id, 'othello@zulip.com']), content: 'x' }, 'hamlet'),
      400,
      'BAD_REQUEST',
      'Recipient lists may contain emails or user IDs, but not both.',
    );
    await expectRefused(() => t.post('/messages', { type: 'direct', to: '{"a": 1}', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid data type for recipients');
    await expectRefused(() => t.post('/messages', { type: 'carrier-pigeon', to: 'x', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid type');
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [t.users.cordelia.id] }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'content' argument", { var_name: 'content' });
  });

  it('refuses DMs to deactivated users', async () => {
    const gone = await t.createUser({ email: 'gone@zulip.com', fullName: 'Gone Person' });
    expectSuccess(await t.delete(`/users/${gone.id}`, {}, 'iago'));
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [gone.id], content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', "'gone@zulip.com' is no longer using Zulip.");
  });

  it('refuses empty and NUL content, and truncates over-long content', async () => {
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [t.users.cordelia.id], content: '  \n ' }, 'hamlet'), 400, 'BAD_REQUEST', 'Message must not be empty');
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [t.users.cordelia.id], content: 'a\u0000b' }, 'hamlet'), 400, 'BAD_REQUEST', 'Message must not contain null bytes');
    const id = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'x'.repeat(10050));
    const raw = expectSuccess(await t.get(`/messages/${id}`, {}, 'hamlet')).raw_content as string;
    expect(raw.length).toBe(10000);
    expect(raw.endsWith('\n[message truncated]')).toBe(true);
  });

  it('applies the realm DM permission settings', async () => {
    const nobody = await systemGroupId(t.app.ctx.db, t.realmId, 'role:nobody');
    const admins = await systemGroupId(t.app.ctx.db, t.realmId, 'role:administrators');
    const everyone = await systemGroupId(t.app.ctx.db, t.realmId, 'role:everyone');
    expectSuccess(await t.patch('/realm', { direct_message_permission_group: { new: nobody } }, 'owner'));
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [t.users.cordelia.id], content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Direct messages are disabled in this organization.');
    // Messages to oneself and to bots stay possible.
    await sendDirectMessage(t, 'hamlet', ['hamlet'], 'self is fine');
    await sendDirectMessage(t, 'hamlet', ['bot'], 'bots are fine');
    expectSuccess(await t.patch('/realm', { direct_message_permission_group: { new: admins } }, 'owner'));
    await expectRefused(
      () => t.post('/messages', { type: 'direct', to: [t.users.cordelia.id], content: 'x' }, 'hamlet'),
      400,
      'BAD_REQUEST',
      'This conversation does not include any users who can authorize it.',
    );
    await sendDirectMessage(t, 'hamlet', ['iago'], 'iago authorizes');
    expectSuccess(await t.patch('/realm', { direct_message_permission_group: { new: everyone }, direct_message_initiator_group: { new: admins } }, 'owner'));
    await expectRefused(() => t.post('/messages', { type: 'direct', to: [t.users.shiva.id], content: 'x' }, 'othello'), 400, 'BAD_REQUEST', 'You are not allowed to start direct message conversations.');
    // An administrator may start it; then the other side may reply.
    await sendDirectMessage(t, 'iago', ['othello'], 'iago starts');
    await sendDirectMessage(t, 'othello', ['iago'], 'othello replies');
    expectSuccess(await t.patch('/realm', { direct_message_initiator_group: { new: everyone } }, 'owner'));
  });
});

describe('POST /messages: channel messages', () => {
  it('sends by channel name or id, with topic or its legacy alias subject', async () => {
    const a = await sendChannelMessage(t, 'hamlet', 'Denmark', 'castle', 'by name');
    const b = expectSuccess(await t.post('/messages', { type: 'channel', to: String(denmark), subject: 'castle', content: 'by id' }, 'hamlet')).id;
    const c = expectSuccess(await t.post('/messages', { type: 'stream', to: JSON.stringify(['Denmark']), topic: 'castle', content: 'json list' }, 'hamlet')).id;
    for (const id of [a, b, c]) {
      const m = await getMessage(t, 'cordelia', id);
      expect(m).toMatchObject({ type: 'stream', stream_id: denmark, display_recipient: 'Denmark', subject: 'castle' });
    }
    expect((await getMessage(t, 'cordelia', a)).recipient_id).toBe((await getMessage(t, 'cordelia', b)).recipient_id);
  });

  it('starting a topic follows it for the sender (automatic_new_visibility_policy)', async () => {
    const first = expectSuccess(await t.post('/messages', { type: 'stream', to: 'Denmark', topic: 'fresh topic', content: 'first' }, 'hamlet'));
    expect(first.automatic_new_visibility_policy).toBe(3);
    const again = expectSuccess(await t.post('/messages', { type: 'stream', to: 'Denmark', topic: 'fresh topic', content: 'second' }, 'hamlet'));
    expect(again.automatic_new_visibility_policy).toBeUndefined();
  });

  it('reads "(no topic)" and the display name as the empty topic', async () => {
    const a = await sendChannelMessage(t, 'hamlet', 'Denmark', '(no topic)', 'a');
    const b = await sendChannelMessage(t, 'hamlet', 'Denmark', 'general chat', 'b');
    const c = await sendChannelMessage(t, 'hamlet', 'Denmark', '', 'c');
    for (const id of [a, b, c]) {
      expect((await getMessage(t, 'hamlet', id)).subject).toBe('general chat');
      expect((await getMessage(t, 'hamlet', id, { allow_empty_topic_name: true })).subject).toBe('');
    }
  });

  it('truncates long topics and refuses unprintable characters', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'x'.repeat(70), 'long topic');
    expect((await getMessage(t, 'hamlet', id)).subject).toBe('x'.repeat(57) + '...');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'Denmark', topic: 'a\u0001b', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid character in topic, at position 2!');
  });

  it('refuses missing and unknown channels and topics', async () => {
    await expectRefused(() => t.post('/messages', { type: 'stream', topic: 'x', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Missing channel');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'Denmark', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Missing topic');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'Atlantis', topic: 'x', content: 'x' }, 'hamlet'), 400, 'STREAM_DOES_NOT_EXIST', "Channel 'Atlantis' does not exist", { stream: 'Atlantis' });
    await expectRefused(() => t.post('/messages', { type: 'stream', to: '99999', topic: 'x', content: 'x' }, 'hamlet'), 400, 'STREAM_DOES_NOT_EXIST', "Channel with ID '99999' does not exist", { stream_id: 99999 });
    await expectRefused(() => t.post('/messages', { type: 'stream', to: '["a","b"]', topic: 'x', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Expected exactly one channel');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'Denmark', topic: 'x', subject: 'y', content: 'x' }, 'hamlet'), 400, 'REQUEST_CONFUSING_VAR', "Can't decide between 'topic' and 'subject' arguments", { var_name1: 'topic', var_name2: 'subject' });
  });

  it('refuses private channels the sender cannot post to, with the same error as for archived ones', async () => {
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'secret', topic: 'x', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', "Not authorized to send to channel 'secret'");
    await sendChannelMessage(t, 'cordelia', 'secret', 'x', 'subscribers may');
    const old = await createChannel(t, 'old news', ['hamlet']);
    expectSuccess(await t.delete(`/streams/${old}`, {}, 'owner'));
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'old news', topic: 'x', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', "Not authorized to send to channel 'old news'");
  });

  it('applies can_send_message_group and can_create_topic_group', async () => {
    const admins = await systemGroupId(t.app.ctx.db, t.realmId, 'role:administrators');
    const announce = await createChannel(t, 'announce', ['hamlet', 'iago'], { can_send_message_group: admins });
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'announce', topic: 'x', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'You do not have permission to post in this channel.');
    await sendChannelMessage(t, 'iago', announce, 'news', 'admins may');
    await createChannel(t, 'curated', ['hamlet', 'iago'], { can_create_topic_group: admins });
    await sendChannelMessage(t, 'iago', 'curated', 'existing', 'new topic by admin');
    await sendChannelMessage(t, 'hamlet', 'curated', 'existing', 'existing topic is fine');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'curated', topic: 'brand new', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'You do not have permission to create new topics in this channel.');
  });

  it('applies the topics policy of the channel and the realm', async () => {
    await createChannel(t, 'strict', ['hamlet'], { topics_policy: 'disable_empty_topic' }, 'iago');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'strict', topic: '', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Sending messages to the general chat topic is not allowed in this channel.');
    await createChannel(t, 'chatty', ['hamlet'], { topics_policy: 'empty_topic_only' }, 'iago');
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'chatty', topic: 'a topic', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Only the general chat topic is allowed in this channel.');
    await sendChannelMessage(t, 'hamlet', 'chatty', '', 'empty topic only');
    expectSuccess(await t.patch('/realm', { topics_policy: 'disable_empty_topic' }, 'owner'));
    await expectRefused(() => t.post('/messages', { type: 'stream', to: 'Denmark', topic: '(no topic)', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Sending messages to the general chat topic is not allowed in this channel.');
    expectSuccess(await t.patch('/realm', { topics_policy: 'allow_empty_topic' }, 'owner'));
  });

  it('sets mention and wildcard flags per recipient, and the channel first_message_id', async () => {
    const ch = await createChannel(t, 'flags', ['hamlet', 'cordelia', 'othello']);
    const none = expectSuccess(await t.get(`/streams/${ch}`, {}, 'hamlet')).stream;
    expect(none.first_message_id).toBeNull();
    const q = await registerQueue(t, 'othello', { event_types: ['message'] });
    const id = await sendChannelMessage(t, 'hamlet', 'flags', 't', '@**all** and @**Cordelia, Lear\'s daughter**');
    const [e] = await getEvents(t, 'othello', q.queue_id, q.last_event_id);
    expect(e.flags).toEqual(['stream_wildcard_mentioned', 'wildcard_mentioned']);
    expect((await getMessage(t, 'cordelia', id)).flags).toEqual(['mentioned', 'stream_wildcard_mentioned', 'wildcard_mentioned']);
    expect(expectSuccess(await t.get(`/streams/${ch}`, {}, 'hamlet')).stream.first_message_id).toBe(id);
  });

  it('the client is the User-Agent name', async () => {
    const res = await t.request('POST', '/messages', { type: 'stream', to: 'Denmark', topic: 'ua', content: 'x' }, 'hamlet', { 'user-agent': 'ZulipTerminal/0.7.0 (Linux)' });
    expect((await getMessage(t, 'hamlet', expectSuccess(res).id)).client).toBe('ZulipTerminal');
  });
});

describe('wildcard mentions in large channels and topics', () => {
  it('need can_mention_many_users_group above 15 subscribers or topic participants', async () => {
    const crowd = [];
    for (let i = 0; i < 16; i++) crowd.push(await t.createUser({ email: `wild${i}@zulip.com`, fullName: `Wild ${i}` }));
    const ch = await createChannel(t, 'wild', ['hamlet', 'iago', ...crowd]);
    await expectRefused(
      () => t.post('/messages', { type: 'stream', to: String(ch), topic: 'x', content: 'hello @**all**' }, 'hamlet'),
      400,
      'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
      'You do not have permission to use channel wildcard mentions in this channel.',
    );
    await sendChannelMessage(t, 'iago', ch, 'x', 'admins may @**all**');
    for (const u of crowd) await sendChannelMessage(t, u, ch, 'busy', 'here');
    await expectRefused(
      () => t.post('/messages', { type: 'stream', to: String(ch), topic: 'busy', content: '@**topic** look' }, 'hamlet'),
      400,
      'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
      'You do not have permission to use topic wildcard mentions in this topic.',
    );
    // A small topic is fine, and flags only its participants.
    await sendChannelMessage(t, crowd[0]!, ch, 'small', 'start');
    const id = await sendChannelMessage(t, 'hamlet', ch, 'small', '@**topic** look');
    expect((await getMessage(t, crowd[0]!, id)).flags).toEqual(['topic_wildcard_mentioned', 'wildcard_mentioned']);
    expect((await getMessage(t, crowd[1]!, id)).flags).toEqual([]);
  });
});

describe('POST /messages/render', () => {
  it('renders Markdown without storing anything', async () => {
    let res: any;
    const d = await t.captureEvents(async () => {
      res = await t.post('/messages/render', { content: '**bold** @**King Hamlet**' }, 'cordelia');
    });
    expect(expectSuccess(res)).toEqual({
      result: 'success',
      msg: '',
      rendered: `<p><strong>bold</strong> <span class="user-mention" data-user-id="${t.users.hamlet.id}">@King Hamlet</span></p>`,
    });
    expect(d).toEqual([]);
    expectError(await t.post('/messages/render', { content: 'x'.repeat(10001) }, 'cordelia'), 400, 'BAD_REQUEST', 'content is too long (limit: 10000 characters)');
    expectError(await t.post('/messages/render', {}, 'cordelia'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'content' argument", { var_name: 'content' });
  });
});

describe('POST /messages: the number of SQL statements does not grow with recipients', () => {
  it('is the same for 2 and for 200 subscribers', async () => {
    const small = await createChannel(t, 'small', ['hamlet', 'cordelia']);
    const many = [];
    for (let i = 0; i < 198; i++) many.push(await t.createUser({ email: `crowd${i}@zulip.com`, fullName: `Crowd ${i}` }));
    const big = await createChannel(t, 'big', ['hamlet', 'cordelia', ...many]);
    // Warm up both topics (first messages create the topic and follow it).
    await sendChannelMessage(t, 'hamlet', small, 'x', 'warm');
    await sendChannelMessage(t, 'hamlet', big, 'x', 'warm');
    const stats = t.app.ctx.store.stats;
    const count = async (ch: number): Promise<number> => {
      const before = stats.queries;
      await sendChannelMessage(t, 'hamlet', ch, 'x', 'counted');
      return stats.queries - before;
    };
    const nSmall = await count(small);
    const nBig = await count(big);
    expect(nBig).toBe(nSmall);
    // SQLite: the generation of the send's read cache (domain/send-read-cache.ts; each send here
    // follows a commit, so it reads again), channel, sender's groups, the topic's first message,
    // subscribers, BEGIN, the message, its rows, COMMIT (test/http/send-read-cache.test.ts counts
    // the cached case). On PostgreSQL the channel, the sender's groups, the topic's first message
    // and the subscribers are one statement, and so are the message and its rows, which run
    // without BEGIN and COMMIT: that statement is all the send writes (domain/group-commit.ts).
    expect(nSmall).toBe(t.app.ctx.store.dialect === 'postgres' ? 2 : 9);
    const rows = await t.app.ctx.db.selectFrom('user_messages').select('user_id').where('message_id', '=', (await t.app.ctx.db.selectFrom('messages').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow()).id).execute();
    expect(rows.length).toBe(200);
  });
});

describe('PostgreSQL: registered hot statements run as named prepared statements', () => {
  it('prepares a registered text once per connection and answers each call with its own parameters', async () => {
    if (t.app.ctx.store.dialect !== 'postgres') return;
    const { openStore, preparedOnPostgres } = await import('../../src/store/db.js');
    const { sql } = await import('kysely');
    // One connection: the prepared statement is visible in pg_prepared_statements on it.
    const store = openStore({ databaseUrl: t.app.ctx.config.databaseUrl, dataDir: '', poolSize: 1 });
    try {
      const query = (n: number) => sql<{ x: number }>`SELECT ${n}::integer + 1 AS x`;
      const text = query(0).compile(store.db).sql;
      preparedOnPostgres(text);
      expect((await query(1).execute(store.db)).rows[0]!.x).toBe(2);
      expect((await query(41).execute(store.db)).rows[0]!.x).toBe(42);
      const named = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE statement = ${text}`.execute(store.db);
      expect(named.rows.map((r) => r.name.startsWith('parley_'))).toEqual([true]);
    } finally {
      await store.close();
    }
  });
});

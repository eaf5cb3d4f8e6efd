import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OutgoingWebhookDelivery } from '../../src/jobs/outgoing-webhooks.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, getMessage, newestMessages, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { registerQueue } from '../support/events.js';

/**
 * Outgoing-webhook bots against a real HTTP server on loopback that this
 * file starts. The test app allows private addresses explicitly
 * (outgoingWebhookAllowPrivate), except in the test that checks the refusal;
 * its scheduler is off, so each test runs the due jobs itself
 * (scheduler.runDueNow), once per try.
 */

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let hook: http.Server;
let base = '';
const hits: Hit[] = [];
/** What the bot server does next, per request (the last one repeats). */
let plan: Handler[] = [];

const reply = (status: number, body: unknown, type = 'application/json'): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': type });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};
/** Never answers (the request runs into the time limit). */
const hang: Handler = () => {};
/** Drops the connection without an answer. */
const drop: Handler = (req) => req.socket.destroy();

let t: TestServer;
let botId = 0;
let botToken = '';
let channelId = 0;
const TIMEOUT_MS = 300;

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const h = plan.length > 1 ? plan.shift()! : plan[0]!;
      h(req, res);
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  t = await startTestServer({ schedulerEnabled: false, outgoingWebhookAllowPrivate: true, outgoingWebhookTimeoutMs: TIMEOUT_MS });
  channelId = await createChannel(t, 'bots', ['hamlet', 'cordelia']);
  const body = expectSuccess(
    await t.post('/bots', { full_name: 'Echo Bot', short_name: 'echo', bot_type: 3, payload_url: JSON.stringify(`${base}/hook`), interface_type: 1 }, 'hamlet'),
  );
  botId = body.user_id;
  botToken = (await t.app.ctx.db.selectFrom('bot_services').select('token').where('user_id', '=', botId).executeTakeFirstOrThrow()).token;
});
afterAll(async () => {
  await t?.close();
  hook.closeAllConnections();
  await new Promise((r) => hook.close(r));
});
beforeEach(() => {
  hits.length = 0;
  plan = [reply(200, { response_not_required: true })];
});

const jobs = () => t.app.ctx.db.selectFrom('outgoing_webhook_jobs').selectAll().execute();
const run = () => t.app.scheduler.runDueNow();
const lastId = async () => (await t.app.ctx.db.selectFrom('messages').select((eb) => eb.fn.max('id').as('m')).executeTakeFirstOrThrow()).m as number;
/** Messages after `after`, oldest first, as [sender, recipient (channel id or DM key), topic, content]. */
async function messagesAfter(after: number) {
  const rows = await t.app.ctx.db.selectFrom('messages').select(['sender_id', 'stream_id', 'dm_key', 'topic', 'content', 'sending_client']).where('id', '>', after).orderBy('id').execute();
  return rows.map((r) => [r.sender_id, r.stream_id ?? r.dm_key, r.topic, r.content, r.sending_client]);
}
const dmKey = (...ids: number[]) => [...ids].sort((a, b) => a - b).join(',');
const link = (id: number) => `http://zulip.testserver/#narrow/channel/${channelId}-bots/topic/greetings/near/${id}`;

describe('creating and changing outgoing-webhook bots', () => {
  it('POST /bots bot_type 3 stores a service; realm_bot add and realm_bots show it', async () => {
    let id = 0;
    const events = await t.captureEvents(async () => {
      id = expectSuccess(await t.post('/bots', { full_name: 'Slack Bot', short_name: 'slacky', bot_type: 3, payload_url: JSON.stringify(`${base}/slack`), interface_type: 2 }, 'cordelia')).user_id;
    });
    const service = await t.app.ctx.db.selectFrom('bot_services').selectAll().where('user_id', '=', id).executeTakeFirstOrThrow();
    expect(service).toEqual({ id: service.id, user_id: id, name: 'slacky', base_url: `${base}/slack`, token: expect.stringMatching(/^[A-Za-z0-9]{32}$/), interface: 2 });
    const add = events.find((e) => e.event.type === 'realm_bot')!.event as any;
    expect(add.bot.bot_type).toBe(3);
    expect(add.bot.services).toEqual([{ base_url: `${base}/slack`, interface: 2, token: service.token }]);
    const state = await registerQueue(t, 'cordelia', { fetch_event_types: ['realm_bot'] });
    expect(state.realm_bots.find((b: any) => b.user_id === id).services).toEqual([{ base_url: `${base}/slack`, interface: 2, token: service.token }]);
    // Other bot types still list no services.
    expect(state.realm_bots.filter((b: any) => b.bot_type !== 3).every((b: any) => b.services.length === 0)).toBe(true);
  });

  it('refuses a bad URL, a bad interface and embedded bots, creating nothing', async () => {
    const before = await t.app.ctx.db.selectFrom('users').select('id').execute();
    expectError(await t.post('/bots', { full_name: 'Bad Url', short_name: 'badurl', bot_type: 3, payload_url: JSON.stringify('not a url') }, 'hamlet'), 400, 'BAD_REQUEST', 'payload_url is not a URL');
    expectError(await t.post('/bots', { full_name: 'Bad Url', short_name: 'badurl', bot_type: 3, payload_url: JSON.stringify('file:///etc/passwd') }, 'hamlet'), 400, 'BAD_REQUEST', 'payload_url is not a URL');
    expectError(
      await t.post('/bots', { full_name: 'Bad Iface', short_name: 'badiface', bot_type: 3, payload_url: JSON.stringify(`${base}/x`), interface_type: 3 }, 'hamlet'),
      400,
      'BAD_REQUEST',
      'Invalid interface type',
    );
    expectError(await t.post('/bots', { full_name: 'Embedded', short_name: 'embedded', bot_type: 4 }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid bot type');
    expect(await t.app.ctx.db.selectFrom('users').select('id').execute()).toEqual(before);
  });

  it('PATCH /bots/{id} service_payload_url and service_interface: realm_bot update {services}', async () => {
    const id = expectSuccess(await t.post('/bots', { full_name: 'Mover Bot', short_name: 'mover', bot_type: 3, payload_url: JSON.stringify(`${base}/a`) }, 'othello')).user_id;
    const token = (await t.app.ctx.db.selectFrom('bot_services').select('token').where('user_id', '=', id).executeTakeFirstOrThrow()).token;
    let body: any;
    const events = await t.captureEvents(async () => {
      body = expectSuccess(await t.patch(`/bots/${id}`, { service_payload_url: JSON.stringify(`${base}/b`), service_interface: 2 }, 'othello'));
    });
    expect(body.service_payload_url).toBe(`${base}/b`);
    expect(body.service_interface).toBe(2);
    expect(events.map((e) => e.event)).toEqual([{ type: 'realm_bot', op: 'update', bot: { user_id: id, services: [{ base_url: `${base}/b`, interface: 2, token }] } }]);
    expect([...events[0]!.userIds].sort((a, b) => a - b)).toEqual([t.users.owner.id, t.users.iago.id, t.users.othello.id].sort((a, b) => a - b));
    expectError(await t.patch(`/bots/${id}`, { service_payload_url: JSON.stringify('nope') }, 'othello'), 400, 'BAD_REQUEST', 'service_payload_url is not a URL');
    expectError(await t.patch(`/bots/${id}`, { service_payload_url: JSON.stringify(`${base}/c`), service_interface: 7 }, 'othello'), 400, 'BAD_REQUEST', 'Invalid interface type');
    const row = await t.app.ctx.db.selectFrom('bot_services').select(['base_url', 'interface']).where('user_id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ base_url: `${base}/b`, interface: 2 });
  });
});

describe('triggers and the request', () => {
  it('a mention in a channel: one job, the exact generic payload, the answer posted in the same topic with its message event', async () => {
    plan = [reply(200, { content: 'pong **loud**' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** ping `code`');
    expect((await jobs()).map((j) => [j.bot_id, j.message_id, j.trigger, j.failed_tries])).toEqual([[botId, msgId, 'mention', 0]]);
    const events = await t.captureEvents(async () => expect(await run()).toBe(1));
    expect(hits).toHaveLength(1);
    expect(hits[0]!.path).toBe('/hook');
    expect(hits[0]!.headers['content-type']).toBe('application/json');
    expect(hits[0]!.headers['user-agent']).toMatch(/^ZulipOutgoingWebhook\//);
    // The message as Zulip's finalize_payload gives it to webhooks: raw Markdown, the HTML kept, avatar given, no flags.
    const seen = await getMessage(t, 'cordelia', msgId, { apply_markdown: false });
    expect(seen.avatar_url).toBeNull();
    const html = (await getMessage(t, 'cordelia', msgId)).content;
    const { flags: _flags, ...expected } = seen;
    expect(JSON.parse(hits[0]!.body)).toEqual({
      data: '@**Echo Bot** ping `code`',
      // client_gravatar=False: the avatar URL is always given (GET /messages/{id} leaves a gravatar out).
      message: { ...expected, avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/), rendered_content: html },
      bot_email: 'echo-bot@zulip.testserver',
      bot_full_name: 'Echo Bot',
      token: botToken,
      trigger: 'mention',
    });
    expect(await messagesAfter(msgId)).toEqual([[botId, channelId, 'greetings', 'pong **loud**', 'OutgoingWebhookResponse']]);
    const answerId = await lastId();
    const msgEvents = events.filter((e) => e.event.type === 'message');
    expect(msgEvents).toHaveLength(1);
    expect((msgEvents[0]!.event as any).message).toMatchObject({ id: answerId, sender_id: botId, stream_id: channelId, subject: 'greetings', content: '<p>pong <strong>loud</strong></p>', client: 'OutgoingWebhookResponse' });
    expect([...msgEvents[0]!.userIds].sort((a, b) => a - b)).toEqual([t.users.hamlet.id, t.users.cordelia.id].sort((a, b) => a - b));
    expect(await jobs()).toEqual([]);
  });

  it('a group mention triggers a member bot only when it is subscribed to the channel', async () => {
    expectSuccess(await t.post('/user_groups/create', { name: 'helpers', description: 'bots that help', members: [botId] }, 'owner'));
    plan = [reply(200, { response_not_required: true })];
    await sendChannelMessage(t, 'cordelia', 'bots', 'groups', '@*helpers* anyone?');
    expect(await jobs()).toEqual([]);
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'bots' }], principals: [botId] }, 'owner'));
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'groups', '@*helpers* now?');
    expect((await jobs()).map((j) => [j.bot_id, j.message_id, j.trigger])).toEqual([[botId, msgId, 'mention']]);
    await run();
    expect(hits).toHaveLength(1);
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['bots'], principals: [botId] }, 'owner'));
  });

  it('no trigger: a mention in a code block, a silent mention, a message by a bot', async () => {
    await sendChannelMessage(t, 'cordelia', 'bots', 'quiet', '`@**Echo Bot**` and @_**Echo Bot**');
    await sendChannelMessage(t, t.users.bot, 'bots', 'quiet', '@**Echo Bot** from a bot');
    expect(await jobs()).toEqual([]);
  });

  it('a 1:1 DM: trigger direct_message, recipient_id is the sender\'s, the answer is a DM back', async () => {
    plan = [reply(200, { content: 'hello in private' })];
    const msgId = await sendDirectMessage(t, 'cordelia', [{ ...t.users.hamlet, id: botId }], 'hi bot');
    expect((await jobs()).map((j) => j.trigger)).toEqual(['direct_message']);
    await run();
    const payload = JSON.parse(hits[0]!.body);
    expect(payload.trigger).toBe('direct_message');
    expect(payload.data).toBe('hi bot');
    const cordeliaRecipient = await t.app.ctx.db.selectFrom('recipients').select('id').where('type', '=', 1).where('type_id', '=', t.users.cordelia.id).executeTakeFirstOrThrow();
    expect(payload.message.recipient_id).toBe(cordeliaRecipient.id);
    expect(payload.message.type).toBe('private');
    expect(payload.message.display_recipient.map((r: any) => r.id).sort()).toEqual([t.users.cordelia.id, botId].sort());
    expect(await messagesAfter(msgId)).toEqual([[botId, dmKey(botId, t.users.cordelia.id), '', 'hello in private', 'OutgoingWebhookResponse']]);
    // Processed: read for the bot (Zulip's do_flag_service_bots_messages_as_processed).
    const row = await t.app.ctx.db.selectFrom('user_messages').select('flags').where('user_id', '=', botId).where('message_id', '=', msgId).executeTakeFirstOrThrow();
    expect(row.flags & 1).toBe(1);
  });

  it('a group DM with the bot triggers it; the answer goes to the whole group', async () => {
    plan = [reply(200, { content: 'hi all' })];
    const msgId = await sendDirectMessage(t, 'cordelia', ['hamlet', { ...t.users.hamlet, id: botId }], 'group hello');
    await run();
    expect(JSON.parse(hits[0]!.body).trigger).toBe('direct_message');
    expect(await messagesAfter(msgId)).toEqual([[botId, dmKey(botId, t.users.cordelia.id, t.users.hamlet.id), '', 'hi all', 'OutgoingWebhookResponse']]);
  });

  it('response_not_required, an empty content, "" and a missing content post nothing', async () => {
    for (const answer of [{ response_not_required: true, content: 'x' }, { content: '  ' }, '""', {}]) {
      plan = [reply(200, answer)];
      const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** quiet please');
      await run();
      expect(await messagesAfter(msgId)).toEqual([]);
      expect(await jobs()).toEqual([]);
    }
  });

  it('the Slack interface posts a form; a DM to a Slack bot gets its refusal and no request', async () => {
    const id = expectSuccess(await t.post('/bots', { full_name: 'Slacker', short_name: 'slacker', bot_type: 3, payload_url: JSON.stringify(`${base}/slack`), interface_type: 2 }, 'hamlet')).user_id;
    const token = (await t.app.ctx.db.selectFrom('bot_services').select('token').where('user_id', '=', id).executeTakeFirstOrThrow()).token;
    plan = [reply(200, { text: 'from slack' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Slacker** hi');
    const sent = await getMessage(t, 'cordelia', msgId);
    await run();
    expect(hits[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect([...new URLSearchParams(hits[0]!.body)]).toEqual([
      ['token', token],
      ['team_id', `T${t.realmId}`],
      ['team_domain', 'zulip.testserver'],
      ['channel_id', `C${channelId}`],
      ['channel_name', 'bots'],
      ['thread_ts', String(sent.timestamp)],
      ['timestamp', String(sent.timestamp)],
      ['user_id', `U${t.users.cordelia.id}`],
      ['user_name', "Cordelia, Lear's daughter"],
      ['text', '@**Slacker** hi'],
      ['trigger_word', 'mention'],
      ['service_id', String(id)],
    ]);
    expect(await messagesAfter(msgId)).toEqual([[id, channelId, 'greetings', 'from slack', 'OutgoingWebhookResponse']]);
    hits.length = 0;
    const dmId = await sendDirectMessage(t, 'cordelia', [{ ...t.users.hamlet, id }], 'psst');
    await run();
    expect(hits).toEqual([]);
    expect(await messagesAfter(dmId)).toEqual([[id, dmKey(id, t.users.cordelia.id), '', "Failure! Slack outgoing webhooks don't support direct messages.", 'OutgoingWebhookResponse']]);
  });
});

describe('failures, retries and time limits', () => {
  const owner = () => t.users.hamlet.id;

  it('a time-out is tried 4 times in all, then "Bot is unavailable" and the owner is told', async () => {
    plan = [hang];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** are you there');
    for (let i = 1; i <= 3; i++) {
      await run();
      expect(hits).toHaveLength(i);
      expect((await jobs()).map((j) => j.failed_tries)).toEqual([i]);
      expect(await messagesAfter(msgId)).toEqual([]);
    }
    await run();
    expect(hits).toHaveLength(4);
    expect(await jobs()).toEqual([]);
    expect(await messagesAfter(msgId)).toEqual([
      [botId, channelId, 'greetings', 'Failure! Bot is unavailable', 'OutgoingWebhookResponse'],
      [botId, dmKey(botId, owner()), '', `[A message](${link(msgId)}) to your bot @_**Echo Bot** triggered an outgoing webhook.\nRequest timed out after 0.3 seconds.`, 'OutgoingWebhookResponse'],
    ]);
  });

  it('a dropped connection is retried, and a later answer is posted once', async () => {
    plan = [drop, drop, reply(200, { content: 'third time lucky' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** flaky');
    await run();
    await run();
    expect(await messagesAfter(msgId)).toEqual([]);
    await run();
    expect(hits).toHaveLength(3);
    expect(await messagesAfter(msgId)).toEqual([[botId, channelId, 'greetings', 'third time lucky', 'OutgoingWebhookResponse']]);
    expect(await jobs()).toEqual([]);
  });

  it('connection errors on every try: "A connection error occurred. Is my bot server down?"', async () => {
    plan = [drop];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** down');
    for (let i = 0; i < 4; i++) await run();
    expect(hits).toHaveLength(4);
    expect((await messagesAfter(msgId)).map((m) => m[3])).toEqual([
      'Failure! Bot is unavailable',
      `[A message](${link(msgId)}) to your bot @_**Echo Bot** triggered an outgoing webhook.\nA connection error occurred. Is my bot server down?`,
    ]);
  });

  it('a 5xx is not retried (as Zulip): the failure and the owner\'s notice with the status and the body', async () => {
    plan = [reply(503, "busy 'now'", 'text/plain'), reply(200, { content: 'never' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** 5xx');
    await run();
    await run();
    expect(hits).toHaveLength(1);
    expect(await messagesAfter(msgId)).toEqual([
      [botId, channelId, 'greetings', 'Failure! Third party responded with 503', 'OutgoingWebhookResponse'],
      [
        botId,
        dmKey(botId, owner()),
        '',
        `[A message](${link(msgId)}) to your bot @_**Echo Bot** triggered an outgoing webhook.\nThe webhook got a response with status code *503*.\nThe response contains the following payload:\n\`\`\`\nb"busy 'now'"\n\`\`\``,
        'OutgoingWebhookResponse',
      ],
    ]);
  });

  it('a 4xx with no body: the failure and the status, no retry', async () => {
    plan = [reply(404, '', 'text/plain')];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** 404');
    await run();
    expect(hits).toHaveLength(1);
    expect((await messagesAfter(msgId)).map((m) => m[3])).toEqual([
      'Failure! Third party responded with 404',
      `[A message](${link(msgId)}) to your bot @_**Echo Bot** triggered an outgoing webhook.\nThe webhook got a response with status code *404*.`,
    ]);
  });

  it('an answer that is not JSON, or not an object', async () => {
    for (const [body, error, shown] of [
      ['<html>oops</html>', 'Invalid JSON in response', "'<html>oops</html>'"],
      ['[1, 2]', 'Invalid response format', "'[1, 2]'"],
    ] as const) {
      plan = [reply(200, body, 'text/html')];
      const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** bad answer');
      await run();
      expect((await messagesAfter(msgId)).map((m) => m[3])).toEqual([
        `Failure! ${error}`,
        `[A message](${link(msgId)}) to your bot @_**Echo Bot** triggered an outgoing webhook.\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${error}\nThe response contains the following payload:\n\`\`\`\n${shown}\n\`\`\``,
      ]);
    }
  });

  it('a private address is refused unless allowed: no request, Zulip\'s 407 wording', async () => {
    const config = t.app.ctx.config as { outgoingWebhookAllowPrivate: boolean };
    config.outgoingWebhookAllowPrivate = false;
    try {
      const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** inside');
      await run();
      expect(hits).toEqual([]);
      expect(await jobs()).toEqual([]);
      expect((await messagesAfter(msgId)).map((m) => m[3])).toEqual([
        'Failure! Third party responded with 407',
        `[A message](${link(msgId)}) to your bot @_**Echo Bot** triggered an outgoing webhook.\nThe URL configured for the webhook is for a private or disallowed network.`,
      ]);
    } finally {
      config.outgoingWebhookAllowPrivate = true;
    }
  });

  it('two workers scanning at once post one request and one answer', async () => {
    plan = [reply(200, { content: 'only once' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** race');
    const a = new OutgoingWebhookDelivery(t.app.ctx);
    const b = new OutgoingWebhookDelivery(t.app.ctx);
    const ran = await Promise.all([a.runDue(Date.now()), b.runDue(Date.now())]);
    expect(ran[0] + ran[1]).toBe(1);
    expect(hits).toHaveLength(1);
    expect(await messagesAfter(msgId)).toEqual([[botId, channelId, 'greetings', 'only once', 'OutgoingWebhookResponse']]);
  });

  it('a job claimed by a process that stopped waits for its claim to run out, then runs in another', async () => {
    plan = [reply(200, { content: 'after the restart' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** survive');
    const now = Math.floor(Date.now() / 1000);
    // Another process claimed it and died during the request.
    await t.app.ctx.db.updateTable('outgoing_webhook_jobs').set({ claimed_until: now + 30 }).execute();
    const fresh = new OutgoingWebhookDelivery(t.app.ctx);
    expect(await fresh.runDue(now * 1000)).toBe(0);
    expect(hits).toEqual([]);
    expect(await fresh.nextDueAt()).toBeNull();
    // The claim runs out: the next process to scan takes the job over.
    expect(await fresh.runDue((now + 31) * 1000)).toBe(1);
    expect(hits).toHaveLength(1);
    expect(await messagesAfter(msgId)).toEqual([[botId, channelId, 'greetings', 'after the restart', 'OutgoingWebhookResponse']]);
    expect(await jobs()).toEqual([]);
  });

  it('an answer whose job was taken over meanwhile is not posted twice', async () => {
    // Process A's request hangs past its claim; process B claims again and answers first.
    let releaseA: () => void = () => {};
    plan = [
      (_req, res) => {
        releaseA = () => reply(200, { content: 'from A' })(_req, res);
      },
      reply(200, { content: 'from B' }),
    ];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'greetings', '@**Echo Bot** twice');
    const config = t.app.ctx.config as { outgoingWebhookTimeoutMs: number };
    config.outgoingWebhookTimeoutMs = 5000;
    try {
      const now = Math.floor(Date.now() / 1000);
      const a = new OutgoingWebhookDelivery(t.app.ctx).runDue(now * 1000);
      while (hits.length < 1) await new Promise((r) => setTimeout(r, 10));
      // A's claim has run out by B's clock: B takes the job and answers.
      await new OutgoingWebhookDelivery(t.app.ctx).runDue((now + 3600) * 1000);
      releaseA();
      await a;
    } finally {
      config.outgoingWebhookTimeoutMs = TIMEOUT_MS;
    }
    expect(hits).toHaveLength(2);
    expect(await messagesAfter(msgId)).toEqual([[botId, channelId, 'greetings', 'from B', 'OutgoingWebhookResponse']]);
    expect(await jobs()).toEqual([]);
  });

  it('the answer is readable by the conversation (GET /messages as the sender)', async () => {
    plan = [reply(200, { content: 'visible' })];
    const msgId = await sendChannelMessage(t, 'cordelia', 'bots', 'visible', '@**Echo Bot** show');
    await run();
    const msgs = await newestMessages(t, 'cordelia', [{ operator: 'channel', operand: channelId }, { operator: 'topic', operand: 'visible' }]);
    expect(msgs.map((m: any) => [m.sender_id, m.content])).toEqual([
      [t.users.cordelia.id, expect.stringContaining('show')],
      [botId, '<p>visible</p>'],
    ]);
    expect(msgs[1].id).toBeGreaterThan(msgId);
  });
});

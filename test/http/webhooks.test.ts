import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doDeactivateUser } from '../../src/domain/actions/users.js';
import { fnmatch, truncateTopic } from '../../src/http/endpoints/webhooks.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectChannelMessage, messagesSentBy, postHook, setupHook, type Hook } from '../support/webhooks.js';

/** The shared webhook framework, exercised through the generic JSON integration. */
let t: TestServer;
let hook: Hook;
beforeAll(async () => {
  t = await startTestServer();
  hook = await setupHook(t, 'jsonhook', 'json-hooks');
});
afterAll(async () => t.close());

describe('incoming webhook framework (JSON integration)', () => {
  it('posts json.dumps(payload, indent=2) in a code block under the topic "JSON"', async () => {
    const payload = { ok: true, n: 3, nested: { list: [1, 'two'], empty: {} }, name: 'café' };
    const content = '```json\n{\n  "ok": true,\n  "n": 3,\n  "nested": {\n    "list": [\n      1,\n      "two"\n    ],\n    "empty": {}\n  },\n  "name": "caf\\u00e9"\n}\n```';
    await expectChannelMessage(t, hook, 'json', {}, payload, {}, 'JSON', content);
  });

  it('the topic parameter overrides the topic; stream may be an id', async () => {
    await expectChannelMessage(t, hook, 'json', { topic: 'alerts' }, { a: 1 }, {}, 'alerts', '```json\n{\n  "a": 1\n}\n```');
    const { res, sent } = await messagesSentBy(t, () => postHook(t, 'json', { api_key: hook.key, stream: String(hook.channelId) }, [1]));
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(sent).toEqual([{ channel: hook.channel, topic: 'JSON', content: '```json\n[\n  1\n]\n```', sender_id: hook.botId, dm_to: null }]);
  });

  it('without a stream, the message is a DM to the bot owner', async () => {
    const { res, sent } = await messagesSentBy(t, () => postHook(t, 'json', { api_key: hook.key }, { x: null }));
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(sent).toEqual([{ channel: null, topic: '', content: '```json\n{\n  "x": null\n}\n```', sender_id: hook.botId, dm_to: [t.users.hamlet.id, hook.botId].sort((a, b) => a - b) }]);
  });

  it('Basic credentials work as well as api_key', async () => {
    const bot = (await t.app.ctx.db.selectFrom('users').select(['delivery_email']).where('id', '=', hook.botId).executeTakeFirstOrThrow()).delivery_email;
    const { res, sent } = await messagesSentBy(t, async () => {
      const r = await t.app.http.inject({ method: 'POST', url: `/api/v1/external/json?stream=${hook.channel}`, headers: { 'content-type': 'application/json', authorization: 'Basic ' + Buffer.from(`${bot}:${hook.key}`).toString('base64') }, payload: '{}' });
      return { status: r.statusCode, body: JSON.parse(r.body), headers: r.headers as never };
    });
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(sent.map((m) => m.content)).toEqual(['```json\n{}\n```']);
  });

  it('a channel that does not exist is a success; Notification Bot tells the owner, at most once a minute', async () => {
    const owner = t.users.hamlet;
    const notices = async (): Promise<string[]> => {
      const got = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 20, num_after: 0, apply_markdown: false, narrow: [{ operator: 'dm', operand: 'notification-bot@zulip.com' }] }, owner));
      return (got.messages as any[]).map((m) => m.content);
    };
    const before = await notices();
    const botMessages = async (): Promise<number> => (await t.app.ctx.db.selectFrom('messages').select('id').where('sender_id', '=', hook.botId).execute()).length;
    const sentBefore = await botMessages();
    const bot = (await t.app.ctx.db.selectFrom('users').select(['delivery_email']).where('id', '=', hook.botId).executeTakeFirstOrThrow()).delivery_email;
    const res = await postHook(t, 'json', { api_key: hook.key, stream: 'no-such-channel' }, { a: 1 });
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect((await notices()).slice(before.length)).toEqual([
      `Your bot \`${bot}\` tried to send a message to channel #**no-such-channel**, but that channel does not exist. Click [here](#channels/new) to create it.`,
    ]);
    // Within the minute a second miss (here by id) sends no second notice.
    expect((await postHook(t, 'json', { api_key: hook.key, stream: '99999' }, { a: 1 })).body).toEqual({ result: 'success', msg: '' });
    expect((await notices()).length).toBe(before.length + 1);
    // No channel message was written anywhere.
    expect(await botMessages()).toBe(sentBefore);
  });

  it('refuses bad keys, a deactivated bot and malformed JSON with Zulip errors, sending nothing', async () => {
    const cases: [Record<string, string>, string, number, string, string, Record<string, unknown>][] = [
      [{ stream: hook.channel }, '{}', 400, 'REQUEST_VARIABLE_MISSING', "Missing 'api_key' argument", { var_name: 'api_key' }],
      [{ api_key: 'short', stream: hook.channel }, '{}', 401, 'INVALID_API_KEY', 'Malformed API key', {}],
      [{ api_key: 'A'.repeat(32), stream: hook.channel }, '{}', 401, 'INVALID_API_KEY', 'Invalid API key', {}],
      [{ api_key: hook.key, stream: hook.channel }, '{"a":', 400, 'INVALID_JSON', 'Malformed JSON', {}],
      [{ api_key: hook.key, stream: hook.channel }, '', 400, 'INVALID_JSON', 'Malformed JSON', {}],
      [{ api_key: hook.key, stream: hook.channel, only_events: 'nope' }, '{}', 400, 'BAD_REQUEST', 'only_events is not valid JSON', {}],
    ];
    for (const [query, body, status, code, msg, extra] of cases) {
      const { res, sent } = await messagesSentBy(t, () => postHook(t, 'json', query, body));
      expectError(res, status, code, msg, extra);
      expect(sent).toEqual([]);
    }
    const other = await setupHook(t, 'gonehook', 'gone-hooks');
    const row = await t.row(other.botId);
    await transact(t.app.ctx, (tx) => doDeactivateUser(tx, row));
    expectError(await postHook(t, 'json', { api_key: other.key, stream: other.channel }, '{}'), 401, 'USER_DEACTIVATED', 'Account is deactivated');
  });

  it('a webhook bot key still cannot use the rest of the API', async () => {
    const bot = (await t.app.ctx.db.selectFrom('users').select(['delivery_email']).where('id', '=', hook.botId).executeTakeFirstOrThrow()).delivery_email;
    expectError(await t.get('/users/me', {}, { id: hook.botId, email: bot, apiKey: hook.key, password: '', role: 400, name: '' }), 401, 'UNAUTHORIZED', 'This API is not available to incoming webhook bots.');
  });

  it('fnmatch and topic truncation follow Python', () => {
    expect([fnmatch('push', 'push'), fnmatch('pull_request_opened', 'pull_request*'), fnmatch('issues', 'issue?'), fnmatch('push', 'Push'), fnmatch('a.b', 'a?b'), fnmatch('ab', '[!a]b')]).toEqual([true, true, true, false, true, false]);
    expect(truncateTopic('x'.repeat(60))).toBe('x'.repeat(60));
    expect(truncateTopic('x'.repeat(61))).toBe('x'.repeat(57) + '...');
  });
});

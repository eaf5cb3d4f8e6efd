import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

/** GET /messages/matches_narrow (Zulip's messages_in_narrow_backend in views/message_fetch.py). */

let t: TestServer;
let general: number;
let other: number;
let secret: number;
beforeAll(async () => {
  t = await startTestServer();
  general = await createChannel(t, 'mn general', ['hamlet', 'othello']);
  other = await createChannel(t, 'mn other', ['hamlet', 'othello']);
  secret = await createChannel(t, 'mn secret', ['othello'], { invite_only: true });
});
afterAll(async () => t.close());

const matches = async (ids: number[], narrow: unknown[], who: 'hamlet' | 'othello' | 'cordelia' = 'hamlet') =>
  expectSuccess(await t.get('/messages/matches_narrow', { msg_ids: ids, narrow }, who));

describe('GET /messages/matches_narrow', () => {
  it('answers, for the ids that match, the rendered content and the escaped topic', async () => {
    const a = await sendChannelMessage(t, 'othello', general, 'fish & chips', 'We **run** daily');
    const b = await sendChannelMessage(t, 'othello', other, 'fish & chips', 'not here');
    const c = await sendChannelMessage(t, 'othello', general, 'other <topic>', 'Also here');
    const body = await matches([a, b, c], [{ operator: 'channel', operand: general }]);
    expect(body).toEqual({
      result: 'success',
      msg: '',
      messages: {
        [String(a)]: { match_content: '<p>We <strong>run</strong> daily</p>', match_subject: 'fish &amp; chips' },
        [String(c)]: { match_content: '<p>Also here</p>', match_subject: 'other &lt;topic&gt;' },
      },
    });
    expect((await matches([a, b, c], [{ operator: 'channel', operand: general }, { operator: 'topic', operand: 'fish & chips' }])).messages).toEqual({
      [String(a)]: { match_content: '<p>We <strong>run</strong> daily</p>', match_subject: 'fish &amp; chips' },
    });
    expect((await matches([a, b, c], [])).messages).toEqual({
      [String(a)]: expect.any(Object),
      [String(b)]: expect.any(Object),
      [String(c)]: expect.any(Object),
    });
    expect((await matches([], [])).messages).toEqual({});
  });

  it('highlights search terms as GET /messages does', async () => {
    const a = await sendChannelMessage(t, 'othello', general, 'mornings', 'I am RUNNING late today');
    const b = await sendChannelMessage(t, 'othello', general, 'running club', 'nothing to see');
    const c = await sendChannelMessage(t, 'othello', general, 'mornings', 'walking instead');
    const narrow = [{ operator: 'search', operand: 'run' }];
    const body = await matches([a, b, c], narrow);
    expect(body.messages).toEqual({
      [String(a)]: { match_content: '<p>I am <span class="highlight">RUNNING</span> late today</p>', match_subject: 'mornings' },
      [String(b)]: { match_content: '<p>nothing to see</p>', match_subject: '<span class="highlight">running</span> club' },
    });
    // Same highlighting as GET /messages.
    const fetched = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow }, 'hamlet')).messages as any[];
    for (const m of fetched.filter((x) => x.id === a || x.id === b)) expect(body.messages[String(m.id)]).toEqual({ match_content: m.match_content, match_subject: m.match_subject });
  });

  it('only messages the caller received: private, unsubscribed-public and others\u2019 DMs are absent', async () => {
    const hidden = await sendChannelMessage(t, 'othello', secret, 'x', 'secret');
    const dm = await sendDirectMessage(t, 'othello', ['cordelia'], 'psst');
    const mine = await sendDirectMessage(t, 'othello', ['hamlet'], 'hello hamlet');
    const pub = await sendChannelMessage(t, 'othello', general, 'p', 'public');
    // Hamlet received only his DM and the public message; Cordelia (not subscribed to the public channel: no
    // user_messages row, so no match, as in Zulip) only hers.
    expect((await matches([hidden, dm, mine, pub, 99999999], [])).messages).toEqual({ [String(mine)]: { match_content: '<p>hello hamlet</p>', match_subject: '' }, [String(pub)]: expect.any(Object) });
    expect(Object.keys((await matches([hidden, dm, mine, pub], [], 'cordelia')).messages)).toEqual([String(dm)]);
    expect(Object.keys((await matches([hidden, dm, mine, pub], [{ operator: 'is', operand: 'dm' }], 'othello')).messages)).toEqual([String(dm), String(mine)]);
  });

  it('errors: missing or malformed parameters, bad narrows', async () => {
    expectError(await t.get('/messages/matches_narrow', { narrow: [] }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'msg_ids' argument", { var_name: 'msg_ids' });
    expectError(await t.get('/messages/matches_narrow', { msg_ids: [1] }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'narrow' argument", { var_name: 'narrow' });
    expectError(await t.get('/messages/matches_narrow', { msg_ids: '["a"]', narrow: [] }, 'hamlet'), 400, 'BAD_REQUEST', 'msg_ids[0] is not an integer');
    expectError(await t.get('/messages/matches_narrow', { msg_ids: [1], narrow: [{ operator: 'channel', operand: 'no such channel' }] }, 'hamlet'), 400, 'BAD_NARROW', 'Invalid narrow operator: unknown channel no such channel', { desc: 'unknown channel no such channel' });
    expectError(await t.get('/messages/matches_narrow', { msg_ids: [1, 0], narrow: [] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.get('/messages/matches_narrow', { msg_ids: [2147483648], narrow: [] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expect((await t.get('/messages/matches_narrow', { msg_ids: [1], narrow: [] }, null)).status).toBe(401);
  });
});

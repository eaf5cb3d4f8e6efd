import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectNoChange, mkChannel, plain } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('POST /user_topics', () => {
  it('sets policies on topics without messages; events to the user only; unchanged means no event', async () => {
    const id = await mkChannel(t, 'topics');
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'Lunch', visibility_policy: 1 }, 'hamlet'))));
    expect(d).toEqual([
      { event: { type: 'muted_topics', muted_topics: [['topics', 'Lunch', expect.any(Number)]] }, userIds: [t.users.hamlet.id] },
      { event: { type: 'user_topic', stream_id: id, topic_name: 'Lunch', last_updated: expect.any(Number), visibility_policy: 1 }, userIds: [t.users.hamlet.id] },
    ]);
    await expectNoChange(t, async () => expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'lunch', visibility_policy: 1 }, 'hamlet')));
    const follow = plain(await t.captureEvents(async () => expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'LUNCH', visibility_policy: 3 }, 'hamlet'))));
    // Matching is case-insensitive; the stored spelling stays.
    expect(follow[1]!.event).toMatchObject({ topic_name: 'Lunch', visibility_policy: 3 });
    expect(follow[0]!.event).toEqual({ type: 'muted_topics', muted_topics: [] });
    const off = plain(await t.captureEvents(async () => expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'Lunch', visibility_policy: 0 }, 'hamlet'))));
    expect(off[1]!.event).toMatchObject({ type: 'user_topic', visibility_policy: 0 });
    await expectNoChange(t, async () => expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'never set', visibility_policy: 0 }, 'hamlet')));
  });

  it('the empty topic arrives as its display name', async () => {
    const id = await mkChannel(t, 'empty-topic');
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'general chat', visibility_policy: 2 }, 'hamlet'))));
    expect(d[1]!.event).toMatchObject({ topic_name: '', visibility_policy: 2 });
  });

  it('every role may set preferences in channels it can read; private channels stay invisible', async () => {
    const pub = await mkChannel(t, 'topics-matrix', { subscribers: [t.users.polonius.id] });
    for (const who of ['owner', 'iago', 'shiva', 'hamlet', 'polonius', 'bot'] as const) {
      expectSuccess(await t.post('/user_topics', { stream_id: pub, topic: 't', visibility_policy: 3 }, who));
    }
    const priv = await mkChannel(t, 'topics-private', { invite_only: true, subscribers: [t.users.othello.id] });
    const other = await mkChannel(t, 'topics-unsubscribed');
    for (const [who, stream] of [['hamlet', priv], ['polonius', other], ['hamlet', 99999]] as const) {
      for (const policy of [0, 1]) {
        await expectNoChange(t, async () => expectError(await t.post('/user_topics', { stream_id: stream, topic: 't', visibility_policy: policy }, who), 400, 'BAD_REQUEST', 'Invalid channel ID'));
      }
    }
    // Administrators see the private channel (metadata) but cannot read it: removing works, setting does not.
    await expectNoChange(t, async () => expectError(await t.post('/user_topics', { stream_id: priv, topic: 't', visibility_policy: 1 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID'));
    await expectNoChange(t, async () => expectSuccess(await t.post('/user_topics', { stream_id: priv, topic: 't', visibility_policy: 0 }, 'iago')));
    // A preference survives losing access, and can still be removed.
    expectSuccess(await t.post('/user_topics', { stream_id: priv, topic: 'kept', visibility_policy: 1 }, 'othello'));
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['topics-private'] }, 'othello'));
    expectSuccess(await t.post('/user_topics', { stream_id: priv, topic: 'kept', visibility_policy: 0 }, 'othello'));
  });

  it('parameter errors', async () => {
    const id = await mkChannel(t, 'topics-errors');
    const cases: [Record<string, unknown>, string, string, Record<string, unknown>?][] = [
      [{ topic: 'x', visibility_policy: 1 }, 'REQUEST_VARIABLE_MISSING', "Missing 'stream_id' argument", { var_name: 'stream_id' }],
      [{ stream_id: id, visibility_policy: 1 }, 'REQUEST_VARIABLE_MISSING', "Missing 'topic' argument", { var_name: 'topic' }],
      [{ stream_id: id, topic: 'x' }, 'REQUEST_VARIABLE_MISSING', "Missing 'visibility_policy' argument", { var_name: 'visibility_policy' }],
      [{ stream_id: id, topic: 'x', visibility_policy: 4 }, 'BAD_REQUEST', 'Invalid visibility_policy: Value error, Not in the list of possible values'],
      [{ stream_id: id, topic: 'x'.repeat(61), visibility_policy: 1 }, 'BAD_REQUEST', 'topic is too long (limit: 60 characters)'],
      [{ stream_id: 'abc', topic: 'x', visibility_policy: 1 }, 'BAD_REQUEST', 'stream_id is not valid JSON'],
    ];
    for (const [params, code, msg, extra] of cases) {
      await expectNoChange(t, async () => expectError(await t.post('/user_topics', params, 'hamlet'), 400, code, msg, extra));
    }
  });
});

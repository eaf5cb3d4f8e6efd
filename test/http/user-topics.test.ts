import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doSetUserTopicPolicy } from '../../src/domain/actions/user-topics.js';
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

  it('concurrent first sends to a new topic follow it once (no unique-key error when two transactions both find no row)', async () => {
    const id = await mkChannel(t, 'topics-race', { subscribers: [t.users.hamlet.id] });
    const sends = await t.captureEvents(async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => t.post('/messages', { type: 'stream', to: id, topic: 'race', content: `m${i}` }, 'hamlet')));
      for (const a of answers) expectSuccess(a);
    });
    const rows = await t.app.ctx.db.selectFrom('user_topics').select(['user_id', 'topic_name', 'visibility_policy']).where('channel_id', '=', id).execute();
    expect(rows).toEqual([{ user_id: t.users.hamlet.id, topic_name: 'race', visibility_policy: 3 }]);
    // One follow, announced once: the sends that found the row already there change nothing.
    expect(sends.filter((d) => d.event.type === 'user_topic').map((d) => [d.userIds, d.event.visibility_policy])).toEqual([[[t.users.hamlet.id], 3]]);
    expect(sends.filter((d) => d.event.type === 'message')).toHaveLength(8);
  });

  it('a follow racing another transaction that inserts the same row waits for it and changes nothing', async () => {
    // The race of two first sends to a new topic, made certain: transaction A has inserted the
    // row but not committed when B looks (PostgreSQL: B sees no row and its insert waits for A).
    const id = await mkChannel(t, 'topics-race-tx', { subscribers: [t.users.hamlet.id] });
    const ch = await t.app.ctx.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let signal!: () => void;
    const insertedByA = new Promise<void>((r) => (signal = r));
    const a = transact(t.app.ctx, async (tx) => {
      await tx.db
        .insertInto('user_topics')
        .values({ realm_id: ch.realm_id, user_id: t.users.hamlet.id, channel_id: id, topic_name: 'Race', topic_lower: 'race', visibility_policy: 3, last_updated: 1 })
        .execute();
      signal();
      await gate;
    });
    await insertedByA;
    const events = await t.captureEvents(async () => {
      const b = transact(t.app.ctx, (tx) => doSetUserTopicPolicy(tx, t.users.hamlet.id, ch, 'race', 3));
      setTimeout(release, 200);
      await a;
      expect(await b).toBe(false);
    });
    expect(events).toEqual([]);
    const rows = await t.app.ctx.db.selectFrom('user_topics').select(['topic_name', 'visibility_policy', 'last_updated']).where('channel_id', '=', id).execute();
    expect(rows).toEqual([{ topic_name: 'Race', visibility_policy: 3, last_updated: 1 }]);
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

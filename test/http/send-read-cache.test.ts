import Database from 'better-sqlite3';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMessage } from '../../src/domain/actions/message-send.js';
import { sendReadEntries, sendReads } from '../../src/domain/send-read-cache.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { expectError, expectSuccess, startTestServer, storeKind, type TestServer } from '../support/server.js';

/**
 * The reads of a channel send kept while nothing has been committed
 * (src/domain/send-read-cache.ts, SQLite on a file). The channel, the
 * sender's groups and the subscribers with their muters are read once per
 * committed state; every commit, by this process or another, makes the next
 * send read them again. Each write below comes after the cache was filled,
 * and the send after it must see it: who receives the message, who muted the
 * sender, whether the sender may post, what the channel is called.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const recipientsOf = async (messageId: number): Promise<number[]> =>
  (await t.app.ctx.db.selectFrom('user_messages').select('user_id').where('message_id', '=', messageId).orderBy('user_id').execute()).map((r) => r.user_id);
const flagsOf = async (messageId: number, userId: number): Promise<number> =>
  (await t.app.ctx.db.selectFrom('user_messages').select('flags').where('message_id', '=', messageId).where('user_id', '=', userId).executeTakeFirstOrThrow()).flags;
const ids = (...names: ('hamlet' | 'cordelia' | 'othello' | 'iago')[]): number[] => names.map((n) => t.users[n].id).sort((a, b) => a - b);

/** The statements `fn` runs (Store.stats). */
async function statementsOf(fn: () => Promise<unknown>): Promise<number> {
  const before = t.app.ctx.store.stats.queries;
  await fn();
  return t.app.ctx.store.stats.queries - before;
}

/**
 * `count` runs `all` statements with nothing kept, then `kept` twice while nothing is committed;
 * after `commit`, `all` again and then `kept`.
 */
async function expectKeptUntilCommit(count: () => Promise<number>, all: number, kept: number, commit: () => Promise<unknown>): Promise<void> {
  expect(await count()).toBe(all);
  expect(await count()).toBe(kept);
  expect(await count()).toBe(kept);
  await commit();
  expect(await count()).toBe(all);
  expect(await count()).toBe(kept);
}

/** Fills the cache for hamlet's sends to `channel` (a check writes nothing, so the generation stays). */
async function warm(channel: string): Promise<void> {
  const sender = await t.row(t.users.hamlet.id);
  await checkMessage(t.app.ctx, sender, { type: 'stream', to: channel, topic: 'warm', content: 'x' });
}

describe.runIf(storeKind() === 'sqlite')('the reads of a channel send, kept while nothing is committed', () => {
  it('are read once per committed state: three statements fewer, and all of them again after any commit', async () => {
    await createChannel(t, 'cache counts', ['hamlet', 'cordelia']);
    const sender = await t.row(t.users.hamlet.id);
    const count = () => statementsOf(() => checkMessage(t.app.ctx, sender, { type: 'stream', to: 'cache counts', topic: 'counted', content: 'x' }));
    // The generation, the channel, the sender's groups, the topic's first message, the subscribers.
    // The generation, the channel, the sender's groups (for posting and for a new topic), the
    // topic's first message, the subscribers.
    // Kept: the generation and the topic's first message (a send may have created the topic).
    await expectKeptUntilCommit(count, 5, 2, () => sendChannelMessage(t, 'cordelia', 'cache counts', 'other', 'a commit'));
  });

  it('a subscription added or removed is seen by the next send', async () => {
    await createChannel(t, 'cache subs', ['hamlet', 'cordelia']);
    await warm('cache subs');
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'cache subs' }] }, 'othello'));
    expect(await recipientsOf(await sendChannelMessage(t, 'hamlet', 'cache subs', 't', 'one'))).toEqual(ids('hamlet', 'cordelia', 'othello'));
    await warm('cache subs');
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['cache subs'] }, 'cordelia'));
    expect(await recipientsOf(await sendChannelMessage(t, 'hamlet', 'cache subs', 't', 'two'))).toEqual(ids('hamlet', 'othello'));
  });

  it("a mute of the sender is seen by the next send (the muter's copy arrives read)", async () => {
    await createChannel(t, 'cache mutes', ['hamlet', 'cordelia']);
    const before = await sendChannelMessage(t, 'hamlet', 'cache mutes', 't', 'before');
    expect(await flagsOf(before, t.users.cordelia.id) & 1).toBe(0);
    await warm('cache mutes');
    expectSuccess(await t.post(`/users/me/muted_users/${t.users.hamlet.id}`, {}, 'cordelia'));
    const after = await sendChannelMessage(t, 'hamlet', 'cache mutes', 't', 'after');
    expect(await flagsOf(after, t.users.cordelia.id) & 1).toBe(1);
    expectSuccess(await t.delete(`/users/me/muted_users/${t.users.hamlet.id}`, {}, 'cordelia'));
  });

  it('a deactivated subscriber receives nothing from the next send', async () => {
    await createChannel(t, 'cache active', ['hamlet', 'cordelia', 'othello']);
    await warm('cache active');
    expectSuccess(await t.delete(`/users/${t.users.othello.id}`, {}, 'iago'));
    expect(await recipientsOf(await sendChannelMessage(t, 'hamlet', 'cache active', 't', 'x'))).toEqual(ids('hamlet', 'cordelia'));
    expectSuccess(await t.post(`/users/${t.users.othello.id}/reactivate`, {}, 'iago'));
  });

  it("the channel's name and who may post are read again after a change", async () => {
    const id = await createChannel(t, 'cache perms', ['hamlet', 'cordelia']);
    await warm('cache perms');
    expectSuccess(await t.patch(`/streams/${id}`, { new_name: 'cache perms renamed' }, 'iago'));
    expectError(await t.post('/messages', { type: 'stream', to: 'cache perms', topic: 't', content: 'x' }, 'hamlet'), 400, 'STREAM_DOES_NOT_EXIST', "Channel 'cache perms' does not exist", {
      stream: 'cache perms',
    });
    await warm('cache perms renamed');
    const admins = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('realm_id', '=', t.realmId).where('name', '=', 'role:administrators').executeTakeFirstOrThrow()).id;
    expectSuccess(await t.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: admins }) }, 'iago'));
    expectError(await t.post('/messages', { type: 'stream', to: 'cache perms renamed', topic: 't', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'You do not have permission to post in this channel.');
    // The sender's groups: made an administrator, hamlet may post again.
    await warm('cache perms renamed').catch(() => {});
    expectSuccess(await t.patch(`/users/${t.users.hamlet.id}`, { role: 200 }, 'owner'));
    expectSuccess(await t.post('/messages', { type: 'stream', to: 'cache perms renamed', topic: 't', content: 'x' }, 'hamlet'));
    expectSuccess(await t.patch(`/users/${t.users.hamlet.id}`, { role: 400 }, 'owner'));
  });

  it('a commit by another connection (another process, the CLI) is seen by the next send', async () => {
    await createChannel(t, 'cache other process', ['hamlet', 'cordelia', 'othello']);
    await warm('cache other process');
    const other = new Database(path.join(t.config.dataDir, 'parley.sqlite3'));
    try {
      const channelId = (other.prepare('SELECT id FROM channels WHERE name = ?').get('cache other process') as { id: number }).id;
      other.prepare('UPDATE subscriptions SET active = 0 WHERE user_id = ? AND channel_id = ?').run(t.users.othello.id, channelId);
    } finally {
      other.close();
    }
    expect(await recipientsOf(await sendChannelMessage(t, 'hamlet', 'cache other process', 't', 'x'))).toEqual(ids('hamlet', 'cordelia'));
  });

  it('holds at most 10,000 reads per generation (sends to many channels, or names that do not exist, between commits)', async () => {
    const reads = sendReads(t.app.ctx);
    for (let i = 0; i < 10_000; i++) expect(await reads.get(`bound:${i}`, async () => i)).toBe(i);
    expect(sendReadEntries(t.app.ctx)).toBe(10_000);
    expect(await reads.get('bound:0', async () => -1)).toBe(0);
    expect(await reads.get('bound:10000', async () => 10_000)).toBe(10_000);
    expect(sendReadEntries(t.app.ctx)).toBe(1);
    // A read that fails is not kept.
    await expect(reads.get('bound:failed', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(sendReadEntries(t.app.ctx)).toBe(1);
  });

  it('the rows shared between sends are frozen', async () => {
    await createChannel(t, 'cache frozen', ['hamlet', 'cordelia']);
    const sender = await t.row(t.users.hamlet.id);
    const checked = await checkMessage(t.app.ctx, sender, { type: 'stream', to: 'cache frozen', topic: 't', content: 'x' });
    expect(Object.isFrozen(checked.addressed.channel)).toBe(true);
    const again = await checkMessage(t.app.ctx, sender, { type: 'stream', to: 'cache frozen', topic: 't', content: 'x' });
    expect(again.addressed.channel).toBe(checked.addressed.channel);
  });
});

/**
 * POST /typing in a channel keeps its checks' outcome and its receivers the same way
 * (src/http/endpoints/typing.ts, src/domain/actions/typing.ts): once per committed state,
 * read again after any commit, a refusal never kept.
 */
describe.runIf(storeKind() === 'sqlite')('the reads of a channel typing notification, kept while nothing is committed', () => {
  const typing = (streamId: number, as: 'hamlet' | 'cordelia' | 'othello' = 'hamlet') =>
    t.captureEvents(async () => expectSuccess(await t.post('/typing', { type: 'channel', op: 'start', stream_id: streamId, topic: 'kept' }, as)));
  const receivers = async (streamId: number, as: 'hamlet' | 'cordelia' | 'othello' = 'hamlet'): Promise<number[]> => {
    const deliveries = await typing(streamId, as);
    expect(deliveries).toHaveLength(1);
    return [...deliveries[0]!.userIds];
  };

  it('are read once per committed state: the generation alone, and every read again after any commit', async () => {
    const id = await createChannel(t, 'typing counts', ['hamlet', 'cordelia']);
    const count = () => statementsOf(() => typing(id));
    // The generation; the sender's groups and subscriptions, the channel, the sender's groups for
    // posting, the realm; the subscribers and their settings.
    // Kept: the generation alone.
    await expectKeptUntilCommit(count, 8, 1, () => sendChannelMessage(t, 'cordelia', 'typing counts', 'other', 'a commit'));
  });

  it('a subscription added or removed, and a change of receives_typing_notifications, are seen by the next call', async () => {
    const id = await createChannel(t, 'typing subs', ['hamlet', 'cordelia']);
    expect(await receivers(id)).toEqual(ids('hamlet', 'cordelia'));
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'typing subs' }] }, 'othello'));
    expect(await receivers(id)).toEqual(ids('hamlet', 'cordelia', 'othello'));
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['typing subs'] }, 'cordelia'));
    expect(await receivers(id)).toEqual(ids('hamlet', 'othello'));
    expectSuccess(await t.patch('/settings', { receives_typing_notifications: false }, 'othello'));
    expect(await receivers(id)).toEqual(ids('hamlet'));
    expectSuccess(await t.patch('/settings', { receives_typing_notifications: true }, 'othello'));
    expect(await receivers(id)).toEqual(ids('hamlet', 'othello'));
  });

  it('who may post, and who may see a private channel, are read again after a change; a refusal is not kept', async () => {
    const id = await createChannel(t, 'typing perms', ['hamlet', 'cordelia']);
    expect(await receivers(id, 'cordelia')).toEqual(ids('hamlet', 'cordelia'));
    const admins = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('realm_id', '=', t.realmId).where('name', '=', 'role:administrators').executeTakeFirstOrThrow()).id;
    expectSuccess(await t.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: admins }) }, 'iago'));
    const refusedAs = async (as: 'cordelia' | 'othello', msg: string): Promise<void> => {
      let res!: Awaited<ReturnType<TestServer['post']>>;
      const deliveries = await t.captureEvents(async () => {
        res = await t.post('/typing', { type: 'channel', op: 'start', stream_id: id, topic: 'kept' }, as);
      });
      expectError(res, 400, 'BAD_REQUEST', msg);
      expect(deliveries).toEqual([]);
    };
    await refusedAs('cordelia', 'You do not have permission to post in this channel.');
    await refusedAs('cordelia', 'You do not have permission to post in this channel.');
    expectSuccess(await t.patch(`/users/${t.users.cordelia.id}`, { role: 200 }, 'owner'));
    expect(await receivers(id, 'cordelia')).toEqual(ids('hamlet', 'cordelia'));
    expectSuccess(await t.patch(`/users/${t.users.cordelia.id}`, { role: 400 }, 'owner'));
    await refusedAs('cordelia', 'You do not have permission to post in this channel.');
    // A private channel the caller is not in is the same error as one that does not exist.
    const everyone = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('realm_id', '=', t.realmId).where('name', '=', 'role:everyone').executeTakeFirstOrThrow()).id;
    expectSuccess(await t.patch(`/streams/${id}`, { can_send_message_group: JSON.stringify({ new: everyone }) }, 'iago'));
    expect(await receivers(id, 'othello')).toEqual(ids('hamlet', 'cordelia'));
    expectSuccess(await t.patch(`/streams/${id}`, { is_private: true }, 'iago'));
    await refusedAs('othello', 'Invalid channel ID');
    expect(await receivers(id, 'cordelia')).toEqual(ids('hamlet', 'cordelia'));
  });
});

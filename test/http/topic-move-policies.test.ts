import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userTopicsModule } from '../../src/state/channel-extras.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';

let t: TestServer;
let channel: number;
let other: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'moves', ['hamlet', 'othello', 'iago']);
  other = await createChannel(t, 'moves-private', ['iago', 'othello'], { invite_only: true });
});
afterAll(async () => t.close());

const policies = async () =>
  (await t.app.ctx.db.selectFrom('user_topics').select(['user_id', 'channel_id', 'topic_name', 'visibility_policy']).orderBy('user_id').orderBy('topic_name').execute()).map((r) => [r.user_id, r.channel_id, r.topic_name, r.visibility_policy]);
const setPolicy = async (who: 'hamlet' | 'othello', stream_id: number, topic: string, visibility_policy: number) =>
  expectSuccess(await t.post('/user_topics', { stream_id, topic, visibility_policy }, who));

describe('topic visibility policies follow a moved topic', () => {
  it('a whole-topic rename moves each user’s policy, with user_topic events', async () => {
    const first = await sendChannelMessage(t, 'hamlet', channel, 'old name', 'a');
    await sendChannelMessage(t, 'othello', channel, 'old name', 'b');
    await setPolicy('hamlet', channel, 'old name', 1);
    await setPolicy('othello', channel, 'old name', 3);
    const deliveries = await expectModuleConsistent(t, userTopicsModule, 'hamlet', async () => {
      expectSuccess(await t.patch(`/messages/${first}`, { topic: 'new name', propagate_mode: 'change_all' }, 'iago'));
    });
    const { hamlet, othello } = t.users;
    expect(await policies()).toEqual([
      [hamlet.id, channel, 'new name', 1],
      [othello.id, channel, 'new name', 3],
    ]);
    const hamletTopics = deliveries.filter((d) => d.event.type === 'user_topic' && d.userIds.includes(hamlet.id)).map((d) => [d.event.topic_name, d.event.visibility_policy]);
    expect(hamletTopics).toEqual([
      ['old name', 0],
      ['new name', 1],
    ]);
  });

  it('a partial move leaves policies where they are; a policy already on the target topic is kept', async () => {
    const a = await sendChannelMessage(t, 'hamlet', channel, 'split', 'a');
    const b = await sendChannelMessage(t, 'hamlet', channel, 'split', 'b');
    await setPolicy('hamlet', channel, 'split', 1);
    await setPolicy('hamlet', channel, 'target', 2);
    expectSuccess(await t.patch(`/messages/${b}`, { topic: 'target', propagate_mode: 'change_one' }, 'iago'));
    const mine = (await policies()).filter((p) => p[0] === t.users.hamlet.id && (p[2] === 'split' || p[2] === 'target'));
    expect(mine).toEqual([
      [t.users.hamlet.id, channel, 'split', 1],
      [t.users.hamlet.id, channel, 'target', 2],
    ]);
    // Now the rest moves: 'split' is empty, Hamlet keeps his own 'target' policy.
    expectSuccess(await t.patch(`/messages/${a}`, { topic: 'target', propagate_mode: 'change_all' }, 'iago'));
    const after = (await policies()).filter((p) => p[0] === t.users.hamlet.id && (p[2] === 'split' || p[2] === 'target'));
    expect(after).toEqual([[t.users.hamlet.id, channel, 'target', 2]]);
  });

  it('a move to a private channel drops the policy of users who lose access', async () => {
    const m = await sendChannelMessage(t, 'othello', channel, 'leaving', 'x');
    await setPolicy('hamlet', channel, 'leaving', 3);
    await setPolicy('othello', channel, 'leaving', 3);
    expectSuccess(await t.patch(`/messages/${m}`, { stream_id: other, propagate_mode: 'change_all' }, 'iago'));
    const rows = (await policies()).filter((p) => p[2] === 'leaving');
    expect(rows).toEqual([[t.users.othello.id, other, 'leaving', 3]]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userTopicsModule } from '../../src/state/channel-extras.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { createChannel } from '../support/messages.js';
import { expectNoChange } from '../support/channels.js';

let t: TestServer;
let channel: number;
let secret: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'legacy mute', ['hamlet']);
  secret = await createChannel(t, 'legacy-secret', ['iago'], { invite_only: true });
});
afterAll(async () => t.close());

const policies = () => t.app.ctx.db.selectFrom('user_topics').select(['user_id', 'channel_id', 'topic_name', 'visibility_policy']).where('user_id', '=', t.users.hamlet.id).execute();

describe('PATCH /users/me/subscriptions/muted_topics', () => {
  it('op add mutes by channel name, op remove unmutes by id, with user_topic events', async () => {
    const added = await expectModuleConsistent(t, userTopicsModule, 'hamlet', async () => {
      expectSuccess(await t.patch('/users/me/subscriptions/muted_topics', { stream: 'legacy mute', topic: 'noise', op: 'add' }));
    });
    expect(added.map((d) => d.event.type).sort()).toEqual(['muted_topics', 'user_topic']);
    const ut = added.find((d) => d.event.type === 'user_topic')!;
    expect(ut.event).toMatchObject({ type: 'user_topic', stream_id: channel, topic_name: 'noise', visibility_policy: 1 });
    expect(ut.userIds).toEqual([t.users.hamlet.id]);
    expect(await policies()).toEqual([{ user_id: t.users.hamlet.id, channel_id: channel, topic_name: 'noise', visibility_policy: 1 }]);
    const removed = await expectModuleConsistent(t, userTopicsModule, 'hamlet', async () => {
      expectSuccess(await t.patch('/users/me/subscriptions/muted_topics', { stream_id: channel, topic: 'noise', op: 'remove' }));
    });
    expect(removed.find((d) => d.event.type === 'user_topic')!.event).toMatchObject({ visibility_policy: 0 });
    expect(await policies()).toEqual([]);
  });

  it('refuses with Zulip errors and changes nothing', async () => {
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ topic: 'x', op: 'add' }, 400, 'BAD_REQUEST', 'Unsupported parameter combination: stream_id, stream'],
      [{ stream: 'legacy mute', stream_id: channel, topic: 'x', op: 'add' }, 400, 'BAD_REQUEST', 'Unsupported parameter combination: stream_id, stream'],
      [{ stream_id: channel, topic: 'x', op: 'mute' }, 400, 'BAD_REQUEST', 'Invalid op'],
      [{ stream_id: secret, topic: 'x', op: 'add' }, 400, 'BAD_REQUEST', 'Invalid channel ID'],
      [{ stream_id: 2 ** 53, topic: 'x', op: 'add' }, 400, 'BAD_REQUEST', 'stream_id is too large'],
      [{ stream: 'legacy-secret', topic: 'x', op: 'add' }, 400, 'BAD_REQUEST', "Invalid channel name 'legacy-secret'"],
      [{ stream_id: secret, topic: 'x', op: 'remove' }, 400, 'BAD_REQUEST', 'Topic is not muted'],
      [{ stream: 'nope', topic: 'x', op: 'remove' }, 400, 'BAD_REQUEST', 'Topic is not muted'],
    ];
    for (const [params, status, code, msg] of cases) {
      await expectNoChange(t, async () => expectError(await t.patch('/users/me/subscriptions/muted_topics', params), status, code, msg));
    }
  });
});

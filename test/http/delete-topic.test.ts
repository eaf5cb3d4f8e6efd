import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doDeleteTopic } from '../../src/domain/actions/message-delete.js';
import { channelById } from '../../src/store/channels.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, newestMessages, sendChannelMessage } from '../support/messages.js';
import { plain } from '../support/channels.js';

let t: TestServer;
let channel: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'deltopic', ['hamlet', 'othello', 'iago']);
});
afterAll(async () => t.close());

const topicIds = async (topic: string): Promise<number[]> =>
  (await t.app.ctx.db.selectFrom('messages').select('id').where('stream_id', '=', channel).where('topic', '=', topic).orderBy('id').execute()).map((r) => r.id);

describe('POST /streams/{stream_id}/delete_topic', () => {
  it('an admin deletes every message of the topic; subscribers get delete_message; complete: true', async () => {
    const ids = [await sendChannelMessage(t, 'hamlet', channel, 'doomed', 'a'), await sendChannelMessage(t, 'othello', channel, 'doomed', 'b')];
    const keep = await sendChannelMessage(t, 'hamlet', channel, 'kept', 'c');
    let body: any;
    const deliveries = await t.captureEvents(async () => {
      body = expectSuccess(await t.post(`/streams/${channel}/delete_topic`, { topic_name: 'doomed' }, 'iago'));
    });
    expect(body).toEqual({ result: 'success', msg: '', complete: true });
    expect(await topicIds('doomed')).toEqual([]);
    expect(await topicIds('kept')).toEqual([keep]);
    const { hamlet, othello, iago } = t.users;
    expect(plain(deliveries)).toEqual([
      { event: { type: 'delete_message', message_ids: ids, message_type: 'stream', stream_id: channel, topic: 'doomed' }, userIds: [hamlet.id, othello.id, iago.id].sort((a, b) => a - b) },
    ]);
    expect((await newestMessages(t, 'hamlet', [{ operator: 'channel', operand: channel }])).map((m: any) => m.id)).toEqual([keep]);
  });

  it('deletes in batches, newest first, each with its own event, and answers complete: false when time runs out', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await sendChannelMessage(t, 'hamlet', channel, 'big', `m${i}`));
    const ch = (await channelById(t.app.ctx.db, t.realmId, channel))!;
    const iago = { id: t.users.iago.id, realmId: t.realmId, role: t.users.iago.role, isBot: false, botType: null, email: t.users.iago.email, deliveryEmail: t.users.iago.email, fullName: 'Iago' };
    let complete = true;
    const deliveries = await t.captureEvents(async () => {
      complete = await doDeleteTopic(t.app.ctx, iago, ch, 'big', { batchSize: 2, timeLimitMs: 0 });
    });
    expect(complete).toBe(false);
    expect(plain(deliveries).map((d) => d.event.message_ids)).toEqual([[ids[3], ids[4]]]);
    expect(await topicIds('big')).toEqual(ids.slice(0, 3));
    const rest = await t.captureEvents(async () => {
      complete = await doDeleteTopic(t.app.ctx, iago, ch, 'big', { batchSize: 2 });
    });
    expect(complete).toBe(true);
    expect(plain(rest).map((d) => d.event.message_ids)).toEqual([[ids[1], ids[2]], [ids[0]]]);
    expect(await topicIds('big')).toEqual([]);
  });

  it('refuses non-admins and unknown channels, deleting nothing', async () => {
    const id = await sendChannelMessage(t, 'hamlet', channel, 'safe', 'x');
    for (const who of ['shiva', 'hamlet', 'polonius', 'bot'] as const) {
      const events = await t.captureEvents(async () => expectError(await t.post(`/streams/${channel}/delete_topic`, { topic_name: 'safe' }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'));
      expect(events).toEqual([]);
    }
    expectError(await t.post('/streams/999999/delete_topic', { topic_name: 'safe' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expectError(await t.post(`/streams/${channel}/delete_topic`, {}, 'iago'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'topic_name' argument", { var_name: 'topic_name' });
    expect(await topicIds('safe')).toEqual([id]);
    // An empty topic: nothing to do, still complete.
    expect(expectSuccess(await t.post(`/streams/${channel}/delete_topic`, { topic_name: 'never used' }, 'iago')).complete).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, getMessage, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

let t: TestServer;
let denmark: number;
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago']);
  await createChannel(t, 'Verona', ['othello']);
});
afterAll(async () => t.close());

const flagsOf = async (who: 'hamlet' | 'cordelia' | 'othello' | 'iago', id: number): Promise<string[]> => (await getMessage(t, who, id)).flags;

describe('POST /messages/flags', () => {
  it('adds and removes read with one update_message_flags event listing the changed messages', async () => {
    const a = await sendChannelMessage(t, 'hamlet', 'Denmark', 'f', 'a');
    const b = await sendChannelMessage(t, 'hamlet', 'Denmark', 'f', 'b @**Cordelia, Lear\'s daughter**');
    expectSuccess(await t.post('/messages/flags', { messages: [a], op: 'add', flag: 'read' }, 'cordelia'));
    let res: any;
    const deliveries = await t.captureEvents(async () => {
      res = await t.post('/messages/flags', { messages: [a, b], op: 'add', flag: 'read' }, 'cordelia');
    });
    expect(expectSuccess(res).messages).toEqual([a, b]);
    expect(deliveries).toEqual([
      { realmId: t.realmId, event: { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [b], all: false }, userIds: [t.users.cordelia.id] },
    ]);
    expect(await flagsOf('cordelia', b)).toEqual(['read', 'mentioned']);
    const unread = await t.captureEvents(() => t.post('/messages/flags', { messages: [a, b], op: 'remove', flag: 'read' }, 'cordelia'));
    expect(unread[0]!.event).toEqual({
      type: 'update_message_flags',
      op: 'remove',
      operation: 'remove',
      flag: 'read',
      messages: [a, b],
      all: false,
      message_details: {
        [a]: { type: 'stream', stream_id: denmark, topic: 'f', unmuted_stream_msg: true },
        [b]: { type: 'stream', stream_id: denmark, topic: 'f', unmuted_stream_msg: true, mentioned: true },
      },
      __empty_topic_name: 'general chat',
    });
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia', 'iago'], 'group');
    expectSuccess(await t.post('/messages/flags', { messages: [dm], op: 'add', flag: 'read' }, 'cordelia'));
    const dmUnread = await t.captureEvents(() => t.post('/messages/flags', { messages: [dm], op: 'remove', flag: 'read' }, 'cordelia'));
    expect((dmUnread[0]!.event.message_details as any)[dm]).toEqual({ type: 'private', user_ids: [t.users.iago.id, t.users.hamlet.id].sort((x, y) => x - y) });
  });

  it('starring public history one never received creates a historical row; read on it changes nothing', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'f', 'history');
    const read = await t.captureEvents(() => t.post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }, 'othello'));
    expect(read[0]!.event.messages).toEqual([]);
    expectSuccess(await t.post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' }, 'othello'));
    expect(await flagsOf('othello', id)).toEqual(['read', 'starred', 'historical']);
    expectSuccess(await t.post('/messages/flags', { messages: [id], op: 'remove', flag: 'starred' }, 'othello'));
    expect(await flagsOf('othello', id)).toEqual(['read', 'historical']);
  });

  it('marking unread ignores channels one is not subscribed to', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'f', 'not for othello');
    expectSuccess(await t.post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' }, 'othello'));
    const ev = await t.captureEvents(() => t.post('/messages/flags', { messages: [id], op: 'remove', flag: 'read' }, 'othello'));
    expect(ev[0]!.event.messages).toEqual([]);
    expect(await flagsOf('othello', id)).toEqual(['read', 'starred', 'historical']);
  });

  it('refuses with Zulip\'s errors and changes nothing', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'f', 'errors');
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'private');
    const refuse = async (params: Record<string, unknown>, who: 'cordelia' | 'othello', code: string, msg: string, extra: Record<string, unknown> = {}) => {
      let res: any;
      const d = await t.captureEvents(async () => {
        res = await t.post('/messages/flags', params, who);
      });
      expectError(res, 400, code, msg, extra);
      expect(d).toEqual([]);
    };
    await refuse({ messages: [id], op: 'add', flag: 'bogus' }, 'cordelia', 'BAD_REQUEST', "Invalid flag: 'bogus'");
    await refuse({ messages: [id], op: 'add', flag: 'mentioned' }, 'cordelia', 'BAD_REQUEST', "Flag not editable: 'mentioned'");
    await refuse({ messages: [id], op: 'add', flag: 'is_private' }, 'cordelia', 'BAD_REQUEST', "Invalid flag: 'is_private'");
    await refuse({ messages: [id], op: 'toggle', flag: 'read' }, 'cordelia', 'BAD_REQUEST', "Invalid message flag operation: 'toggle'");
    await refuse({ op: 'add', flag: 'read' }, 'cordelia', 'REQUEST_VARIABLE_MISSING', "Missing 'messages' argument", { var_name: 'messages' });
    await refuse({ messages: [dm], op: 'add', flag: 'starred' }, 'othello', 'BAD_REQUEST', 'Invalid message(s)');
    await refuse({ messages: [999999], op: 'add', flag: 'starred' }, 'othello', 'BAD_REQUEST', 'Invalid message(s)');
    await refuse({ messages: '[1, "a"]', op: 'add', flag: 'read' }, 'cordelia', 'BAD_REQUEST', 'messages[1] is not an integer');
    expect(await flagsOf('cordelia', dm)).toEqual([]);
  });
});

describe('POST /messages/flags/narrow', () => {
  it('applies a flag to a range of a narrow and reports what it did', async () => {
    const ch = await createChannel(t, 'bulk', ['hamlet', 'cordelia']);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await sendChannelMessage(t, 'hamlet', ch, 'bulk', `m${i}`));
    expectSuccess(await t.post('/messages/flags', { messages: [ids[0]], op: 'add', flag: 'read' }, 'cordelia'));
    const body = expectSuccess(
      await t.post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: JSON.stringify([['stream', 'bulk']]), op: 'add', flag: 'read' }, 'cordelia'),
    );
    expect(body).toEqual({ result: 'success', msg: '', processed_count: 3, updated_count: 2, first_processed_id: ids[0], last_processed_id: ids[2], found_oldest: true, found_newest: true });
    const none = expectSuccess(await t.post('/messages/flags/narrow', { anchor: 'newest', num_before: 5, num_after: 0, narrow: '[["stream","bulk"],["is","unread"]]', op: 'add', flag: 'read' }, 'cordelia'));
    expect(none).toMatchObject({ processed_count: 0, updated_count: 0, first_processed_id: null, last_processed_id: null });
    expectError(
      await t.post('/messages/flags/narrow', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[]', op: 'add', flag: 'historical' }, 'cordelia'),
      400,
      'BAD_REQUEST',
      "Flag not editable: 'historical'",
    );
  });
});

describe('mark as read', () => {
  it('POST /mark_all_as_read: complete, one event with all=true', async () => {
    await sendDirectMessage(t, 'hamlet', ['iago'], 'unread');
    let res: any;
    const d = await t.captureEvents(async () => {
      res = await t.post('/mark_all_as_read', {}, 'iago');
    });
    expect(expectSuccess(res)).toEqual({ result: 'success', msg: '', complete: true });
    expect(d).toEqual([{ realmId: t.realmId, event: { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }, userIds: [t.users.iago.id] }]);
    const left = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 100, narrow: '[["is","unread"]]' }, 'iago')).messages;
    expect(left).toEqual([]);
  });

  it('POST /mark_stream_as_read and /mark_topic_as_read', async () => {
    const ch = await createChannel(t, 'reading', ['hamlet', 'cordelia']);
    const a = await sendChannelMessage(t, 'hamlet', ch, 'one', 'a');
    const b = await sendChannelMessage(t, 'hamlet', ch, 'two', 'b');
    const c = await sendChannelMessage(t, 'hamlet', ch, 'two', 'c');
    const topic = await t.captureEvents(async () => expectSuccess(await t.post('/mark_topic_as_read', { stream_id: ch, topic_name: 'TWO' }, 'cordelia')));
    expect(topic[0]!.event).toEqual({ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [b, c], all: false });
    expectError(await t.post('/mark_topic_as_read', { stream_id: ch, topic_name: 'three' }, 'cordelia'), 400, 'BAD_REQUEST', "No such topic 'three'");
    const stream = await t.captureEvents(async () => expectSuccess(await t.post('/mark_stream_as_read', { stream_id: ch }, 'cordelia')));
    expect(stream[0]!.event.messages).toEqual([a]);
    // Nothing left to mark: no event.
    expect(await t.captureEvents(async () => expectSuccess(await t.post('/mark_stream_as_read', { stream_id: ch }, 'cordelia')))).toEqual([]);
    expectError(await t.post('/mark_stream_as_read', { stream_id: 999999 }, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    const secret = await createChannel(t, 'hush', ['iago'], { invite_only: true });
    expectError(await t.post('/mark_stream_as_read', { stream_id: secret }, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid channel ID');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
let denmark: number;
let secret: number;
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago']);
  secret = await createChannel(t, 'secret', ['hamlet', 'iago'], { invite_only: true });
});
afterAll(async () => t.close());

describe('GET /users/me/{stream_id}/topics', () => {
  it('topics with their newest message id, newest first; case variants are one topic under their latest spelling', async () => {
    const m1 = await sendChannelMessage(t, 'hamlet', 'Denmark', 'castle', 'one');
    const m2 = await sendChannelMessage(t, 'cordelia', 'Denmark', 'ghost', 'two');
    const m3 = await sendChannelMessage(t, 'hamlet', 'Denmark', 'Castle', 'three');
    const m4 = await sendChannelMessage(t, 'iago', 'Denmark', '', 'four');
    expect(m1 < m2 && m2 < m3 && m3 < m4).toBe(true);
    expect(expectSuccess(await t.get(`/users/me/${denmark}/topics`, {}, 'othello'))).toEqual({
      result: 'success',
      msg: '',
      topics: [
        { name: 'general chat', max_id: m4 },
        { name: 'Castle', max_id: m3 },
        { name: 'ghost', max_id: m2 },
      ],
    });
    expect(expectSuccess(await t.get(`/users/me/${denmark}/topics`, { allow_empty_topic_name: true }, 'othello')).topics[0]).toEqual({ name: '', max_id: m4 });
  });

  it('protected history: only topics of messages the user received', async () => {
    const before = await sendChannelMessage(t, 'hamlet', 'secret', 'old plans', 'before othello came');
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [t.users.othello.id] }, 'hamlet'));
    const after = await sendChannelMessage(t, 'hamlet', 'secret', 'new plans', 'after');
    expect(expectSuccess(await t.get(`/users/me/${secret}/topics`, {}, 'othello')).topics).toEqual([{ name: 'new plans', max_id: after }]);
    expect(expectSuccess(await t.get(`/users/me/${secret}/topics`, {}, 'iago')).topics).toEqual([
      { name: 'new plans', max_id: after },
      { name: 'old plans', max_id: before },
    ]);
  });

  it('channels the user cannot read are "Invalid channel ID"; ids are digits', async () => {
    expectError(await t.get(`/users/me/${secret}/topics`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expectError(await t.get(`/users/me/${denmark}/topics`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expectError(await t.get('/users/me/999999/topics', {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expect((await t.get('/users/me/abc/topics', {}, 'hamlet')).status).toBe(404);
  });
});

describe('GET /streams/{stream_id}/email_address', () => {
  it('no email gateway: an empty address, after the access checks', async () => {
    expect(expectSuccess(await t.get(`/streams/${denmark}/email_address`, {}, 'cordelia'))).toEqual({ result: 'success', msg: '', email: '' });
    expect(expectSuccess(await t.get(`/streams/${denmark}/email_address`, { sender_id: t.users.bot.id }, 'hamlet')).email).toBe('');
    expectError(await t.get(`/streams/${secret}/email_address`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expectError(await t.get(`/streams/${denmark}/email_address`, { sender_id: t.users.othello.id }, 'hamlet'), 400, 'BAD_REQUEST', 'No such bot');
    expectError(await t.get(`/streams/${denmark}/email_address`, { sender_id: t.users.bot.id }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
  });
});

describe('channel helpers that already exist', () => {
  it('GET /get_stream_id and GET /users/me/subscriptions/{stream_id}', async () => {
    expect(expectSuccess(await t.get('/get_stream_id', { stream: 'Denmark' }, 'hamlet')).stream_id).toBe(denmark);
    expect(expectSuccess(await t.get(`/users/me/subscriptions/${denmark}`, {}, 'hamlet')).is_subscribed).toBe(true);
  });
});

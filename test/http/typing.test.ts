import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { getEvents, registerQueue, withoutIds } from '../support/events.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const brief = (name: 'hamlet' | 'cordelia' | 'othello' | 'iago') => ({ user_id: t.users[name].id, email: t.users[name].email });
const sorted = <T extends { userIds: readonly number[] }>(ds: T[]): T[] => ds.map((d) => ({ ...d, userIds: [...d.userIds].sort((a, b) => a - b) }));
const ids = (...names: ('hamlet' | 'cordelia' | 'othello' | 'iago' | 'shiva' | 'polonius')[]) => names.map((n) => t.users[n].id).sort((a, b) => a - b);

/** Asserts the exact error and that nothing was sent. */
async function refused(params: Record<string, unknown>, msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}, as: 'hamlet' | 'bot' = 'hamlet'): Promise<void> {
  let res!: Awaited<ReturnType<TestServer['post']>>;
  const deliveries = await t.captureEvents(async () => {
    res = await t.post('/typing', params, as);
  });
  expectError(res, 400, code, msg, extra);
  expect(deliveries).toEqual([]);
}

describe('POST /typing: direct messages', () => {
  it('start and stop: the event lists the recipients plus the sender and goes to all of them', async () => {
    for (const op of ['start', 'stop']) {
      const deliveries = await t.captureEvents(async () =>
        expect(expectSuccess(await t.post('/typing', { op, to: [t.users.cordelia.id, t.users.othello.id] }, 'hamlet'))).toEqual({ result: 'success', msg: '' }),
      );
      expect(sorted(deliveries)).toEqual([
        {
          realmId: t.realmId,
          userIds: ids('hamlet', 'cordelia', 'othello'),
          event: { type: 'typing', message_type: 'direct', op, sender: brief('hamlet'), recipients: [brief('cordelia'), brief('othello'), brief('hamlet')] },
        },
      ]);
    }
  });

  it('type=direct explicitly, the sender already listed, and the client\'s queue receives it', async () => {
    const q = await registerQueue(t, 'cordelia', { event_types: ['typing'] });
    expectSuccess(await t.post('/typing', { type: 'direct', op: 'start', to: [t.users.hamlet.id, t.users.cordelia.id] }, 'hamlet'));
    expect(withoutIds(await getEvents(t, 'cordelia', q.queue_id, -1))).toEqual([
      { type: 'typing', message_type: 'direct', op: 'start', sender: brief('hamlet'), recipients: [brief('hamlet'), brief('cordelia')] },
    ]);
  });

  it('zulip-js style: `to` comma-joined; only users with receives_typing_notifications get it', async () => {
    expectSuccess(await t.patch('/settings', { receives_typing_notifications: false }, 'othello'));
    const deliveries = await t.captureEvents(() => t.post('/typing', { op: 'start', to: `${t.users.othello.id},${t.users.iago.id}` }, 'hamlet'));
    expect(sorted(deliveries).map((d) => d.userIds)).toEqual([ids('hamlet', 'iago')]);
    expect(deliveries[0]!.event.recipients).toEqual([brief('othello'), brief('iago'), brief('hamlet')]);
    expectSuccess(await t.patch('/settings', { receives_typing_notifications: true }, 'othello'));
  });

  it('deactivated recipients are listed but not notified', async () => {
    const u = await t.createUser({ email: 'typing-gone@zulip.com', fullName: 'Typing Gone' });
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    const deliveries = await t.captureEvents(() => t.post('/typing', { op: 'start', to: [u.id] }, 'hamlet'));
    expect(deliveries.map((d) => d.userIds)).toEqual([[t.users.hamlet.id]]);
    expect(deliveries[0]!.event.recipients).toEqual([{ user_id: u.id, email: 'typing-gone@zulip.com' }, brief('hamlet')]);
  });

  it('errors', async () => {
    await refused({ to: [t.users.cordelia.id] }, "Missing 'op' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'op' });
    await refused({ op: 'begin', to: [t.users.cordelia.id] }, 'Invalid op');
    await refused({ op: 'start', type: 'private', to: [t.users.cordelia.id] }, 'Invalid type');
    await refused({ op: 'start' }, "Missing 'to' argument");
    await refused({ op: 'start', to: [] }, "Empty 'to' list");
    await refused({ op: 'start', to: '2' }, 'to is not a list');
    await refused({ op: 'start', to: '[2,"a",4]' }, 'to[1] is not an integer');
    await refused({ op: 'start', to: 'bad email' }, 'to is not valid JSON');
    await refused({ op: 'start', to: [t.users.cordelia.id, 99999] }, 'Invalid user ID 99999');
    expectSuccess(await t.patch('/settings', { send_private_typing_notifications: false }, 'hamlet'));
    await refused({ op: 'start', to: [t.users.cordelia.id] }, 'User has disabled typing notifications for direct messages');
    expectSuccess(await t.patch('/settings', { send_private_typing_notifications: true }, 'hamlet'));
    const res = await t.post('/typing', { op: 'start', to: [t.users.cordelia.id] }, null);
    expectError(res, 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });
});

describe('POST /typing: channels', () => {
  let channelId = 0;
  beforeAll(async () => {
    const body = expectSuccess(
      await t.post('/channels/create', { name: 'Typing room', subscribers: [t.users.hamlet.id, t.users.cordelia.id, t.users.othello.id] }, 'hamlet'),
    );
    channelId = body.id;
  });

  it('goes to subscribers who receive typing notifications, and only to queues that declared stream_typing_notifications', async () => {
    const capable = await registerQueue(t, 'cordelia', { event_types: ['typing'], client_capabilities: { notification_settings_null: true, stream_typing_notifications: true } });
    const legacy = await registerQueue(t, 'cordelia', { event_types: ['typing'] });
    const deliveries = await t.captureEvents(async () =>
      expectSuccess(await t.post('/typing', { type: 'channel', op: 'start', stream_id: channelId, topic: '  lunch  ' }, 'hamlet')),
    );
    const event = { type: 'typing', message_type: 'stream', op: 'start', sender: brief('hamlet'), stream_id: channelId, topic: 'lunch' };
    expect(sorted(deliveries)).toEqual([{ realmId: t.realmId, userIds: ids('hamlet', 'cordelia', 'othello'), event }]);
    expect(withoutIds(await getEvents(t, 'cordelia', capable.queue_id, -1))).toEqual([event]);
    expect(await getEvents(t, 'cordelia', legacy.queue_id, -1)).toEqual([]);
  });

  it('type=stream (legacy name), subject alias, and the empty topic shown as "general chat" to clients without empty_topic_name', async () => {
    const caps = { notification_settings_null: true, stream_typing_notifications: true };
    const plain = await registerQueue(t, 'othello', { event_types: ['typing'], client_capabilities: caps });
    const modern = await registerQueue(t, 'othello', { event_types: ['typing'], client_capabilities: { ...caps, empty_topic_name: true } });
    for (const topic of ['general chat', '(no topic)', '']) {
      const deliveries = await t.captureEvents(() => t.post('/typing', { type: 'stream', op: 'stop', stream_id: channelId, subject: topic }, 'hamlet'));
      expect(deliveries[0]!.event.topic).toBe('');
    }
    expect((await getEvents(t, 'othello', plain.queue_id, -1)).map((e) => e.topic)).toEqual(['general chat', 'general chat', 'general chat']);
    expect((await getEvents(t, 'othello', modern.queue_id, -1)).map((e) => e.topic)).toEqual(['', '', '']);
  });

  it('errors', async () => {
    await refused({ type: 'channel', op: 'start', topic: 'x' }, 'Missing channel ID');
    await refused({ type: 'channel', op: 'start', stream_id: channelId }, 'Missing topic');
    await refused({ type: 'stream', op: 'start', stream_id: 'invalid', topic: 'x' }, 'stream_id is not valid JSON');
    await refused({ type: 'channel', op: 'start', stream_id: 99999, topic: 'x' }, 'Invalid channel ID');
    const priv = expectSuccess(await t.post('/channels/create', { name: 'Secret typing', subscribers: [t.users.iago.id], invite_only: true }, 'iago')).id;
    await refused({ type: 'channel', op: 'start', stream_id: priv, topic: 'x' }, 'Invalid channel ID');
    expectSuccess(await t.patch('/settings', { send_stream_typing_notifications: false }, 'hamlet'));
    await refused({ type: 'channel', op: 'start', stream_id: channelId, topic: 'x' }, 'User has disabled typing notifications for channel messages');
    expectSuccess(await t.patch('/settings', { send_stream_typing_notifications: true }, 'hamlet'));
  });
});

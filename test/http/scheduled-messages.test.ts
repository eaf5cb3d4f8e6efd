import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scheduledMessagesModule } from '../../src/state/scheduled-messages.js';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { createChannel, newestMessages } from '../support/messages.js';
import { plain } from '../support/channels.js';

let t: TestServer;
let channel: number;
let privateChannel: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'sched-public', ['hamlet', 'othello', 'cordelia']);
  privateChannel = await createChannel(t, 'sched-private', ['hamlet', 'iago'], { invite_only: true });
});
afterAll(async () => t.close());

const future = (sec = 3600): number => Math.floor(Date.now() / 1000) + sec;
const rows = () => t.app.ctx.db.selectFrom('scheduled_messages').selectAll().orderBy('id').execute();

async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await rows();
  let res: Res | undefined;
  const events = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res!, status, code, msg, extra);
  expect(events).toEqual([]);
  expect(await rows()).toEqual(before);
}

async function schedule(params: Record<string, unknown>, as = 'hamlet'): Promise<number> {
  return expectSuccess(await t.post('/scheduled_messages', params, as as never)).scheduled_message_id;
}

describe('POST /scheduled_messages', () => {
  it('schedules a channel message: id, add event to the sender only, listed by delivery time', async () => {
    const at = future(7200);
    let id = 0;
    const deliveries = await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      id = await schedule({ type: 'stream', to: String(channel), topic: 'plans', content: 'Meet at **noon**', scheduled_delivery_timestamp: at });
    });
    const obj = { scheduled_message_id: id, to: channel, type: 'stream', content: 'Meet at **noon**', rendered_content: '<p>Meet at <strong>noon</strong></p>', topic: 'plans', scheduled_delivery_timestamp: at, failed: false };
    expect(plain(deliveries)).toEqual([{ event: { type: 'scheduled_messages', op: 'add', scheduled_messages: [obj] }, userIds: [t.users.hamlet.id] }]);
    const earlier = await schedule({ type: 'direct', to: JSON.stringify([t.users.othello.id, t.users.cordelia.id]), content: 'hi both', scheduled_delivery_timestamp: at - 60 });
    const listed = expectSuccess(await t.get('/scheduled_messages', {}, 'hamlet')).scheduled_messages;
    expect(listed.map((m: any) => m.scheduled_message_id)).toEqual([earlier, id]);
    expect(listed[0]).toEqual({
      scheduled_message_id: earlier,
      to: [t.users.othello.id, t.users.cordelia.id].sort((a, b) => a - b),
      type: 'private',
      content: 'hi both',
      rendered_content: '<p>hi both</p>',
      scheduled_delivery_timestamp: at - 60,
      failed: false,
    });
    // Nobody else sees them.
    expect(expectSuccess(await t.get('/scheduled_messages', {}, 'othello')).scheduled_messages).toEqual([]);
  });

  it('refuses with Zulip errors and writes nothing', async () => {
    const base = { type: 'stream', to: String(channel), topic: 't', content: 'x', scheduled_delivery_timestamp: future() };
    await refused(() => t.post('/scheduled_messages', { ...base, scheduled_delivery_timestamp: future(-10) }), 400, 'BAD_REQUEST', 'Scheduled delivery time must be in the future.');
    await refused(() => t.post('/scheduled_messages', { ...base, to: 'sched-public' }), 400, 'BAD_REQUEST', 'Invalid data type for channel ID');
    await refused(() => t.post('/scheduled_messages', { ...base, type: 'direct', to: '5' }), 400, 'BAD_REQUEST', 'Invalid data type for recipients');
    await refused(() => t.post('/scheduled_messages', { ...base, type: 'direct', to: '["a"]' }), 400, 'BAD_REQUEST', 'Recipient list may only contain user IDs');
    await refused(() => t.post('/scheduled_messages', { ...base, type: 'bogus' }), 400, 'BAD_REQUEST', 'Invalid type');
    await refused(() => t.post('/scheduled_messages', { ...base, content: '   ' }), 400, 'BAD_REQUEST', 'Message must not be empty');
    await refused(() => t.post('/scheduled_messages', { ...base, topic: undefined }), 400, 'BAD_REQUEST', 'Missing topic');
    await refused(() => t.post('/scheduled_messages', { ...base, to: '999999' }), 400, 'STREAM_DOES_NOT_EXIST', "Channel with ID '999999' does not exist", { stream_id: 999999 });
    await refused(() => t.post('/scheduled_messages', { ...base, to: String(2 ** 53) }), 400, 'STREAM_DOES_NOT_EXIST', `Channel with ID '${2 ** 53}' does not exist`, { stream_id: 2 ** 53 });
    // Checked as a send would be: a private channel the sender is not in.
    await refused(() => t.post('/scheduled_messages', { ...base, to: String(privateChannel) }, 'othello'), 400, 'BAD_REQUEST', "Not authorized to send to channel 'sched-private'");
    await refused(() => t.post('/scheduled_messages', { ...base, scheduled_delivery_timestamp: 'soon' }), 400, 'BAD_REQUEST', 'scheduled_delivery_timestamp is not valid JSON');
    await refused(() => t.post('/scheduled_messages', base, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });
});

describe('PATCH and DELETE /scheduled_messages/{id}', () => {
  it('edits only what is given, with an update event', async () => {
    const at = future(5000);
    const id = await schedule({ type: 'stream', to: String(channel), topic: 'a', content: 'first', scheduled_delivery_timestamp: at });
    const deliveries = await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      expectSuccess(await t.patch(`/scheduled_messages/${id}`, { content: 'second', topic: 'b' }));
    });
    const updated = { scheduled_message_id: id, to: channel, type: 'stream', content: 'second', rendered_content: '<p>second</p>', topic: 'b', scheduled_delivery_timestamp: at, failed: false };
    expect(plain(deliveries)).toEqual([{ event: { type: 'scheduled_messages', op: 'update', scheduled_message: updated }, userIds: [t.users.hamlet.id] }]);
    await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      expectSuccess(await t.patch(`/scheduled_messages/${id}`, { type: 'direct', to: JSON.stringify([t.users.hamlet.id]) }));
    });
    const now = expectSuccess(await t.get('/scheduled_messages')).scheduled_messages.find((m: any) => m.scheduled_message_id === id);
    expect(now).toEqual({ scheduled_message_id: id, to: [t.users.hamlet.id], type: 'private', content: 'second', rendered_content: '<p>second</p>', scheduled_delivery_timestamp: at, failed: false });
    await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      expectSuccess(await t.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: at + 100 }));
    });
  });

  it('refuses edits in Zulip order, and someone else’s message is "does not exist"', async () => {
    const id = await schedule({ type: 'stream', to: String(channel), topic: 'a', content: 'x', scheduled_delivery_timestamp: future() });
    await refused(() => t.patch(`/scheduled_messages/${id}`, {}), 400, 'BAD_REQUEST', 'Nothing to change');
    await refused(() => t.patch(`/scheduled_messages/${id}`, { type: 'direct' }), 400, 'BAD_REQUEST', 'Recipient required when updating type of scheduled message.');
    await refused(() => t.patch(`/scheduled_messages/${id}`, { type: 'stream', to: String(channel) }), 400, 'BAD_REQUEST', 'Topic required when updating scheduled message type to stream.');
    await refused(() => t.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: future(-1) }), 400, 'BAD_REQUEST', 'Scheduled delivery time must be in the future.');
    await refused(() => t.patch(`/scheduled_messages/${id}`, { content: 'mine now' }, 'othello'), 404, 'BAD_REQUEST', 'Scheduled message does not exist');
    await refused(() => t.patch(`/scheduled_messages/${2 ** 31}`, { content: 'x' }), 404, 'BAD_REQUEST', 'Scheduled message does not exist');
    await refused(() => t.delete(`/scheduled_messages/${id}`, {}, 'othello'), 404, 'BAD_REQUEST', 'Scheduled message does not exist');
  });

  it('deletes with a remove event', async () => {
    const id = await schedule({ type: 'stream', to: String(channel), topic: 'a', content: 'bye', scheduled_delivery_timestamp: future() });
    const deliveries = await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      expectSuccess(await t.delete(`/scheduled_messages/${id}`));
    });
    expect(plain(deliveries)).toEqual([{ event: { type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }, userIds: [t.users.hamlet.id] }]);
    await refused(() => t.delete(`/scheduled_messages/${id}`), 404, 'BAD_REQUEST', 'Scheduled message does not exist');
  });
});

describe('delivery by the scheduler', () => {
  const run = (atSec: number) => t.app.scheduler.runDueNow(atSec * 1000);
  // Each case starts with no pending message, so counts and events are its own.
  beforeEach(async () => {
    for (const m of expectSuccess(await t.get('/scheduled_messages')).scheduled_messages) expectSuccess(await t.delete(`/scheduled_messages/${m.scheduled_message_id}`));
  });

  it('sends a due message once, as the sender, with a remove event; not before it is due', async () => {
    const at = future(30_000);
    const id = await schedule({ type: 'stream', to: String(channel), topic: 'later', content: 'from the past', scheduled_delivery_timestamp: at });
    expect(await run(at - 1)).toBe(0);
    let ran = 0;
    const deliveries = await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      ran = await run(at);
    });
    expect(ran).toBe(1);
    const row = (await rows()).find((r) => r.id === id)!;
    expect(row.delivered).toBe(1);
    const sent = (await newestMessages(t, 'othello', [{ operator: 'channel', operand: channel }, { operator: 'topic', operand: 'later' }]))!;
    expect(sent.map((m: any) => [m.id, m.sender_id, m.content])).toEqual([[row.delivered_message_id, t.users.hamlet.id, '<p>from the past</p>']]);
    // The send's own events (the message; the sender's automatic topic follow), then the removal.
    const mine = plain(deliveries).filter((d) => d.event.type === 'message' || d.event.type === 'scheduled_messages');
    expect(mine.map((d) => d.event.type)).toEqual(['message', 'scheduled_messages']);
    expect(mine[1]).toEqual({ event: { type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }, userIds: [t.users.hamlet.id] });
    // Delivered: not listed, not sent again, and no longer editable.
    expect(await run(at + 5)).toBe(0);
    expect(expectSuccess(await t.get('/scheduled_messages')).scheduled_messages.some((m: any) => m.scheduled_message_id === id)).toBe(false);
    await refused(() => t.patch(`/scheduled_messages/${id}`, { content: 'too late' }), 400, 'BAD_REQUEST', 'Scheduled message was already sent');
  });

  it('a message that can no longer be sent is marked failed, with an update event and Notification Bot’s notice', async () => {
    const at = future(40_000);
    const id = await schedule({ type: 'stream', to: String(privateChannel), topic: 'secret', content: 'for the club', scheduled_delivery_timestamp: at });
    // Hamlet loses access before the delivery time.
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['sched-private']) }, 'hamlet'));
    const deliveries = await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      await run(at);
    });
    const row = (await rows()).find((r) => r.id === id)!;
    expect([row.delivered, row.failed, row.failure_message]).toEqual([0, 1, "Not authorized to send to channel 'sched-private'"]);
    const update = plain(deliveries).find((d) => d.event.type === 'scheduled_messages')!;
    expect(update).toEqual({
      event: {
        type: 'scheduled_messages',
        op: 'update',
        scheduled_message: { scheduled_message_id: id, to: privateChannel, type: 'stream', content: 'for the club', rendered_content: '<p>for the club</p>', topic: 'secret', scheduled_delivery_timestamp: at, failed: true },
      },
      userIds: [t.users.hamlet.id],
    });
    const notice = (await newestMessages(t, 'hamlet', [{ operator: 'dm', operand: 'notification-bot@zulip.com' }]))!.at(-1);
    expect(notice.sender_email).toBe('notification-bot@zulip.com');
    expect(notice.sender_full_name).toBe('Notification Bot');
    const iso = new Date(at * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    const raw = expectSuccess(await t.get(`/messages/${notice.id}`, { apply_markdown: false }, 'hamlet')).message.content;
    expect(raw).toBe(`The message you scheduled for <time:${iso}> was not sent because of the following error:\n\n> Not authorized to send to channel 'sched-private'\n\n[View scheduled messages](#scheduled)`);
    // Still listed (failed: true); a failed message needs a new time to be edited.
    await refused(() => t.patch(`/scheduled_messages/${id}`, { content: 'retry' }), 400, 'BAD_REQUEST', 'Scheduled delivery time must be in the future.');
    await expectModuleConsistent(t, scheduledMessagesModule, 'hamlet', async () => {
      expectSuccess(await t.patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: future(50_000), to: String(channel) }));
    });
    expect((await rows()).find((r) => r.id === id)!.failed).toBe(0);
  });

  it('more than ten minutes late is a failure, not a late send', async () => {
    const at = future(60_000);
    const id = await schedule({ type: 'stream', to: String(channel), topic: 'late', content: 'stale', scheduled_delivery_timestamp: at });
    await run(at + 601);
    const row = (await rows()).find((r) => r.id === id)!;
    expect([row.delivered, row.failed, row.failure_message]).toEqual([0, 1, 'Message could not be sent at the scheduled time.']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectStateConsistent, withoutIds } from '../support/events.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';

/**
 * Full /register + events == fresh /register for scheduled messages and
 * reminders (add, update, remove, delivery and failure), through real
 * queues, with every module's state fetched.
 */

let t: TestServer;
let channel: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'ev-sched', ['hamlet', 'othello']);
});
afterAll(async () => t.close());

const future = (sec: number): number => Math.floor(Date.now() / 1000) + sec;

describe('scheduled_messages and reminders in /register', () => {
  it('stay consistent through create, edit, delete, delivery and failure', async () => {
    const at = future(80_000);
    let id = 0;
    let events = await expectStateConsistent(t, 'hamlet', async () => {
      id = expectSuccess(await t.post('/scheduled_messages', { type: 'stream', to: String(channel), topic: 'ev', content: 'one', scheduled_delivery_timestamp: at })).scheduled_message_id;
      expectSuccess(await t.patch(`/scheduled_messages/${id}`, { content: 'two' }));
    });
    expect(withoutIds(events).map((e) => `${e.type}:${e.op}`)).toEqual(['scheduled_messages:add', 'scheduled_messages:update']);
    const gone = expectSuccess(await t.post('/scheduled_messages', { type: 'direct', to: JSON.stringify([t.users.othello.id]), content: 'x', scheduled_delivery_timestamp: at })).scheduled_message_id;
    const msg = await sendChannelMessage(t, 'othello', channel, 'ev', 'remind me');
    let reminder = 0;
    await expectStateConsistent(t, 'hamlet', async () => {
      expectSuccess(await t.delete(`/scheduled_messages/${gone}`));
      reminder = expectSuccess(await t.post('/reminders', { message_id: msg, scheduled_delivery_timestamp: at })).reminder_id;
    });
    // Delivery: the message, the reminder's DM from Notification Bot (a new user), the removals.
    events = await expectStateConsistent(t, 'hamlet', async () => {
      await t.app.scheduler.runDueNow(at * 1000);
    });
    const kinds = withoutIds(events).map((e) => `${e.type}:${e.op ?? ''}`);
    expect(kinds).toContain('scheduled_messages:remove');
    expect(kinds).toContain('reminders:remove');
    expect(reminder).toBeGreaterThan(0);
    // A failure: the channel is archived before delivery.
    const at2 = future(90_000);
    expectSuccess(await t.post('/scheduled_messages', { type: 'stream', to: String(channel), topic: 'ev', content: 'never', scheduled_delivery_timestamp: at2 }));
    expectSuccess(await t.delete(`/streams/${channel}`, {}, 'owner'));
    events = await expectStateConsistent(t, 'hamlet', async () => {
      await t.app.scheduler.runDueNow(at2 * 1000);
    });
    const update = withoutIds(events).find((e) => e.type === 'scheduled_messages');
    expect(update.op).toBe('update');
    expect(update.scheduled_message.failed).toBe(true);
  });
});

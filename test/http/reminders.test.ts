import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remindersModule } from '../../src/state/scheduled-messages.js';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { createChannel, newestMessages, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { plain } from '../support/channels.js';

let t: TestServer;
let channel: number;
let privateChannel: number;
beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'rem public', ['hamlet', 'othello']);
  privateChannel = await createChannel(t, 'rem-private', ['iago'], { invite_only: true });
});
afterAll(async () => t.close());

const future = (sec = 3600): number => Math.floor(Date.now() / 1000) + sec;
const rows = () => t.app.ctx.db.selectFrom('scheduled_messages').selectAll().orderBy('id').execute();
const base = () => t.config.externalScheme + '://' + t.config.externalHost;

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

describe('reminders', () => {
  it('POST /reminders stores a reminder with Zulip’s text and sends an add event; GET lists it', async () => {
    const msg = await sendChannelMessage(t, 'othello', channel, 'lunch', 'Pizza on **Friday**');
    const at = future(9000);
    let id = 0;
    const deliveries = await expectModuleConsistent(t, remindersModule, 'hamlet', async () => {
      id = expectSuccess(await t.post('/reminders', { message_id: msg, scheduled_delivery_timestamp: at, note: 'bring cash\n' })).reminder_id;
    });
    const o = t.users.othello;
    const content =
      'You requested a reminder for the following message. Note:\n > bring cash\n\n' +
      `@_**${o.name}|${o.id}** [said](${base()}/#narrow/channel/${channel}-rem-public/topic/lunch/near/${msg}) in #**rem public>lunch@${msg}**:\n` +
      '```quote\nPizza on **Friday**\n```';
    const reminder = expectSuccess(await t.get('/reminders')).reminders;
    expect(reminder).toHaveLength(1);
    expect(reminder[0]).toMatchObject({ reminder_id: id, to: [t.users.hamlet.id], type: 'private', content, scheduled_delivery_timestamp: at, failed: false, reminder_target_message_id: msg });
    expect(plain(deliveries)).toEqual([{ event: { type: 'reminders', op: 'add', reminders: reminder }, userIds: [t.users.hamlet.id] }]);
    expect(expectSuccess(await t.get('/reminders', {}, 'othello')).reminders).toEqual([]);
  });

  it('refuses with Zulip errors', async () => {
    const msg = await sendChannelMessage(t, 'othello', channel, 'x', 'y');
    const secret = await sendChannelMessage(t, 'iago', privateChannel, 'x', 'hidden');
    await refused(() => t.post('/reminders', { message_id: msg, scheduled_delivery_timestamp: future(-5) }), 400, 'BAD_REQUEST', 'Scheduled delivery time must be in the future.');
    await refused(() => t.post('/reminders', { message_id: secret, scheduled_delivery_timestamp: future() }), 400, 'BAD_REQUEST', 'Invalid message(s)');
    await refused(() => t.post('/reminders', { message_id: 99999999, scheduled_delivery_timestamp: future() }), 400, 'BAD_REQUEST', 'Invalid message(s)');
    await refused(() => t.post('/reminders', { message_id: 2 ** 53, scheduled_delivery_timestamp: future() }), 400, 'BAD_REQUEST', 'message_id is too large');
    await refused(() => t.post('/reminders', { message_id: msg, scheduled_delivery_timestamp: future(), note: 'n'.repeat(1001) }), 400, 'BAD_REQUEST', 'Maximum reminder note length: 1000 characters');
    await refused(() => t.post('/reminders', { scheduled_delivery_timestamp: future() }), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'message_id' argument", { var_name: 'message_id' });
    await refused(() => t.delete('/reminders/99999'), 404, 'BAD_REQUEST', 'Reminder does not exist');
  });

  it('DELETE removes only one’s own reminder, with a remove event', async () => {
    const msg = await sendChannelMessage(t, 'othello', channel, 'del', 'y');
    const id = expectSuccess(await t.post('/reminders', { message_id: msg, scheduled_delivery_timestamp: future() })).reminder_id;
    await refused(() => t.delete(`/reminders/${id}`, {}, 'othello'), 404, 'BAD_REQUEST', 'Reminder does not exist');
    // A scheduled message id is not a reminder id.
    const sm = expectSuccess(await t.post('/scheduled_messages', { type: 'stream', to: String(channel), topic: 'a', content: 'b', scheduled_delivery_timestamp: future() })).scheduled_message_id;
    await refused(() => t.delete(`/reminders/${sm}`), 404, 'BAD_REQUEST', 'Reminder does not exist');
    const deliveries = await expectModuleConsistent(t, remindersModule, 'hamlet', async () => {
      expectSuccess(await t.delete(`/reminders/${id}`));
    });
    expect(plain(deliveries)).toEqual([{ event: { type: 'reminders', op: 'remove', reminder_id: id }, userIds: [t.users.hamlet.id] }]);
  });

  it('is delivered as a direct message from Notification Bot, with the content formatted at delivery', async () => {
    const dm = await sendDirectMessage(t, 'othello', ['hamlet', 'cordelia'], 'call me');
    const at = future(20_000);
    const id = expectSuccess(await t.post('/reminders', { message_id: dm, scheduled_delivery_timestamp: at })).reminder_id;
    const deliveries = await expectModuleConsistent(t, remindersModule, 'hamlet', async () => {
      await t.app.scheduler.runDueNow(at * 1000);
    });
    const row = (await rows()).find((r) => r.id === id)!;
    expect(row.delivered).toBe(1);
    expect(plain(deliveries).find((d) => d.event.type === 'reminders' && d.event.reminder_id === id)).toEqual({ event: { type: 'reminders', op: 'remove', reminder_id: id }, userIds: [t.users.hamlet.id] });
    const got = (await newestMessages(t, 'hamlet', [{ operator: 'dm', operand: 'notification-bot@zulip.com' }], 100, { apply_markdown: false })).find((m: any) => m.id === row.delivered_message_id);
    expect(got.id).toBe(row.delivered_message_id);
    const { othello: o, hamlet: h, cordelia: c } = t.users;
    const dmKey = [o.id, h.id, c.id].sort((a, b) => a - b).join(',');
    const others = [h, c].sort((a, b) => a.id - b.id).map((u) => `@_**${u.name}|${u.id}**`).join(' and ');
    expect(got.content).toBe(
      'You requested a reminder for the following direct message.\n\n' +
        `@_**${o.name}|${o.id}** [said](${base()}/#narrow/dm/${dmKey}-group/near/${dm}) to ${others}:\n` +
        '```quote\ncall me\n```',
    );
    expect(got.sender_email).toBe('notification-bot@zulip.com');
    expect(expectSuccess(await t.get('/reminders')).reminders.some((r: any) => r.reminder_id === id)).toBe(false);
  });
});

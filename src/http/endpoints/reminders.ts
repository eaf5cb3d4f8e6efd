import { transact } from '../../domain/context.js';
import { checkCreateReminder, doDeleteReminder } from '../../domain/actions/reminders.js';
import { presentReminder } from '../../presenters/scheduled-message.js';
import { DELIVERY_REMIND } from '../../store/scheduled-messages-schema.js';
import { pendingOfUserList } from '../../store/scheduled-messages.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** POST/GET /reminders, DELETE /reminders/{id} (Zulip's views/reminders.py). */

export const listReminders = endpoint({
  method: 'GET',
  path: '/reminders',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    const rows = await pendingOfUserList(ctx.app.db, ctx.user.id, DELIVERY_REMIND);
    return { reminders: rows.map(presentReminder) };
  },
});

export const createReminder = endpoint({
  method: 'POST',
  path: '/reminders',
  auth: 'user',
  params: {
    message_id: p.id(),
    scheduled_delivery_timestamp: p.int(),
    note: p.str().optional(),
  },
  handler: async (ctx, params) => {
    const id = await checkCreateReminder(
      ctx.app,
      ctx.userRow,
      ctx.user,
      params.message_id,
      params.scheduled_delivery_timestamp,
      params.note,
      ctx.clientName,
      Date.now() / 1000,
    );
    return { reminder_id: id };
  },
});

export const deleteReminder = endpoint({
  method: 'DELETE',
  path: '/reminders/:reminder_id',
  auth: 'user',
  params: { reminder_id: p.pathId() },
  handler: async (ctx, { reminder_id }) => {
    await transact(ctx.app, (tx) => doDeleteReminder(tx, ctx.user, reminder_id));
    return {};
  },
});

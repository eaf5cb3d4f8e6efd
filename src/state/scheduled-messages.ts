import type { ParleyEvent } from '../events/types.js';
import { presentReminder, presentScheduledMessage, sortByDelivery, type ReminderObject, type ScheduledMessageObject } from '../presenters/scheduled-message.js';
import { DELIVERY_REMIND, DELIVERY_SEND_LATER } from '../store/scheduled-messages-schema.js';
import { pendingOfUserAll, type ScheduledMessageRow } from '../store/scheduled-messages.js';
import { once } from './shared.js';
import type { RegisterContext } from './types.js';
import type { StateModule } from './types.js';

/** Both kinds in one statement per registration (the two modules share it). */
const pendingRows = (ctx: RegisterContext): Promise<ScheduledMessageRow[]> => once(ctx, 'scheduledRows', () => pendingOfUserAll(ctx.app.db, ctx.user.id));

const smId = (m: ScheduledMessageObject): number => m.scheduled_message_id;
const rId = (r: ReminderObject): number => r.reminder_id;

/** `scheduled_messages` in /register: the user's undelivered scheduled messages, by delivery time. */
export const scheduledMessagesModule: StateModule = {
  fetchTypes: ['scheduled_messages'],
  async fetch(ctx) {
    const rows = (await pendingRows(ctx)).filter((r) => r.delivery_type === DELIVERY_SEND_LATER);
    return { scheduled_messages: rows.map(presentScheduledMessage) };
  },
  eventTypes: ['scheduled_messages'],
  apply(state: Record<string, unknown>, event: ParleyEvent) {
    const list = state.scheduled_messages as ScheduledMessageObject[] | undefined;
    if (!list) return;
    if (event.op === 'add') {
      for (const m of structuredClone(event.scheduled_messages as ScheduledMessageObject[])) if (!list.some((x) => x.scheduled_message_id === m.scheduled_message_id)) list.push(m);
    } else if (event.op === 'update') {
      const m = structuredClone(event.scheduled_message as ScheduledMessageObject);
      const i = list.findIndex((x) => x.scheduled_message_id === m.scheduled_message_id);
      if (i >= 0) list[i] = m;
    } else if (event.op === 'remove') {
      const i = list.findIndex((x) => x.scheduled_message_id === event.scheduled_message_id);
      if (i >= 0) list.splice(i, 1);
    }
    sortByDelivery(list, smId);
  },
};

/** `reminders` in /register: the user's undelivered message reminders, by delivery time. */
export const remindersModule: StateModule = {
  fetchTypes: ['reminders'],
  async fetch(ctx) {
    const rows = (await pendingRows(ctx)).filter((r) => r.delivery_type === DELIVERY_REMIND);
    return { reminders: rows.map(presentReminder) };
  },
  eventTypes: ['reminders'],
  apply(state: Record<string, unknown>, event: ParleyEvent) {
    const list = state.reminders as ReminderObject[] | undefined;
    if (!list) return;
    if (event.op === 'add') {
      for (const r of structuredClone(event.reminders as ReminderObject[])) if (!list.some((x) => x.reminder_id === r.reminder_id)) list.push(r);
    } else if (event.op === 'remove') {
      const i = list.findIndex((x) => x.reminder_id === event.reminder_id);
      if (i >= 0) list.splice(i, 1);
    }
    sortByDelivery(list, rId);
  },
};

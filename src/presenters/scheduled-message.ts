import type { ScheduledMessageRow } from '../store/scheduled-messages.js';

/** Zulip's ScheduledMessage.to_dict (APIScheduledStreamMessageDict / APIScheduledDirectMessageDict). */
export type ScheduledMessageObject =
  | { scheduled_message_id: number; to: number; type: 'stream'; content: string; rendered_content: string; topic: string; scheduled_delivery_timestamp: number; failed: boolean }
  | { scheduled_message_id: number; to: number[]; type: 'private'; content: string; rendered_content: string; scheduled_delivery_timestamp: number; failed: boolean };

/** Zulip's ScheduledMessage.to_reminder_dict. */
export interface ReminderObject {
  reminder_id: number;
  to: number[];
  type: 'private';
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
  reminder_target_message_id: number;
}

export function presentScheduledMessage(row: ScheduledMessageRow): ScheduledMessageObject {
  const common = { content: row.content, rendered_content: row.rendered_content, scheduled_delivery_timestamp: Number(row.scheduled_timestamp), failed: row.failed === 1 };
  if (row.type === 'stream') return { scheduled_message_id: row.id, to: row.stream_id!, type: 'stream', ...common, topic: row.topic };
  return { scheduled_message_id: row.id, to: JSON.parse(row.to_user_ids) as number[], type: 'private', ...common };
}

export function presentReminder(row: ScheduledMessageRow): ReminderObject {
  return {
    reminder_id: row.id,
    to: JSON.parse(row.to_user_ids) as number[],
    type: 'private',
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: Number(row.scheduled_timestamp),
    failed: row.failed === 1,
    reminder_target_message_id: row.reminder_target_message_id!,
  };
}

/** Both lists are ordered by delivery time, then id (Zulip orders by scheduled_timestamp). */
export function sortByDelivery<T extends { scheduled_delivery_timestamp: number }>(items: T[], id: (t: T) => number): T[] {
  return items.sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || id(a) - id(b));
}

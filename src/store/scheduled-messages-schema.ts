import type { Generated } from 'kysely';

/** Zulip's ScheduledMessage.delivery_type values. */
export const DELIVERY_SEND_LATER = 1;
export const DELIVERY_REMIND = 2;

/** Scheduled messages and reminders (migration 1100). Booleans are 0/1; times are unix seconds. */
export interface ScheduledMessageTable {
  id: Generated<number>;
  realm_id: number;
  sender_id: number;
  delivery_type: number;
  /** 'stream' or 'private' */
  type: string;
  stream_id: number | null;
  /** Direct messages: JSON list of the recipients as Zulip's get_recipient_ids gives them (the others, or oneself). */
  to_user_ids: string;
  topic: string;
  content: string;
  rendered_content: string;
  scheduled_timestamp: number;
  read_by_sender: number;
  sending_client: string;
  delivered: number;
  delivered_message_id: number | null;
  failed: number;
  failure_message: string | null;
  reminder_target_message_id: number | null;
  reminder_note: string | null;
  /** Lease of the process delivering the row (unix seconds); null when nobody holds it. */
  claimed_until: number | null;
}

export interface ScheduledMessageTables {
  scheduled_messages: ScheduledMessageTable;
}

import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 16: scheduled messages and message reminders, one table as in Zulip
 * (ScheduledMessage with delivery_type SEND_LATER = 1 or REMIND = 2). The
 * scheduler (src/jobs) claims due rows from it: `claimed_until` is the lease
 * a process holds while it delivers; delivery itself flips `delivered` in
 * the same transaction that stores the message, so a row is sent once even
 * if a lease runs out.
 */
export const m1100ScheduledMessages: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('scheduled_messages'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('sender_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('delivery_type', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('stream_id', 'integer')
      .addColumn('to_user_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('topic', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('rendered_content', 'text', (c) => c.notNull())
      .addColumn('scheduled_timestamp', 'bigint', (c) => c.notNull())
      .addColumn('read_by_sender', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('sending_client', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('delivered', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('delivered_message_id', 'integer')
      .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failure_message', 'text')
      .addColumn('reminder_target_message_id', 'integer')
      .addColumn('reminder_note', 'text')
      .addColumn('claimed_until', 'bigint')
      .execute();
    // The scheduler's scan: pending rows by due time.
    await db.schema
      .createIndex('scheduled_messages_pending')
      .on('scheduled_messages')
      .columns(['delivered', 'failed', 'scheduled_timestamp'])
      .execute();
    await db.schema.createIndex('scheduled_messages_sender').on('scheduled_messages').columns(['sender_id', 'delivery_type']).execute();
  },
};

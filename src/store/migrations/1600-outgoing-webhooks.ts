import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 19: outgoing-webhook bots. `bot_services` is Zulip's Service (one
 * row per outgoing-webhook bot: name, base_url, token, interface);
 * `outgoing_webhook_jobs` holds each triggered request until it is answered
 * or given up (Zulip's outgoing_webhooks queue, kept in the database so a
 * job survives a restart and runs in one process only).
 */
export const m1600OutgoingWebhooks: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('bot_services'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('base_url', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('interface', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('bot_services_user').on('bot_services').column('user_id').execute();
    await withId(db, db.schema.createTable('outgoing_webhook_jobs'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('bot_id', 'integer', (c) => c.notNull())
      .addColumn('message_id', 'integer', (c) => c.notNull())
      .addColumn('trigger', 'text', (c) => c.notNull())
      // The message dict as it was sent (Zulip puts it in the queue event at send time).
      .addColumn('message_json', 'text', (c) => c.notNull())
      .addColumn('failed_tries', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('due_at', 'integer', (c) => c.notNull())
      .addColumn('claimed_until', 'integer')
      .execute();
    await db.schema.createIndex('outgoing_webhook_jobs_due').on('outgoing_webhook_jobs').columns(['due_at', 'id']).execute();
  },
};

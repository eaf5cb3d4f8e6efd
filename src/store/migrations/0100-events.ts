import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 3: alert words, the settings a user changed themselves (for
 * PATCH /settings target_users with skip_if_already_edited), and pending
 * email-address changes awaiting confirmation.
 */
export const m0100Events: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('alert_words'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('word', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('alert_words_user').on('alert_words').columns(['user_id', 'id']).execute();

    await db.schema
      .createTable('user_setting_self_edits')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('setting', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('user_setting_self_edits_pk', ['user_id', 'setting'])
      .execute();

    await withId(db, db.schema.createTable('email_change_requests'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('old_email', 'text', (c) => c.notNull())
      .addColumn('new_email', 'text', (c) => c.notNull())
      /** sha256 of the confirmation key (the key itself is only in the email) */
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      /** 0 pending, 1 used, 2 revoked by a newer request */
      .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('email_change_requests_key').on('email_change_requests').column('key_hash').unique().execute();
    await db.schema.createIndex('email_change_requests_user').on('email_change_requests').column('user_id').execute();
  },
};

import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/** Issue 18, the Zulip mobile app: muted users, client devices, push tokens. */
export const m0800Mobile: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('muted_users')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('muted_user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('date_muted', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('muted_users_pk', ['user_id', 'muted_user_id'])
      .execute();
    // The send path asks "who muted this sender?".
    await db.schema.createIndex('muted_users_muted').on('muted_users').columns(['muted_user_id']).execute();

    await withId(db, db.schema.createTable('client_devices'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('client_devices_user').on('client_devices').columns(['user_id']).execute();

    // Legacy push registrations (Zulip's PushDeviceToken): kept even though this
    // server sends no push notifications, as a Zulip server without a push service does.
    await withId(db, db.schema.createTable('push_device_tokens'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('kind', 'integer', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('ios_app_id', 'text')
      .addColumn('last_updated', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('push_device_tokens_unique').on('push_device_tokens').columns(['user_id', 'kind', 'token']).unique().execute();
  },
};

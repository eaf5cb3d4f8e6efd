import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/** Issue 18: invitations (single and reusable) and mailed confirmation links (sign-up, password reset). */
export const m0900Join: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('invites'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('referrer_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('email', 'text')
      .addColumn('is_multiuse', 'integer', (c) => c.notNull())
      .addColumn('invited_as', 'integer', (c) => c.notNull())
      .addColumn('stream_ids', 'text', (c) => c.notNull())
      .addColumn('group_ids', 'text', (c) => c.notNull())
      .addColumn('include_realm_default_subscriptions', 'integer', (c) => c.notNull())
      .addColumn('notify_referrer_on_join', 'integer', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('link_key', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('status', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('invites_realm').on('invites').columns(['realm_id', 'status']).execute();

    await withId(db, db.schema.createTable('confirmations'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.references('users.id'))
      .addColumn('invite_id', 'integer', (c) => c.references('invites.id'))
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used', 'integer', (c) => c.notNull())
      .execute();
  },
};

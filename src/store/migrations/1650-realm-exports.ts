import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 19: organization data exports (Zulip's RealmExport model): who asked,
 * which kind (1 public, 2 full with consent), the status (1 requested,
 * 2 started, 3 succeeded, 4 failed, 5 deleted), its times and the storage key
 * of the finished tarball.
 */
export const m1650RealmExports: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('realm_exports'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('acting_user_id', 'integer', (c) => c.references('users.id'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('date_requested', 'bigint', (c) => c.notNull())
      .addColumn('date_started', 'bigint')
      .addColumn('date_succeeded', 'bigint')
      .addColumn('date_failed', 'bigint')
      .addColumn('date_deleted', 'bigint')
      .addColumn('export_path', 'text')
      .addColumn('tarball_size_bytes', 'bigint')
      .execute();
    await db.schema.createIndex('realm_exports_realm_status').on('realm_exports').columns(['realm_id', 'status']).execute();
  },
};

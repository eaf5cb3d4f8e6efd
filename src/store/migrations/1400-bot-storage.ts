import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/** Issue 19: bot storage (Zulip's BotStorageData), one row per (user, key). */
export const m1400BotStorage: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('bot_storage'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addUniqueConstraint('bot_storage_user_key', ['user_id', 'key'])
      .execute();
  },
};

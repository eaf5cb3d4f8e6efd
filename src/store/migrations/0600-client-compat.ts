import type { Kysely, Migration } from 'kysely';
import { sql, withId } from './helpers.js';

/** Issue 10, real-client compatibility: presence, custom emoji and linkifiers. */
export const m0600ClientCompat: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('user_presences')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('last_active_time', 'bigint')
      .addColumn('last_connected_time', 'bigint', (c) => c.notNull())
      .addColumn('last_update_id', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('user_presences_realm').on('user_presences').columns(['realm_id']).execute();

    await db.schema
      .createTable('presence_sequences')
      .addColumn('realm_id', 'integer', (c) => c.primaryKey().references('realms.id'))
      .addColumn('last_update_id', 'bigint', (c) => c.notNull())
      .execute();

    await withId(db, db.schema.createTable('realm_emoji'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('author_id', 'integer', (c) => c.references('users.id'))
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('is_animated', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // A name is unique among active emoji only: it can be reused after deactivation.
    await sql`CREATE UNIQUE INDEX realm_emoji_active_name ON realm_emoji (realm_id, name) WHERE deactivated = 0`.execute(db);
    await db.schema.createIndex('realm_emoji_realm').on('realm_emoji').columns(['realm_id', 'id']).execute();

    await withId(db, db.schema.createTable('realm_linkifiers'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('pattern', 'text', (c) => c.notNull())
      .addColumn('url_template', 'text', (c) => c.notNull())
      .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('realm_linkifiers_pattern').on('realm_linkifiers').columns(['realm_id', 'pattern']).unique().execute();
  },
};

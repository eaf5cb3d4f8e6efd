import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/** The six permission settings every named user group carries. */
const GROUP_SETTING_COLUMNS = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;

/**
 * Issue 7: user-group permission settings, drafts, navigation views and saved
 * snippets. Setting columns stay NULL for system groups (read as role:nobody).
 */
export const m0400GroupsDraftsViewsSnippets: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    for (const col of GROUP_SETTING_COLUMNS) {
      await db.schema
        .alterTable('user_groups')
        .addColumn(col, 'integer', (c) => c.references('user_groups.id'))
        .execute();
    }
    // Deactivation looks up which groups use a group in one of their settings.
    for (const col of GROUP_SETTING_COLUMNS) {
      await db.schema.createIndex(`user_groups_${col}`).on('user_groups').column(col).execute();
    }

    await withId(db, db.schema.createTable('drafts'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('stream_id', 'integer')
      .addColumn('to_user_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('topic', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('last_edit_time', 'double precision', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('drafts_user_time').on('drafts').columns(['user_id', 'last_edit_time']).execute();

    await withId(db, db.schema.createTable('navigation_views'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('fragment', 'text', (c) => c.notNull())
      .addColumn('is_pinned', 'integer', (c) => c.notNull())
      .addColumn('name', 'text')
      .execute();
    await db.schema.createIndex('navigation_views_user_fragment').on('navigation_views').columns(['user_id', 'fragment']).unique().execute();
    await db.schema.createIndex('navigation_views_user_name').on('navigation_views').columns(['user_id', 'name']).unique().execute();

    await withId(db, db.schema.createTable('saved_snippets'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('date_created', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('saved_snippets_user').on('saved_snippets').columns(['user_id', 'id']).execute();
  },
};

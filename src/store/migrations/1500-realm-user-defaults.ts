import type { Kysely, Migration } from 'kysely';

/**
 * Issue 16: the organization's defaults for new users' settings (Zulip's
 * RealmUserDefault), as JSON of the settings that differ from the built-in
 * defaults (like users.settings).
 */
export const m1500RealmUserDefaults: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('realms').addColumn('user_settings_defaults', 'text', (c) => c.notNull().defaultTo('{}')).execute();
  },
};

import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 16: code playgrounds (Zulip's RealmPlayground): a named URL template
 * per Pygments language that clients offer on code blocks. Zulip's model has
 * unique_together (realm, pygments_language, name).
 */
export const m1001RealmPlaygrounds: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('realm_playgrounds'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('pygments_language', 'text', (c) => c.notNull())
      .addColumn('url_template', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('realm_playgrounds_unique').on('realm_playgrounds').columns(['realm_id', 'pygments_language', 'name']).unique().execute();
  },
};

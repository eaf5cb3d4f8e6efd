import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 11, user profiles: uploaded avatars, bot defaults, custom profile
 * fields and their values, and user statuses.
 */
export const m0500Profiles: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    // The stem of the stored avatar files (random, so paths cannot be guessed); NULL unless avatar_source is 'U'.
    await db.schema.alterTable('users').addColumn('avatar_file', 'text').execute();
    await db.schema.alterTable('users').addColumn('default_sending_stream_id', 'integer').execute();
    await db.schema.alterTable('users').addColumn('default_events_register_stream_id', 'integer').execute();
    await db.schema
      .alterTable('users')
      .addColumn('default_all_public_streams', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    await withId(db, db.schema.createTable('custom_profile_fields'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hint', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('field_type', 'integer', (c) => c.notNull())
      .addColumn('field_data', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('display_in_profile_summary', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('required', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('editable_by_user', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema.createIndex('custom_profile_fields_realm_name').on('custom_profile_fields').columns(['realm_id', 'name']).unique().execute();

    await db.schema
      .createTable('custom_profile_field_values')
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('field_id', 'integer', (c) => c.notNull().references('custom_profile_fields.id'))
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('rendered_value', 'text')
      .addPrimaryKeyConstraint('custom_profile_field_values_pk', ['user_id', 'field_id'])
      .execute();
    await db.schema.createIndex('custom_profile_field_values_field').on('custom_profile_field_values').columns(['field_id']).execute();
    await db.schema.createIndex('custom_profile_field_values_realm').on('custom_profile_field_values').columns(['realm_id']).execute();

    await db.schema
      .createTable('user_statuses')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('status_text', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('emoji_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('emoji_code', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('reaction_type', 'text', (c) => c.notNull().defaultTo('unicode_emoji'))
      .addColumn('client', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('timestamp', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('user_statuses_realm').on('user_statuses').columns(['realm_id']).execute();
  },
};

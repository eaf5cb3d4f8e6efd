import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

export const m0001Foundation: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('realms'))
      .addColumn('string_id', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('date_created', 'bigint', (c) => c.notNull())
      .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();

    await withId(db, db.schema.createTable('users'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('delivery_email', 'text', (c) => c.notNull())
      .addColumn('email_lower', 'text', (c) => c.notNull())
      .addColumn('full_name', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text')
      .addColumn('api_key', 'text', (c) => c.notNull())
      .addColumn('role', 'integer', (c) => c.notNull())
      .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('is_bot', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('bot_type', 'integer')
      .addColumn('bot_owner_id', 'integer', (c) => c.references('users.id'))
      .addColumn('date_joined', 'bigint', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('avatar_source', 'text', (c) => c.notNull().defaultTo('G'))
      .addColumn('avatar_version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('is_imported_stub', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('can_create_users', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('tos_version', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();
    await db.schema.createIndex('users_realm_email').on('users').columns(['realm_id', 'email_lower']).unique().execute();
    await db.schema.createIndex('users_api_key').on('users').column('api_key').unique().execute();

    await withId(db, db.schema.createTable('user_groups'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('name', 'text')
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('is_system_group', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('creator_id', 'integer', (c) => c.references('users.id'))
      .addColumn('date_created', 'bigint', (c) => c.notNull())
      .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('user_groups_realm_name').on('user_groups').columns(['realm_id', 'name']).unique().execute();

    await db.schema
      .createTable('user_group_members')
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('group_id', 'integer', (c) => c.notNull().references('user_groups.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addPrimaryKeyConstraint('user_group_members_pk', ['group_id', 'user_id'])
      .execute();
    await db.schema.createIndex('user_group_members_user').on('user_group_members').columns(['user_id', 'group_id']).execute();

    await db.schema
      .createTable('user_group_subgroups')
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('supergroup_id', 'integer', (c) => c.notNull().references('user_groups.id'))
      .addColumn('subgroup_id', 'integer', (c) => c.notNull().references('user_groups.id'))
      .addPrimaryKeyConstraint('user_group_subgroups_pk', ['supergroup_id', 'subgroup_id'])
      .execute();
    await db.schema.createIndex('user_group_subgroups_sub').on('user_group_subgroups').columns(['subgroup_id', 'supergroup_id']).execute();
  },
};

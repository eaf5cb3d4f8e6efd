import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Channels and everything hanging off them: the recipient table (a message
 * points at a recipient, as in Zulip; channels are type 2 and the messages
 * work adds direct-message recipients), channels, subscriptions, default
 * channels, channel folders, per-user topic preferences and allowed domains.
 */
export const m0200Channels: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('recipients'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('type_id', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('recipients_type').on('recipients').columns(['type', 'type_id']).unique().execute();

    await withId(db, db.schema.createTable('channel_folders'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_lower', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('rendered_description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('creator_id', 'integer', (c) => c.references('users.id'))
      .addColumn('date_created', 'bigint', (c) => c.notNull())
      .addColumn('is_archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('order', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('channel_folders_realm').on('channel_folders').columns(['realm_id', 'name_lower']).execute();

    let channels = withId(db, db.schema.createTable('channels'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_lower', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('rendered_description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('date_created', 'bigint', (c) => c.notNull())
      .addColumn('creator_id', 'integer', (c) => c.references('users.id'))
      .addColumn('invite_only', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('is_web_public', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('history_public_to_subscribers', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('message_retention_days', 'integer')
      .addColumn('topics_policy', 'text', (c) => c.notNull().defaultTo('inherit'))
      .addColumn('folder_id', 'integer', (c) => c.references('channel_folders.id'))
      .addColumn('deactivated', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('is_recently_active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('first_message_id', 'integer')
      .addColumn('recipient_id', 'integer', (c) => c.references('recipients.id'));
    for (const setting of [
      'can_add_subscribers_group',
      'can_administer_channel_group',
      'can_create_topic_group',
      'can_delete_any_message_group',
      'can_delete_own_message_group',
      'can_move_messages_out_of_channel_group',
      'can_move_messages_within_channel_group',
      'can_remove_subscribers_group',
      'can_resolve_topics_group',
      'can_send_message_group',
      'can_subscribe_group',
    ]) {
      channels = channels.addColumn(`${setting}_id`, 'integer', (c) => c.notNull().references('user_groups.id'));
    }
    await channels.execute();
    await db.schema.createIndex('channels_realm_name').on('channels').columns(['realm_id', 'name_lower']).unique().execute();

    await withId(db, db.schema.createTable('subscriptions'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
      .addColumn('recipient_id', 'integer', (c) => c.notNull().references('recipients.id'))
      .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('color', 'text', (c) => c.notNull())
      .addColumn('is_muted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pin_to_top', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('desktop_notifications', 'integer')
      .addColumn('audible_notifications', 'integer')
      .addColumn('push_notifications', 'integer')
      .addColumn('email_notifications', 'integer')
      .addColumn('wildcard_mentions_notify', 'integer')
      .execute();
    await db.schema.createIndex('subscriptions_user_channel').on('subscriptions').columns(['user_id', 'channel_id']).unique().execute();
    await db.schema.createIndex('subscriptions_channel').on('subscriptions').columns(['channel_id', 'active', 'user_id']).execute();
    await db.schema.createIndex('subscriptions_recipient').on('subscriptions').columns(['recipient_id', 'active', 'user_id']).execute();

    await db.schema
      .createTable('default_channels')
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
      .addPrimaryKeyConstraint('default_channels_pk', ['realm_id', 'channel_id'])
      .execute();

    await withId(db, db.schema.createTable('user_topics'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id'))
      .addColumn('topic_name', 'text', (c) => c.notNull())
      .addColumn('topic_lower', 'text', (c) => c.notNull())
      .addColumn('visibility_policy', 'integer', (c) => c.notNull())
      .addColumn('last_updated', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('user_topics_key').on('user_topics').columns(['user_id', 'channel_id', 'topic_lower']).unique().execute();
    await db.schema.createIndex('user_topics_channel').on('user_topics').columns(['channel_id', 'topic_lower']).execute();

    await withId(db, db.schema.createTable('realm_domains'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('allow_subdomains', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('realm_domains_realm_domain').on('realm_domains').columns(['realm_id', 'domain']).unique().execute();
  },
};

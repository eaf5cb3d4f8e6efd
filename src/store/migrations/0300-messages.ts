import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf, withId } from './helpers.js';
import { FLAG_MENTION_ANY, FLAG_PRIVATE, FLAG_READ, FLAG_STARRED } from '../../domain/rules/message-flags.js';

/**
 * Issue 6: messages, per-user message rows (flags as a bitmask, Zulip's
 * UserMessage), reactions and direct-message groups. Direct-message
 * recipients go into the recipients table of 0200 (type 1 personal, type 3
 * group); channel recipients are the channels' own.
 *
 * Every fetch is an index seek followed by a keyset walk on message id:
 * per channel (recipient_id, id), per topic (recipient_id, topic_key, id), per
 * conversation (dm_key, id), per user (user_id, message_id) with partial
 * indexes for the flags that narrows ask for (unread, starred, mentioned, DMs).
 */
export const m0300Messages: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const sqlite = dialectOf(db) === 'sqlite';

    await withId(db, db.schema.createTable('direct_message_groups'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('user_ids_key', 'text', (c) => c.notNull())
      .addColumn('group_size', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('direct_message_groups_key').on('direct_message_groups').columns(['realm_id', 'user_ids_key']).unique().execute();

    await withId(db, db.schema.createTable('messages'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('sender_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('recipient_id', 'integer', (c) => c.notNull().references('recipients.id'))
      .addColumn('stream_id', 'integer')
      .addColumn('dm_key', 'text')
      .addColumn('topic', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('topic_key', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('rendered_content', 'text', (c) => c.notNull())
      .addColumn('date_sent', 'bigint', (c) => c.notNull())
      .addColumn('sending_client', 'text', (c) => c.notNull())
      .addColumn('is_me_message', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('has_link', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('has_image', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('has_attachment', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_edit_time', 'bigint')
      .addColumn('edit_history', 'text')
      .execute();
    await db.schema.createIndex('messages_recipient').on('messages').columns(['recipient_id', 'id']).execute();
    await db.schema.createIndex('messages_recipient_topic').on('messages').columns(['recipient_id', 'topic_key', 'id']).execute();
    await db.schema.createIndex('messages_sender').on('messages').columns(['sender_id', 'id']).execute();
    await sql`CREATE INDEX messages_dm ON messages (dm_key, id) WHERE dm_key IS NOT NULL`.execute(db);

    // One row per (user, message) the user received (or touched: "historical").
    let um = db.schema
      .createTable('user_messages')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('message_id', 'integer', (c) => c.notNull().references('messages.id'))
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('user_messages_pk', ['user_id', 'message_id']);
    if (sqlite) um = um.modifyEnd(sql`WITHOUT ROWID`);
    await um.execute();
    await db.schema.createIndex('user_messages_message').on('user_messages').columns(['message_id', 'user_id']).execute();
    await sql`CREATE INDEX user_messages_unread ON user_messages (user_id, message_id) WHERE (flags & ${sql.lit(FLAG_READ)}) = 0`.execute(db);
    await sql`CREATE INDEX user_messages_starred ON user_messages (user_id, message_id) WHERE (flags & ${sql.lit(FLAG_STARRED)}) <> 0`.execute(db);
    await sql`CREATE INDEX user_messages_mentioned ON user_messages (user_id, message_id) WHERE (flags & ${sql.lit(FLAG_MENTION_ANY)}) <> 0`.execute(db);
    await sql`CREATE INDEX user_messages_private ON user_messages (user_id, message_id) WHERE (flags & ${sql.lit(FLAG_PRIVATE)}) <> 0`.execute(db);

    await withId(db, db.schema.createTable('reactions'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('message_id', 'integer', (c) => c.notNull().references('messages.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('emoji_name', 'text', (c) => c.notNull())
      .addColumn('emoji_code', 'text', (c) => c.notNull())
      .addColumn('reaction_type', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('reactions_unique')
      .on('reactions')
      .columns(['message_id', 'user_id', 'reaction_type', 'emoji_code'])
      .unique()
      .execute();
  },
};

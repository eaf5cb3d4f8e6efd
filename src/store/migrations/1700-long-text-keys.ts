import type { Kysely, Migration } from 'kysely';
import { dialectOf, sql } from './helpers.js';

/**
 * Unique keys over text that has no short length limit, on PostgreSQL.
 *
 * A PostgreSQL B-tree entry may not exceed about 2,700 bytes (a third of a
 * page); an INSERT whose key is longer fails with "index row size exceeds
 * btree maximum", which surfaced as a 500. These columns accept such text:
 * push tokens (up to 4,096 characters, Zulip's limit), navigation view
 * fragments and names, linkifier patterns, playground names and bot storage
 * keys (no limit in Zulip), and the key of a direct-message conversation
 * (one id per member: a group of a few hundred people outgrows it, and Zulip
 * sets no limit on a group's size), kept in direct_message_groups and in
 * every message of the conversation. Their indexes hash the text with md5()
 * instead, which is immutable, as index expressions must be. Every one of them is scoped by a
 * user or realm id first, so a deliberate md5 collision can only refuse the
 * caller's own second value. SQLite has no such limit and keeps its plain
 * indexes (hence nothing to do there, and no change to sqlite-schema.ts beyond
 * the migration's name).
 *
 * ON CONFLICT targets name the expression on PostgreSQL (src/store/devices.ts)
 * or name no target (src/store/messages.ts). Lookups by a conversation's key
 * (the group's recipient, "does this conversation exist", a DM narrow) add
 * the md5 predicate so that they use the index.
 */
export const m1700LongTextKeys: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (dialectOf(db) !== 'postgres') return;
    const rehash = async (name: string, table: string, key: string): Promise<void> => {
      await sql`DROP INDEX ${sql.id(name)}`.execute(db);
      await sql`CREATE UNIQUE INDEX ${sql.id(name)} ON ${sql.id(table)} (${sql.raw(key)})`.execute(db);
    };
    await rehash('push_device_tokens_unique', 'push_device_tokens', 'user_id, kind, md5(token)');
    await rehash('navigation_views_user_fragment', 'navigation_views', 'user_id, md5(fragment)');
    await rehash('navigation_views_user_name', 'navigation_views', 'user_id, md5(name)');
    await rehash('realm_linkifiers_pattern', 'realm_linkifiers', 'realm_id, md5(pattern)');
    await rehash('realm_playgrounds_unique', 'realm_playgrounds', 'realm_id, pygments_language, md5(name)');
    await rehash('direct_message_groups_key', 'direct_message_groups', 'realm_id, md5(user_ids_key)');
    await sql`DROP INDEX messages_dm`.execute(db);
    await sql`CREATE INDEX messages_dm ON messages (md5(dm_key), id) WHERE dm_key IS NOT NULL`.execute(db);
    await sql`ALTER TABLE bot_storage DROP CONSTRAINT bot_storage_user_key`.execute(db);
    await sql`CREATE UNIQUE INDEX bot_storage_user_key ON bot_storage (user_id, md5(key))`.execute(db);
  },
};

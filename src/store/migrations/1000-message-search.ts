import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from './helpers.js';

/**
 * Issue 16: full-text search of messages (the `search` narrow operator).
 *
 * Zulip keeps `zerver_message.search_tsvector` from a database trigger
 * (english stemming, GIN index) so that every write path keeps it; we do the
 * same, in the database, so that send, edit, topic moves, deletes and bulk
 * loads can never forget it and it always changes in the writing transaction.
 *
 * What is indexed: the topic and the Markdown source. Both stores index the
 * same text so that they find the same messages (SQLite has no HTML-aware
 * tokenizer for rendered_content); highlighting is done on rendered_content.
 *
 * - PostgreSQL: a stored generated tsvector column (english configuration) and
 *   a GIN index. Adding the column rewrites the table: that is the backfill.
 * - SQLite: an external-content FTS5 table over messages (porter stemmer on
 *   unicode61 tokens) kept by triggers; 'rebuild' is the backfill.
 */
export const m1000MessageSearch: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (dialectOf(db) === 'postgres') {
      await sql`ALTER TABLE messages ADD COLUMN search_tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, topic || ' ' || content)) STORED`.execute(db);
      await sql`CREATE INDEX messages_search ON messages USING gin (search_tsv)`.execute(db);
      return;
    }
    await sql`CREATE VIRTUAL TABLE messages_fts USING fts5(topic, content, content='messages', content_rowid='id', tokenize='porter unicode61')`.execute(db);
    await sql`CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
      INSERT INTO messages_fts(rowid, topic, content) VALUES (new.id, new.topic, new.content);
    END`.execute(db);
    await sql`CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, topic, content) VALUES ('delete', old.id, old.topic, old.content);
    END`.execute(db);
    // Only a change of the indexed text touches the index (flags, edit history and
    // rendered_content-only updates do not).
    await sql`CREATE TRIGGER messages_fts_update AFTER UPDATE OF topic, content ON messages BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, topic, content) VALUES ('delete', old.id, old.topic, old.content);
      INSERT INTO messages_fts(rowid, topic, content) VALUES (new.id, new.topic, new.content);
    END`.execute(db);
    await sql`INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`.execute(db);
  },
};

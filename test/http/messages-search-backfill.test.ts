import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, storeKind, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { m1000MessageSearch } from '../../src/store/migrations/1000-message-search.js';

/**
 * Migration 1000 indexes the messages that exist when it runs: take the
 * search index away (as before the migration), run the migration's step
 * again, and the old messages are found.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('migration 1000: backfill of the search index', () => {
  it('indexes messages written before the migration', async () => {
    await createChannel(t, 'Denmark', ['hamlet']);
    const old = await sendChannelMessage(t, 'hamlet', 'Denmark', 'history', 'ancient jogging records');
    const db = t.app.ctx.db;
    if (storeKind() === 'postgres') {
      await sql`DROP INDEX messages_search`.execute(db);
      await sql`ALTER TABLE messages DROP COLUMN search_tsv`.execute(db);
    } else {
      for (const trg of ['messages_fts_insert', 'messages_fts_delete', 'messages_fts_update']) await sql`DROP TRIGGER ${sql.raw(trg)}`.execute(db);
      await sql`DROP TABLE messages_fts`.execute(db);
    }
    // Run the migration's step itself (Kysely's migrator would refuse to re-run one out of order).
    await m1000MessageSearch.up!(db as never);
    const body = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'search', operand: 'jog' }] }, 'hamlet'));
    expect(body.messages.map((m: any) => [m.id, m.match_content])).toEqual([[old, '<p>ancient <span class="highlight">jogging</span> records</p>']]);
  });
});

// Helpers for the message benchmarks (P2, P8, P9): a realm with a channel and
// subscribers set up through the API, and a bulk generator that fills the
// message tables directly through the store (benchmarks only: it skips the
// send path so that a million messages take seconds, not hours).
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { ROOT } from './lib.mjs';
import { call } from './events-lib.mjs';

export const PG_ADMIN_URL = process.env.PARLEY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh PostgreSQL database for one run; returns its URL and a drop function. */
export async function freshPgDatabase() {
  const name = `parley_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = '/' + name;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Creates a channel through the API (as the owner) with these subscriber ids; returns its id. */
export async function createChannel(server, name, subscriberIds) {
  const r = await call(server.base, server.auth, 'POST', '/channels/create', { name, subscribers: subscriberIds });
  if (r.result !== 'success') throw new Error(`create channel: ${JSON.stringify(r)}`);
  return r.id;
}

export async function ownerId(server) {
  const me = await call(server.base, server.auth, 'GET', '/users/me');
  return me.user_id;
}

/**
 * Inserts `count` messages into a channel through the store, in batches,
 * with a read row for each reader (`text(k)` is the k-th message's content).
 * Returns the elapsed seconds.
 */
export async function bulkInsertChannelMessages(server, { channelId, senderId, readerIds, count, batch = 500, topics = 20, text = (k) => `bulk message ${k}` }) {
  const { openStore } = await import(path.join(ROOT, 'dist/src/store/db.js'));
  const store = openStore({ databaseUrl: server.databaseUrl, dataDir: server.dataDir, poolSize: 2 });
  const db = store.db;
  const started = Date.now();
  try {
    const ch = await db.selectFrom('channels').select(['realm_id', 'recipient_id']).where('id', '=', channelId).executeTakeFirstOrThrow();
    const now = Math.floor(Date.now() / 1000);
    for (let done = 0; done < count; done += batch) {
      const n = Math.min(batch, count - done);
      const rows = [];
      for (let i = 0; i < n; i++) {
        const k = done + i;
        const topic = `topic ${k % topics}`;
        rows.push({
          realm_id: ch.realm_id,
          sender_id: senderId,
          recipient_id: ch.recipient_id,
          stream_id: channelId,
          dm_key: null,
          topic,
          topic_key: topic,
          content: text(k),
          rendered_content: `<p>${text(k)}</p>`,
          date_sent: now,
          sending_client: 'bench',
          is_me_message: 0,
          has_link: 0,
          has_image: 0,
          has_attachment: 0,
          last_edit_time: null,
          edit_history: null,
        });
      }
      // better-sqlite3 runs each batch synchronously: yield to the event loop between
      // batches, or this process never sees the server close its idle keep-alive
      // sockets (Fastify: after 72 s) and the first request after a long load goes
      // out on a dead socket ("other side closed": the 1M search run failed so,
      // though the server was alive).
      await new Promise((r) => setImmediate(r));
      await db.transaction().execute(async (tx) => {
        const ids = (await tx.insertInto('messages').values(rows).returning('id').execute()).map((r) => r.id);
        const ums = [];
        for (const user_id of readerIds) for (const message_id of ids) ums.push({ user_id, message_id, flags: 1 });
        for (let i = 0; i < ums.length; i += 5000) await tx.insertInto('user_messages').values(ums.slice(i, i + 5000)).execute();
      });
    }
    // Fresh planner statistics, as a database that grew over time would have.
    await sql`ANALYZE`.execute(db);
  } finally {
    await store.close();
  }
  return (Date.now() - started) / 1000;
}

export { call };

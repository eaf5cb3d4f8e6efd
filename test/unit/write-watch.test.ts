import { Kysely, SqliteDialect, sql } from 'kysely';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { WriteWatchPlugin } from '../../src/store/write-watch.js';

describe('write watch', () => {
  it('counts raw writes to a watched table wherever the statement names it, a data-modifying CTE included', async () => {
    const watch = new WriteWatchPlugin(new Set(['user_messages']));
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }), plugins: [watch] });
    await sql`CREATE TABLE messages (id INTEGER PRIMARY KEY)`.execute(db);
    await sql`CREATE TABLE user_messages (user_id INTEGER, message_id INTEGER)`.execute(db);
    expect(watch.writes).toBe(0);
    await sql`INSERT INTO messages (id) VALUES (1)`.execute(db);
    await sql`SELECT * FROM user_messages`.execute(db);
    expect(watch.writes).toBe(0);
    await sql`INSERT INTO user_messages (user_id, message_id) VALUES (${1}, 1)`.execute(db);
    expect(watch.writes).toBe(1);
    await sql`WITH m AS (SELECT 2 AS id) INSERT INTO "user_messages" (user_id, message_id) SELECT 1, id FROM m`.execute(db);
    expect(watch.writes).toBe(2);
    await sql`UPDATE user_messages SET user_id = ${2}`.execute(db);
    await sql`DELETE FROM user_messages WHERE message_id = ${2}`.execute(db);
    expect(watch.writes).toBe(4);
    await db.destroy();
  });

  it('gives the same answer each time a call site runs, and for sql.raw texts built anew', async () => {
    const watch = new WriteWatchPlugin(new Set(['user_messages']));
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }), plugins: [watch] });
    await sql`CREATE TABLE messages (id INTEGER PRIMARY KEY)`.execute(db);
    await sql`CREATE TABLE user_messages (user_id INTEGER, message_id INTEGER)`.execute(db);
    const write = (id: number) => sql`INSERT INTO user_messages (user_id, message_id) VALUES (1, ${id})`.execute(db);
    const read = (id: number) => sql`SELECT * FROM user_messages WHERE message_id = ${id}`.execute(db);
    for (let i = 1; i <= 3; i++) {
      await write(i);
      await read(i);
    }
    expect(watch.writes).toBe(3);
    for (const table of ['messages', 'user_messages', 'messages', 'user_messages']) await sql.raw(`INSERT INTO ${table} DEFAULT VALUES`).execute(db);
    expect(watch.writes).toBe(5);
    expect((await sql<{ n: number }>`SELECT count(*) AS n FROM user_messages`.execute(db)).rows).toEqual([{ n: 5 }]);
    await db.destroy();
  });
});

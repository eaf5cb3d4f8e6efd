import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrate, migrateWithKysely, openStore, type Store } from '../../src/store/db.js';
import { migrations } from '../../src/store/migrations/index.js';
import { recordSqliteSchema } from '../../src/store/migrations/record-sqlite-schema.js';
import { SQLITE_SCHEMA } from '../../src/store/migrations/sqlite-schema.js';

/**
 * A first start on SQLite creates the schema from the recorded migrations in
 * one transaction (src/store/db.ts createSqliteSchema, performance.md P10)
 * instead of running each migration through Kysely's migrator. The result must
 * be the migrator's, statement for statement. (PostgreSQL always uses the migrator.)
 */
let dir: string;
const stores: Store[] = [];
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-schema-'));
});
afterAll(async () => {
  for (const s of stores) await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function open(name: string): Store {
  const store = openStore({ databaseUrl: path.join(dir, `${name}.sqlite3`), dataDir: dir });
  stores.push(store);
  return store;
}

/** Everything the schema is: sqlite_master (tables, indexes, triggers, FTS shadow tables), the migrator's rows. */
async function describeSchema(store: Store): Promise<unknown> {
  const master = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`.execute(store.db);
  const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY rowid`.execute(store.db);
  const lock = await sql`SELECT * FROM kysely_migration_lock`.execute(store.db);
  const counts: Record<string, unknown> = {};
  for (const { name, type } of master.rows) {
    if (type === 'table' && !name.startsWith('kysely_')) counts[name] = (await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(name)}`.execute(store.db)).rows[0]?.n;
  }
  return { master: master.rows, applied: applied.rows.map((r) => r.name), lock: lock.rows, counts };
}

describe('SQLite schema of a first start', () => {
  it('the recorded statements are up to date with the migrations (else: node tools/generate-sqlite-schema.mjs)', async () => {
    const recorded = await recordSqliteSchema();
    expect(SQLITE_SCHEMA).toEqual(recorded);
    expect([...SQLITE_SCHEMA.migrations].sort()).toEqual(Object.keys(migrations).sort());
  });

  it('an empty database gets exactly the schema and migration rows the migrator makes, without the migrator', async () => {
    const replayed = open('replayed');
    await migrate(replayed.db);
    // The migrator counts every statement it runs; the replay runs none through Kysely.
    expect(replayed.stats.queries).toBe(0);
    const migrated = open('migrated');
    await migrateWithKysely(migrated.db);
    expect(migrated.stats.queries).toBeGreaterThan(100);
    const schema = await describeSchema(replayed);
    expect(schema).toEqual(await describeSchema(migrated));
    expect((schema as { master: unknown[] }).master.length).toBeGreaterThan(50);
    // The migrator finds nothing left to do, and a restart changes nothing.
    const before = replayed.stats.queries;
    await migrateWithKysely(replayed.db);
    await migrate(replayed.db);
    expect(replayed.stats.queries).toBeGreaterThan(before);
    expect(await describeSchema(replayed)).toEqual(schema);
  });

  it('a database that is not empty is left to the migrator', async () => {
    const a = open('not-empty');
    await sql`CREATE TABLE extra (x integer)`.execute(a.db);
    await migrate(a.db);
    const b = open('not-empty-reference');
    await sql`CREATE TABLE extra (x integer)`.execute(b.db);
    await migrateWithKysely(b.db);
    expect(await describeSchema(a)).toEqual(await describeSchema(b));
  });

  it('works on an in-memory database', async () => {
    const store = openStore({ databaseUrl: ':memory:', dataDir: dir });
    stores.push(store);
    await migrate(store.db);
    expect(store.stats.queries).toBe(0);
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM kysely_migration`.execute(store.db);
    expect(rows[0]?.n).toBe(Object.keys(migrations).length);
  });
});

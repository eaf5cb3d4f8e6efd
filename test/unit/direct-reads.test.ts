import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { directReaders, openStore, type Store } from '../../src/store/db.js';
import { prepared, preparedIn, readCompiled } from '../../src/store/prepared.js';

/**
 * Reads straight on the SQLite connection (store/db.ts directReaders), as
 * GET /messages' page query runs them: statements are shared by SQL text, so
 * a read as arrays (raw) must leave the statement giving objects to the next
 * caller, and inside a transaction the direct path steps aside.
 */
const open: Store[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function store(): Promise<Store> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-direct-'));
  dirs.push(dir);
  const s = openStore({ databaseUrl: undefined, dataDir: dir });
  open.push(s);
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(s.db);
  await sql`INSERT INTO t (id, name) VALUES (1, 'a'), (2, 'b')`.execute(s.db);
  return s;
}

const TEXT = 'SELECT id, name FROM t ORDER BY id';

describe('direct reads on SQLite', () => {
  it('a raw read gives arrays and leaves the shared statement giving objects', async () => {
    const s = await store();
    const read = directReaders.get(s.db)!;
    const before = s.stats.queries;
    expect(read(TEXT, [], true)).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(read(TEXT, [])).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    // Kysely's driver prepares through the same cache of statements.
    expect((await sql.raw(TEXT).execute(s.db)).rows).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(s.stats.queries - before).toBe(3);
  });

  it("a 'pluck' read gives each row's first column and leaves the shared statement giving objects", async () => {
    const s = await store();
    const read = directReaders.get(s.db)!;
    const before = s.stats.queries;
    expect(read(TEXT, [], 'pluck')).toEqual([1, 2]);
    expect(read(TEXT, [], true)).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(read(TEXT, [])).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(s.stats.queries - before).toBe(3);
  });

  it('prepared() with a string argument: compiled once, each call its own arguments, direct or inside a transaction', async () => {
    const s = await store();
    const byIdAndName = prepared(['number', 'string'], (db, id: number, name: string) =>
      db
        .selectFrom('t' as never)
        .select(['id', 'name'] as never)
        .where('id' as never, '>=', id as never)
        .where('name' as never, '=', name as never),
    );
    const before = s.stats.queries;
    expect(await byIdAndName(s.db, 1, 'b')).toEqual([{ id: 2, name: 'b' }]);
    expect(await byIdAndName(s.db, 1, 'a')).toEqual([{ id: 1, name: 'a' }]);
    expect(await byIdAndName(s.db, 2, 'a')).toEqual([]);
    expect(s.stats.queries - before).toBe(3);
    await s.db.transaction().execute(async (tx) => {
      await sql`INSERT INTO t (id, name) VALUES (3, 'c')`.execute(tx);
      expect(await byIdAndName(tx, 1, 'c')).toEqual([{ id: 3, name: 'c' }]);
    });
  });

  it('inside a transaction the direct path reads the last committed state (the read-only connection) and readCompiled(tx) sees the transaction through Kysely', async () => {
    const s = await store();
    const read = directReaders.get(s.db)!;
    await s.db.transaction().execute(async (tx) => {
      await sql`INSERT INTO t (id, name) VALUES (3, 'c')`.execute(tx);
      expect(read(TEXT, [], true)).toEqual([
        [1, 'a'],
        [2, 'b'],
      ]);
      const rows = await readCompiled(tx, tx.selectFrom('t' as never).select(['id', 'name'] as never).orderBy('id' as never).compile());
      expect(rows).toHaveLength(3);
    });
    expect(read(TEXT, [], true)).toHaveLength(3);
  });

  it('preparedIn(): one statement per call, compiled once per list length, the same rows as the query built per call, longer lists built per call', async () => {
    const s = await store();
    await sql`INSERT INTO t (id, name) SELECT value, 'n' || value FROM json_each(${JSON.stringify(Array.from({ length: 100 }, (_, i) => i + 3))})`.execute(s.db);
    const build = (db: Parameters<typeof readCompiled>[0], ids: readonly number[]) =>
      db
        .selectFrom('t' as never)
        .select(['id', 'name'] as never)
        .where('id' as never, 'in', ids as never)
        .orderBy('id' as never);
    let built = 0;
    const byIds = preparedIn((db, ids) => {
      built++;
      return build(db, ids);
    });
    const texts: string[] = [];
    const read = directReaders.get(s.db)!;
    directReaders.set(s.db, (text, parameters, raw) => {
      texts.push(text);
      return read(text, parameters, raw);
    });
    const before = s.stats.queries;
    for (const ids of [[2], [1, 2], [2, 1], [7, 1, 99], Array.from({ length: 64 }, (_, i) => i + 1), Array.from({ length: 65 }, (_, i) => i + 1), [500]]) {
      const expected = await readCompiled(s.db, build(s.db, ids).compile());
      expect(await byIds(s.db, ids)).toEqual(expected);
    }
    expect(await byIds(s.db, [1, 2])).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(await byIds(s.db, [500])).toEqual([]);
    // One statement per call, and each call ran the same SQL text as the query built per call.
    expect(s.stats.queries - before).toBe(16);
    // Built once for each length up to 64 (1, 2, 3, 64), and for the 65 ids at their call.
    expect(built).toBe(5);
    for (let i = 0; i < 14; i += 2) expect(texts[i + 1]).toBe(texts[i]);
    // Inside a transaction: through Kysely's executor, seeing the transaction's writes.
    await s.db.transaction().execute(async (tx) => {
      await sql`INSERT INTO t (id, name) VALUES (1000, 'x')`.execute(tx);
      expect(await byIds(tx, [1000, 1])).toEqual([
        { id: 1, name: 'a' },
        { id: 1000, name: 'x' },
      ]);
    });
    // Compiled for the transaction's handle too (SQLite and PostgreSQL compile differently; each handle keeps its own).
    expect(built).toBe(6);
  });
});

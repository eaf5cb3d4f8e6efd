import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/db.js';
import { directRead } from '../../src/store/prepared.js';

/**
 * Direct reads (store/prepared.ts) while a transaction holds the SQLite
 * connection (issue 20, P8: the group commit's transaction is nearly always
 * open under a send load): they run on a read-only connection and answer the
 * last committed state at once, instead of waiting for the transaction or
 * seeing its uncommitted writes.
 */
const open: { store: Store; dir: string }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.store.close();
    fs.rmSync(o.dir, { recursive: true, force: true });
  }
});

async function scratch(): Promise<Store> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-reader-'));
  const store = openStore({ databaseUrl: undefined, dataDir: dir });
  open.push({ store, dir });
  await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(store.db);
  await sql`INSERT INTO t (id, v) VALUES (1, 'committed')`.execute(store.db);
  return store;
}

const read = (store: Store): Promise<{ id: number; v: string }[]> =>
  directRead<{ id: number; v: string }>(store.db, 'SELECT id, v FROM t ORDER BY id', [], async () => {
    throw new Error('not a direct read');
  });

describe('SQLite direct reads during a transaction', () => {
  it('answer the committed state without waiting for the open transaction', async () => {
    const store = await scratch();
    let during: { id: number; v: string }[] | undefined;
    await store.db.transaction().execute(async (tx) => {
      await sql`UPDATE t SET v = 'uncommitted' WHERE id = 1`.execute(tx);
      await sql`INSERT INTO t (id, v) VALUES (2, 'uncommitted')`.execute(tx);
      // Through Kysely this read would wait for the connection this transaction holds (forever, here).
      during = await read(store);
    });
    expect(during).toEqual([{ id: 1, v: 'committed' }]);
    // After the commit, the same read (main connection) sees the writes, and so does the read connection.
    expect(await read(store)).toEqual([
      { id: 1, v: 'uncommitted' },
      { id: 2, v: 'uncommitted' },
    ]);
    await store.db.transaction().execute(async () => {
      expect(await read(store)).toEqual([
        { id: 1, v: 'uncommitted' },
        { id: 2, v: 'uncommitted' },
      ]);
    });
  });

  it('counts each statement, on either connection', async () => {
    const store = await scratch();
    const before = store.stats.queries;
    await read(store);
    expect(store.stats.queries - before).toBe(1);
    await store.db.transaction().execute(async () => {
      const inside = store.stats.queries;
      await read(store);
      expect(store.stats.queries - inside).toBe(1);
    });
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startCheckpointer } from '../../src/store/sqlite-checkpointer.js';

/**
 * WAL checkpoints in a worker thread (issue 20, P8): nothing starts while the
 * WAL is small; once it has grown, another thread copies committed pages into
 * the database file and the main connection's own automatic checkpoint
 * becomes a distant backstop.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function open(): { db: SQLite.Database; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-ckpt-'));
  dirs.push(dir);
  const file = path.join(dir, 'db.sqlite3');
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)');
  return { db, file };
}

/** Writes `mb` MiB in one transaction. */
function write(db: SQLite.Database, mb: number): void {
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < mb * 256; i++) ins.run(Buffer.alloc(4000, i % 251));
  })();
}

const until = async (ok: () => boolean, ms: number): Promise<boolean> => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (ok()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return ok();
};

describe('SQLite checkpointer', () => {
  it('starts no thread while the WAL is small', async () => {
    const { db, file } = open();
    const c = startCheckpointer(db, file);
    write(db, 1);
    await new Promise((r) => setTimeout(r, 1300));
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await c.stop();
    db.close();
  });

  it('checkpoints from another thread once the WAL has grown, and stops cleanly', async () => {
    const { db, file } = open();
    db.pragma('wal_autocheckpoint = 0');
    const c = startCheckpointer(db, file);
    write(db, 5);
    // The watcher sees the 5 MiB WAL within a second and the worker takes over.
    expect(await until(() => db.pragma('wal_autocheckpoint', { simple: true }) === 16384, 5000)).toBe(true);
    const before = fs.statSync(file).size;
    write(db, 3);
    // Only the worker checkpoints now (the main connection's backstop is 64 MiB away):
    // the database file itself grows by what was committed.
    expect(await until(() => fs.statSync(file).size >= before + 7 * 2 ** 20, 5000)).toBe(true);
    await c.stop();
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 8 * 256 });
    db.close();
  });
});

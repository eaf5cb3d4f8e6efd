import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';
import type { Dialect } from './migrations/helpers.js';
import { WriteWatchPlugin } from './write-watch.js';

export type Db = Kysely<Database>;
export type { Dialect };

// int8 (bigint) columns hold unix seconds and counters that fit a double.
pg.types.setTypeParser(20, (v: string) => Number(v));

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Counts every statement executed; hot-path tests assert exact counts. */
  readonly stats: { queries: number };
  /** Counts writes to users and realms; the auth cache is dropped when it moves. */
  readonly userWrites: WriteWatchPlugin;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** undefined: SQLite at `${dataDir}/parley.sqlite3`; ":memory:" allowed; "postgres://..." for PostgreSQL */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly poolSize?: number;
}

export function openStore(opts: StoreOptions): Store {
  const stats = { queries: 0 };
  const log = (event: { level: string }): void => {
    if (event.level === 'query' || event.level === 'error') stats.queries++;
  };
  const userWrites = new WriteWatchPlugin(new Set(['users', 'realms']));
  const plugins = [userWrites];
  const url = opts.databaseUrl;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10 });
    // A connection that dies in the pool must not crash the process.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log, plugins });
    return { db, dialect: 'postgres', stats, userWrites, close: () => db.destroy() };
  }
  let file: string;
  if (url === ':memory:') file = ':memory:';
  else {
    fs.mkdirSync(opts.dataDir, { recursive: true });
    file = url ? url.replace(/^sqlite:(\/\/)?/, '') : path.join(opts.dataDir, 'parley.sqlite3');
  }
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log, plugins });
  return { db, dialect: 'sqlite', stats, userWrites, close: () => db.destroy() };
}

class StaticProvider implements MigrationProvider {
  constructor(private readonly all: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.all;
  }
}

/** Applies every pending migration; throws if one fails. */
export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider(migrations) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

export const bool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

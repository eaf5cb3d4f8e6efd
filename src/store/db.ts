import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import type Pg from 'pg';
import { lazyRequire } from '../lazy.js';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';
import { SQLITE_SCHEMA } from './migrations/sqlite-schema.js';
import type { Dialect } from './migrations/helpers.js';
import { WriteWatchPlugin } from './write-watch.js';
import { startCheckpointer } from './sqlite-checkpointer.js';

export type Db = Kysely<Database>;
export type { Dialect };

// pg is loaded only for a PostgreSQL URL; int8 (bigint) columns hold unix seconds and counters that fit a double.
const loadPg = lazyRequire<typeof Pg>('pg');
let pgTypesSet = false;
function pgModule(): typeof Pg {
  const pg = loadPg();
  if (!pgTypesSet) {
    pg.types.setTypeParser(20, (v: string) => Number(v));
    pgTypesSet = true;
  }
  return pg;
}

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Counts every statement executed (hot-path tests assert exact counts) and their total time in ms (metrics). */
  readonly stats: { queries: number; queryMs?: number };
  /** Counts writes to users and realms; the auth cache is dropped when it moves. */
  readonly userWrites: WriteWatchPlugin;
  /** Counts writes to user_messages (raw statements included); the max_message_id memo (state/user-extras.ts) is dropped when it moves. */
  readonly userMessageWrites: WriteWatchPlugin;
  /**
   * SQLite only: PRAGMA data_version, which moves when another connection (another
   * process: the CLI) commits; undefined while this connection has a transaction open.
   * Counted as a statement. PostgreSQL: absent (other processes commit unseen).
   */
  readonly dataVersion?: () => number | undefined;
  /**
   * SQLite on a file only: PRAGMA data_version of the read-only connection. That
   * connection never writes, so the value moves at every commit of any other
   * connection, this process's writer included: while it is unchanged, nothing
   * has been committed (domain/send-read-cache.ts). Counted as a statement.
   * Unlike dataVersion, it has an answer while a transaction is open.
   */
  readonly committedVersion?: () => number;
  /** SQLite only: whether this connection has a transaction open (no statement). */
  readonly inTransaction?: () => boolean;
  /** Counts writes to the tables behind the realm-wide parts of POST /register (state/realm-cache.ts). */
  readonly realmWrites: WriteWatchPlugin;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** undefined: SQLite at `${dataDir}/parley.sqlite3`; ":memory:" allowed; "postgres://..." for PostgreSQL */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly poolSize?: number;
}

export function openStore(opts: StoreOptions): Store {
  const stats = { queries: 0, queryMs: 0 };
  const log = (event: { level: string; queryDurationMillis: number }): void => {
    if (event.level === 'query' || event.level === 'error') {
      stats.queries++;
      stats.queryMs += event.queryDurationMillis;
    }
  };
  const userWrites = new WriteWatchPlugin(new Set(['users', 'realms']));
  const userMessageWrites = new WriteWatchPlugin(new Set(['user_messages']));
  const realmWrites = new WriteWatchPlugin(REALM_CACHE_TABLES);
  const plugins = [userWrites, userMessageWrites, realmWrites];
  const url = opts.databaseUrl;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const pool = new (pgModule().Pool)({ connectionString: url, max: opts.poolSize ?? 10 });
    // A connection that dies in the pool must not crash the process.
    pool.on('error', () => {});
    // Registered hot texts run as named statements: parsed and planned once per connection.
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (text: unknown, ...rest: unknown[]) => {
        const name = typeof text === 'string' && rest.length === 1 && Array.isArray(rest[0]) ? pgNamedStatements.get(text) : undefined;
        return name === undefined ? query(text, ...rest) : query({ name, text, values: rest[0] });
      };
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log, plugins });
    return { db, dialect: 'postgres', stats, userWrites, userMessageWrites, realmWrites, close: () => db.destroy() };
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
  // The write path (a send touches a page per recipient in user_messages and
  // its indexes) and GET /messages re-read the same hot pages: keep more of
  // them in the page cache (64 MiB, grown on demand), read the file through
  // a memory map instead of a read() per page, and keep temporary b-trees
  // (ORDER BY, IN-lists) in memory.
  sqlite.pragma('cache_size = -65536');
  sqlite.pragma('mmap_size = 268435456');
  sqlite.pragma('temp_store = MEMORY');
  // Kysely's SQLite driver prepares every statement on each call, which costs
  // 10-25% of CPU on hot paths; statements depend only on their SQL text, so
  // keep the prepared ones (bounded: IN-lists of varying length make many texts).
  const database = cachedStatements(sqlite, 2000);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log, plugins });
  // While a transaction is open (it holds Kysely's connection across awaits: under a
  // sustained send load, the group commit's nearly always), a read on the main
  // connection would see its uncommitted writes, and one through Kysely waits for
  // the whole transaction. A second, read-only connection reads the last committed
  // state now instead (WAL readers never wait for the writer): the same answer as
  // reading just before that transaction began, which is what waiting for the
  // connection would give if the scheduler had let this read go first.
  // Opened on first need; :memory: databases cannot be shared, so they wait as before.
  let reader: { prepare(sql: string): SQLite.Statement; close(): void } | undefined;
  const openReader = (): typeof reader => {
    const conn = new SQLite(file, { readonly: true, fileMustExist: true });
    conn.pragma('busy_timeout = 5000');
    conn.pragma('cache_size = -16384');
    conn.pragma('mmap_size = 268435456');
    conn.pragma('temp_store = MEMORY');
    return cachedStatements(conn, 500);
  };
  // Prepared reads (store/prepared.ts) may run straight on a connection, counted like any statement.
  directReaders.set(db, (sql, parameters, raw) => {
    let conn: { prepare(sql: string): SQLite.Statement } = database;
    if (sqlite.inTransaction) {
      if (file === ':memory:') return undefined;
      conn = reader ??= openReader()!;
    }
    const started = performance.now();
    try {
      const stmt = conn.prepare(sql);
      if (!raw) return stmt.all(parameters as unknown[]);
      // Rows as arrays, or each row's first column alone ('pluck'): better-sqlite3 builds
      // an object per row property by property, which costs more than the read itself for
      // GET /messages' 50 rows (store/message-search.ts). The statement is shared by SQL
      // text: back to objects before anyone else runs it.
      if (raw === 'pluck') stmt.pluck(true);
      else stmt.raw(true);
      try {
        return stmt.all(parameters as unknown[]);
      } finally {
        if (raw === 'pluck') stmt.pluck(false);
        else stmt.raw(false);
      }
    } finally {
      stats.queries++;
      stats.queryMs += performance.now() - started;
    }
  });
  /** One PRAGMA data_version, counted and timed like any statement. */
  const readVersion = (stmt: SQLite.Statement): number => {
    const started = performance.now();
    try {
      return stmt.get() as number;
    } finally {
      stats.queries++;
      stats.queryMs += performance.now() - started;
    }
  };
  const dataVersionStmt = sqlite.prepare('PRAGMA data_version').pluck();
  const dataVersion = (): number | undefined => (sqlite.inTransaction ? undefined : readVersion(dataVersionStmt));
  let committedVersionStmt: SQLite.Statement | undefined;
  const committedVersion = (): number => readVersion((committedVersionStmt ??= (reader ??= openReader()!).prepare('PRAGMA data_version').pluck()));
  // WAL checkpoints in a worker thread once the WAL grows (sqlite-checkpointer.ts).
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(sqlite, file);
  schemaCreators.set(db, () => createSqliteSchema(sqlite));
  const close = async (): Promise<void> => {
    await checkpointer?.stop();
    reader?.close();
    await db.destroy();
  };
  const inTransaction = (): boolean => sqlite.inTransaction;
  return {
    db,
    dialect: 'sqlite',
    stats,
    userWrites,
    userMessageWrites,
    realmWrites,
    dataVersion,
    ...(file === ':memory:' ? {} : { committedVersion }),
    inTransaction,
    close,
  };
}

/** Tables whose rows the realm cache of POST /register derives from (state/realm-cache.ts). */
const REALM_CACHE_TABLES: ReadonlySet<string> = new Set([
  'users',
  'realms',
  'channels',
  'subscriptions',
  'user_groups',
  'user_group_members',
  'user_group_subgroups',
  'custom_profile_fields',
  'custom_profile_field_values',
]);

/** A connection whose statements are prepared once per SQL text (at most `max` kept). */
function cachedStatements(conn: SQLite.Database, max: number): { prepare(sql: string): SQLite.Statement; close(): void } {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => conn.close(),
    prepare(sql: string): SQLite.Statement {
      let stmt = statements.get(sql);
      if (!stmt) {
        stmt = conn.prepare(sql);
        if (statements.size >= max) statements.clear();
        statements.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/**
 * PostgreSQL: SQL texts (as Kysely compiles them) that run as named prepared
 * statements, each parsed and planned once per pooled connection instead of
 * on every execution; the hot statements of a send (preparedOnPostgres).
 * Only constant texts belong here: a connection keeps every name it prepared.
 */
const pgNamedStatements = new Map<string, string>();
export function preparedOnPostgres(text: string): void {
  if (!pgNamedStatements.has(text)) pgNamedStatements.set(text, `parley_${pgNamedStatements.size + 1}`);
}

/**
 * For SQLite handles: runs a read statement synchronously, outside Kysely's
 * executor (its connection mutex, logger and plugin chain cost more than a
 * small indexed read itself), on the main connection or, while a transaction
 * holds it, on a read-only one (the last committed state); answers undefined
 * when it cannot (a :memory: database during a transaction). PostgreSQL
 * handles have none. `raw`: true, each row as an array of its columns in
 * SELECT order; 'pluck', each row's first column alone.
 */
export type DirectReader = (sql: string, parameters: readonly unknown[], raw?: boolean | 'pluck') => unknown[] | undefined;
export const directReaders = new WeakMap<Db, DirectReader>();

class StaticProvider implements MigrationProvider {
  constructor(private readonly all: Record<string, Migration>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.all;
  }
}

/** Applies every pending migration; throws if one fails. */
export async function migrate(db: Db): Promise<void> {
  if (schemaCreators.get(db)?.()) return;
  await migrateWithKysely(db);
}

/** Kysely's migrator: each pending migration in name order, recorded in kysely_migration. */
export async function migrateWithKysely(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider(migrations), nameComparator: migrationOrder(Object.keys(migrations)) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/**
 * Kysely orders migrations by localeCompare of their names. Names that all begin with a
 * different four-digit number (ours: 0001-..., 0100-...) are ordered by that number either
 * way, so they are compared by code units: localeCompare would load ICU's collation data
 * (3 MB of resident memory, performance.md P7) at every start. Else, localeCompare.
 */
export function migrationOrder(names: readonly string[]): (a: string, b: string) => number {
  const numbers = names.map((n) => /^(\d{4})-/.exec(n)?.[1]);
  const distinct = numbers.every((n) => n !== undefined) && new Set(numbers).size === names.length;
  return distinct ? (a, b) => (a < b ? -1 : a > b ? 1 : 0) : (a, b) => a.localeCompare(b);
}

/** SQLite stores opened by openStore: creates the whole schema when the database is empty (below). */
const schemaCreators = new WeakMap<Db, () => boolean>();

/**
 * An empty SQLite database (a first start) gets what the migrations would
 * make, in one transaction: their statements as Kysely's migrator executes
 * them (recorded by tools/generate-sqlite-schema.mjs into
 * migrations/sqlite-schema.ts; test/unit/sqlite-schema.test.ts checks both the
 * recording and the resulting schema against the migrations) and the migrator's
 * own rows, so that later migrations are applied by the migrator as usual.
 * Through the migrator, building and committing some 150 statements one by one
 * was about 10% of a cold start's CPU (performance.md P10). False, with nothing
 * done, when the database is not empty or the recording does not cover exactly
 * the migrations there are: the migrator then does the work. BEGIN IMMEDIATE
 * waits for another process creating the schema at the same moment; it then
 * finds the database not empty.
 */
function createSqliteSchema(sqlite: SQLite.Database): boolean {
  const names = Object.keys(migrations);
  if (names.length !== SQLITE_SCHEMA.migrations.length || !SQLITE_SCHEMA.migrations.every((n) => names.includes(n))) return false;
  sqlite.exec('BEGIN IMMEDIATE');
  try {
    if (sqlite.prepare('SELECT count(*) FROM sqlite_master').pluck().get() !== 0) {
      sqlite.exec('ROLLBACK');
      return false;
    }
    const at = sqlText(new Date().toISOString());
    const rows = SQLITE_SCHEMA.migrations.map((name) => `insert into "kysely_migration" ("name", "timestamp") values (${sqlText(name)}, ${at})`);
    sqlite.exec([...SQLITE_SCHEMA.statements, ...rows].map((s) => `${s};`).join('\n'));
    sqlite.exec('COMMIT');
    return true;
  } catch (err) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    throw err;
  }
}

/** A string as an SQL literal. */
export const sqlText = (s: string): string => `'${s.replaceAll("'", "''")}'`;

export const bool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

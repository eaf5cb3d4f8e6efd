import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrateWithKysely, sqlText } from '../db.js';
import type { Database } from '../schema.js';

export interface SqliteSchema {
  /** The migrations it covers, in the order Kysely's migrator applies them. */
  readonly migrations: readonly string[];
  /** Every statement the migrator executes on an empty database, in order, but its reads and its kysely_migration rows; parameters inlined. */
  readonly statements: readonly string[];
}

/**
 * Runs the migrations through Kysely's migrator on an empty in-memory SQLite
 * database and records what it executes (src/store/db.ts createSqliteSchema
 * replays it in one transaction). Used by tools/generate-sqlite-schema.mjs to
 * write migrations/sqlite-schema.ts and by its test to check that file.
 */
export async function recordSqliteSchema(): Promise<SqliteSchema> {
  const statements: string[] = [];
  const names: string[] = [];
  const sqlite = new SQLite(':memory:');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: sqlite }),
    log: (event) => {
      if (event.level !== 'query') return;
      const { sql, parameters } = event.query;
      if (/^\s*(select|with)\b/i.test(sql)) return;
      if (/^insert into "kysely_migration" \(/.test(sql)) {
        names.push(String(parameters[0]));
        return;
      }
      statements.push(inline(sql, parameters));
    },
  });
  try {
    await migrateWithKysely(db);
  } finally {
    await db.destroy();
  }
  return { migrations: names, statements };
}

function inline(sql: string, parameters: readonly unknown[]): string {
  const parts = sql.split('?');
  if (parts.length !== parameters.length + 1) throw new Error(`cannot inline the parameters of: ${sql}`);
  return parts.reduce((out, part, i) => {
    if (i === 0) return part;
    const v = parameters[i - 1];
    if (typeof v === 'number' && Number.isFinite(v)) return `${out}${v}${part}`;
    if (typeof v === 'string') return `${out}${sqlText(v)}${part}`;
    throw new Error(`cannot inline ${typeof v} in: ${sql}`);
  }, '');
}

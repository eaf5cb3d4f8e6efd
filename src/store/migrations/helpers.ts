import type { CreateTableBuilder, Kysely, RawBuilder } from 'kysely';
import { sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** The dialect of a Kysely instance, read from the adapter (migrations get only the instance). */
export function dialectOf(db: Kysely<any>): Dialect {
  return db.getExecutor().adapter.constructor.name.toLowerCase().includes('postgres') ? 'postgres' : 'sqlite';
}

/** An auto-increment integer primary key on either back end. */
export function withId<T extends string>(db: Kysely<any>, tb: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return dialectOf(db) === 'postgres'
    ? tb.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : tb.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/**
 * `column = key` for a text key that PostgreSQL indexes by its md5() (migration 1700: the
 * key of a direct-message conversation can outgrow a B-tree entry). There the md5 comparison
 * lets the planner use that index, and the plain one keeps the answer exact.
 */
export function textKeyEquals(dialect: Dialect, column: string, key: string): RawBuilder<boolean> {
  const col = sql.ref(column);
  return dialect === 'postgres' ? sql<boolean>`md5(${col}) = md5(${key}) AND ${col} = ${key}` : sql<boolean>`${col} = ${key}`;
}

export { sql };

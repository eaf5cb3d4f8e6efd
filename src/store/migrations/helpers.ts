import type { CreateTableBuilder, Kysely } from 'kysely';
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

export { sql };

import type { CompiledQuery, Compilable } from 'kysely';
import { directReaders, type Db, type DirectReader } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/**
 * A query that Kysely builds and compiles once per database handle, then runs
 * with each call's arguments: the builder's immutable nodes and the compiler
 * are most of what a small query costs in Kysely (about 25 of the 40
 * microseconds of GET /users/me's one statement, docs/performance.md). A
 * read on SQLite outside a transaction then runs straight on the connection
 * (store/db.ts directReaders), counted like any statement; anything else
 * (PostgreSQL, a transaction, a write) goes through Kysely's executor.
 *
 * `args`: the number of arguments when all are numbers, else the kind of each
 * ('number' or 'string'). `build` receives placeholder arguments (distinct
 * sentinel numbers or strings) and must pass each, unchanged, to the builder as
 * a parameter value (never compute with it: lower-case a name before the
 * call); every call's arguments take their places. SQLite and PostgreSQL
 * compile differently, so the compiled form is kept per handle.
 */
export function prepared<R, A extends readonly number[]>(args: A['length'], build: (db: AnyDb, ...args: A) => Compilable<R>): (db: AnyDb, ...args: A) => Promise<R[]>;
export function prepared<R, A extends readonly (number | string)[]>(
  args: readonly ('number' | 'string')[],
  build: (db: AnyDb, ...args: A) => Compilable<R>,
): (db: AnyDb, ...args: A) => Promise<R[]>;
export function prepared<R, A extends readonly (number | string)[]>(
  args: number | readonly ('number' | 'string')[],
  build: (db: AnyDb, ...args: A) => Compilable<R>,
): (db: AnyDb, ...args: A) => Promise<R[]> {
  const kinds: readonly ('number' | 'string')[] = typeof args === 'number' ? Array.from({ length: args }, () => 'number' as const) : (args as readonly ('number' | 'string')[]);
  const arity = kinds.length;
  const placeholders = kinds.map((k, i) => (k === 'number' ? SENTINEL - i : `${STRING_SENTINEL}${i}`)) as unknown as A;
  type Entry = { query: CompiledQuery<R>; slots: number[]; direct: DirectReader | undefined };
  const compiled = new WeakMap<AnyDb, Entry>();
  const slotOf = (p: unknown): number => {
    if (typeof p === 'number' && p <= SENTINEL && p > SENTINEL - arity) return SENTINEL - p;
    if (typeof p === 'string' && p.startsWith(STRING_SENTINEL)) {
      const i = Number(p.slice(STRING_SENTINEL.length));
      if (kinds[i] === 'string') return i;
    }
    return -1;
  };
  const compile = (db: AnyDb): Entry => {
    const query = build(db, ...placeholders).compile();
    // For each parameter of the compiled statement: the argument it is (index), or -1 for a constant.
    const slots = query.parameters.map(slotOf);
    const used = new Set(slots.filter((i) => i >= 0));
    if (used.size !== arity) throw new Error(`prepared(): ${arity - used.size} argument(s) not found among the parameters of ${query.sql}`);
    // A read on a SQLite handle (not a transaction) may skip Kysely's executor (store/db.ts).
    const direct = query.query.kind === 'SelectQueryNode' ? directReaders.get(db as Db) : undefined;
    const entry = { query, slots, direct };
    compiled.set(db, entry);
    return entry;
  };
  return async (db, ...args) => {
    const { query, slots, direct } = compiled.get(db) ?? compile(db);
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) parameters[i] = slots[i]! >= 0 ? args[slots[i]!] : query.parameters[i];
    const rows = direct?.(query.sql, parameters);
    if (rows !== undefined) return rows as R[];
    return (await db.executeQuery<R>({ query: query.query, queryId: query.queryId, sql: query.sql, parameters })).rows;
  };
}

/** Placeholders are SENTINEL, SENTINEL - 1, ... (numbers no id, count or limit is) or STRING_SENTINEL + index. */
const SENTINEL = -7_300_917_000;
const STRING_SENTINEL = '\u0000prepared-argument-';

/**
 * A read written as SQLite SQL text, run straight on the connection when the
 * handle has a direct reader (store/db.ts: SQLite, not a transaction), else
 * `otherwise` (the same query through Kysely: PostgreSQL, a transaction).
 * For hot reads whose parameters are not all numbers (prepared() needs
 * numbers): `sqliteSql` must select exactly what `otherwise` does.
 */
export function directRead<R>(db: AnyDb, sqliteSql: string, parameters: readonly unknown[], otherwise: () => Promise<R[]>): Promise<R[]> {
  const direct = directReaders.get(db as Db);
  if (!direct) return otherwise();
  try {
    const rows = direct(sqliteSql, parameters);
    return rows === undefined ? otherwise() : Promise.resolve(rows as R[]);
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Runs a compiled read (a query built per call, e.g. with an IN-list): straight
 * on the SQLite connection when it can (no transaction open, store/db.ts
 * directReaders), else through Kysely's executor. Counted like any statement.
 */
export async function readCompiled<R>(db: AnyDb, query: CompiledQuery<R>): Promise<R[]> {
  const rows = directReaders.get(db as Db)?.(query.sql, query.parameters);
  if (rows !== undefined) return rows as R[];
  return (await db.executeQuery<R>(query)).rows;
}

/** IN-lists up to this many ids get a query compiled once per length (preparedIn). */
const IN_LIST_PREPARED_MAX = 64;

/**
 * A read by a list of ids (`build` puts them in an IN-list): compiled once per list
 * length and database handle (prepared() above), so a call builds and compiles
 * nothing; longer lists than IN_LIST_PREPARED_MAX are built per call (readCompiled).
 * Same SQL text and statement either way. Every GET /messages page reads the
 * page's people this way: Kysely building and compiling that one query was 3-4% of
 * the page's CPU (docs/performance.md, P2, 2026-11-29).
 */
export function preparedIn<R>(build: (db: AnyDb, ids: readonly number[]) => Compilable<R>): (db: AnyDb, ids: readonly number[]) => Promise<R[]> {
  const byLength: ((db: AnyDb, ...ids: number[]) => Promise<R[]>)[] = [];
  return (db, ids) => {
    const n = ids.length;
    if (n === 0 || n > IN_LIST_PREPARED_MAX) return readCompiled(db, build(db, ids).compile());
    const run = (byLength[n] ??= prepared<R, number[]>(n, (d, ...placeholders) => build(d, placeholders)));
    return run(db, ...ids);
  };
}

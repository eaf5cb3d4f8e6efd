import { sql } from 'kysely';
import type { Db, Dialect } from '../../src/store/db.js';

/**
 * A cheap fingerprint of the whole database, which refused requests must
 * leave unchanged. SQLite: row count and largest id of every table, read in
 * one statement. PostgreSQL: rows written per table, counted by triggers.
 */
export interface Fingerprinter {
  readonly tables: readonly string[];
  take(): Promise<Record<string, string>>;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export async function fingerprinter(db: Db, dialect: Dialect): Promise<Fingerprinter> {
  return dialect === 'postgres' ? writeCounter(db) : countsAndIds(db, dialect);
}

/**
 * PostgreSQL: sixty COUNT(*) subqueries cost ~10 ms a time there, so instead a
 * row-level trigger on every table counts rows written per table, in the
 * writing transaction (a rolled-back write counts nothing). Stricter than
 * counts and ids: it also sees UPDATEs. Test databases only.
 */
async function writeCounter(db: Db): Promise<Fingerprinter> {
  const tables = (
    await sql<{ t: string }>`SELECT table_name AS t FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'kysely_%'`.execute(db)
  ).rows.map((r) => r.t);
  await sql`CREATE TABLE IF NOT EXISTS fuzz_write_counter (t text PRIMARY KEY, n bigint NOT NULL)`.execute(db);
  await sql`CREATE OR REPLACE FUNCTION fuzz_count_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO fuzz_write_counter (t, n) VALUES (TG_TABLE_NAME, 1) ON CONFLICT (t) DO UPDATE SET n = fuzz_write_counter.n + 1;
      RETURN NULL;
    END $$`.execute(db);
  for (const t of tables) {
    await sql.raw(`CREATE OR REPLACE TRIGGER fuzz_count AFTER INSERT OR UPDATE OR DELETE ON ${quote(t)} FOR EACH ROW EXECUTE FUNCTION fuzz_count_write()`).execute(db);
  }
  return {
    tables: tables.sort(),
    async take() {
      const out: Record<string, string> = {};
      for (const r of (await sql<{ t: string; n: string | number }>`SELECT t, n FROM fuzz_write_counter`.execute(db)).rows) out[r.t] = `${String(r.n)} rows written`;
      return out;
    },
  };
}

async function countsAndIds(db: Db, dialect: Dialect): Promise<Fingerprinter> {
  const cols =
    dialect === 'sqlite'
      ? await sql<{ t: string; c: string }>`SELECT m.name AS t, p.name AS c FROM sqlite_master m JOIN pragma_table_info(m.name) p
          WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'kysely_%'`.execute(db)
      : await sql<{ t: string; c: string }>`SELECT table_name AS t, column_name AS c FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name NOT LIKE 'kysely_%'`.execute(db);
  const hasId = new Map<string, boolean>();
  for (const r of cols.rows) hasId.set(r.t, (hasId.get(r.t) ?? false) || r.c === 'id');
  const tables = [...hasId.keys()].sort();
  const parts = tables.map(
    (t) => `SELECT '${t.replaceAll("'", "''")}' AS t, COUNT(*) AS n, ${hasId.get(t) ? `MAX(${quote('id')})` : 'NULL'} AS m FROM ${quote(t)}`,
  );
  const query = sql.raw<{ t: string; n: number | string; m: number | string | null }>(parts.join(' UNION ALL '));
  return {
    tables,
    async take() {
      const out: Record<string, string> = {};
      for (const r of (await query.execute(db)).rows) out[r.t] = `${String(r.n)}/${String(r.m ?? '-')}`;
      return out;
    },
  };
}

/** Tables whose fingerprints differ, with before -> after. */
export function fingerprintDiff(a: Record<string, string>, b: Record<string, string>): string[] {
  const out: string[] = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (a[k] !== b[k]) out.push(`${k}: ${a[k]} -> ${b[k]}`);
  return out;
}

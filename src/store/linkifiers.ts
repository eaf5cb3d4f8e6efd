import type { Selectable } from 'kysely';
import { isPossibleId } from '../domain/rules/ids.js';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { RealmLinkifierTable } from './client-compat-schema.js';

type AnyDb = Db | TxDb;
export type LinkifierRow = Selectable<RealmLinkifierTable>;

/** Linkifier queries (no rules). */

/** The realm's linkifiers in processing order. */
export function linkifierRows(db: AnyDb, realmId: number): Promise<LinkifierRow[]> {
  return db.selectFrom('realm_linkifiers').selectAll().where('realm_id', '=', realmId).orderBy('sort_order').orderBy('id').execute();
}

export function linkifierById(db: AnyDb, realmId: number, id: number): Promise<LinkifierRow | undefined> {
  // An id beyond a 32-bit row id cannot exist (and would be a PostgreSQL error).
  if (!isPossibleId(id)) return Promise.resolve(undefined);
  return db.selectFrom('realm_linkifiers').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

/** Another linkifier of the realm with this pattern (the pattern is unique per realm). */
export async function patternInUse(db: AnyDb, realmId: number, pattern: string, exceptId?: number): Promise<boolean> {
  let q = db.selectFrom('realm_linkifiers').select('id').where('realm_id', '=', realmId).where('pattern', '=', pattern);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function insertLinkifier(db: AnyDb, row: { realm_id: number; pattern: string; url_template: string }): Promise<number> {
  const max = await db
    .selectFrom('realm_linkifiers')
    .select((eb) => eb.fn.max('sort_order').as('m'))
    .where('realm_id', '=', row.realm_id)
    .executeTakeFirst();
  const order = max?.m === null || max?.m === undefined ? 0 : Number(max.m) + 1;
  const r = await db.insertInto('realm_linkifiers').values({ ...row, sort_order: order }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function updateLinkifier(db: AnyDb, id: number, patch: { pattern: string; url_template: string }): Promise<void> {
  await db.updateTable('realm_linkifiers').set(patch).where('id', '=', id).execute();
}

export async function deleteLinkifier(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('realm_linkifiers').where('id', '=', id).execute();
}

export async function setLinkifierOrder(db: AnyDb, id: number, order: number): Promise<void> {
  await db.updateTable('realm_linkifiers').set({ sort_order: order }).where('id', '=', id).execute();
}

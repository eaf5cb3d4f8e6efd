import { prepared } from './prepared.js';
import type { Selectable, Updateable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { NavigationViewTable } from './schema.js';

type AnyDb = Db | TxDb;
export type NavigationViewRow = Selectable<NavigationViewTable>;

const viewsQuery = prepared(1, (db, userId: number) => db.selectFrom('navigation_views').selectAll().where('user_id', '=', userId).orderBy('id'));
export function viewsOfUser(db: AnyDb, userId: number): Promise<NavigationViewRow[]> {
  return viewsQuery(db, userId);
}

export function viewOfUser(db: AnyDb, userId: number, fragment: string): Promise<NavigationViewRow | undefined> {
  return db.selectFrom('navigation_views').selectAll().where('user_id', '=', userId).where('fragment', '=', fragment).executeTakeFirst();
}

export async function viewNameTaken(db: AnyDb, userId: number, name: string): Promise<boolean> {
  return (await db.selectFrom('navigation_views').select('id').where('user_id', '=', userId).where('name', '=', name).executeTakeFirst()) !== undefined;
}

export async function insertView(db: AnyDb, row: { user_id: number; fragment: string; is_pinned: number; name: string | null }): Promise<NavigationViewRow> {
  return db.insertInto('navigation_views').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateView(db: AnyDb, id: number, values: Updateable<NavigationViewTable>): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await db.updateTable('navigation_views').set(values).where('id', '=', id).execute();
}

export async function deleteView(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('navigation_views').where('id', '=', id).execute();
}

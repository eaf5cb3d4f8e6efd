import { prepared } from './prepared.js';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { DraftTable } from './schema.js';

type AnyDb = Db | TxDb;
export type DraftRow = Selectable<DraftTable>;

/** A draft of this user (someone else's draft is "not found", like a missing one). */
export async function draftOfUser(db: AnyDb, userId: number, id: number): Promise<DraftRow | undefined> {
  // Ids beyond the 32-bit range cannot exist (and would be an error on PostgreSQL).
  if (id > 2_147_483_647) return undefined;
  return db.selectFrom('drafts').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

const draftsQuery = prepared(1, (db, userId: number) => db.selectFrom('drafts').selectAll().where('user_id', '=', userId).orderBy('last_edit_time').orderBy('id'));
export function draftsOfUser(db: AnyDb, userId: number): Promise<DraftRow[]> {
  return draftsQuery(db, userId);
}

export async function insertDrafts(db: AnyDb, rows: Insertable<DraftTable>[]): Promise<DraftRow[]> {
  if (rows.length === 0) return [];
  return db.insertInto('drafts').values(rows).returningAll().execute();
}

export async function updateDraft(db: AnyDb, id: number, values: Updateable<DraftTable>): Promise<void> {
  await db.updateTable('drafts').set(values).where('id', '=', id).execute();
}

export async function deleteDraft(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('drafts').where('id', '=', id).execute();
}

/** Deletes every draft of a user (turning drafts synchronization off does this, without events). */
export async function deleteDraftsOfUser(db: AnyDb, userId: number): Promise<void> {
  await db.deleteFrom('drafts').where('user_id', '=', userId).execute();
}

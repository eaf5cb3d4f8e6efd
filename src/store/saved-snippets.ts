import { prepared } from './prepared.js';
import type { Selectable, Updateable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { SavedSnippetTable } from './schema.js';

type AnyDb = Db | TxDb;
export type SavedSnippetRow = Selectable<SavedSnippetTable>;

const snippetsQuery = prepared(1, (db, userId: number) => db.selectFrom('saved_snippets').selectAll().where('user_id', '=', userId).orderBy('id'));
export function snippetsOfUser(db: AnyDb, userId: number): Promise<SavedSnippetRow[]> {
  return snippetsQuery(db, userId);
}

export async function snippetOfUser(db: AnyDb, userId: number, id: number): Promise<SavedSnippetRow | undefined> {
  // Ids beyond the 32-bit range cannot exist (and would be an error on PostgreSQL).
  if (id > 2_147_483_647) return undefined;
  return db.selectFrom('saved_snippets').selectAll().where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
}

export function insertSnippet(db: AnyDb, row: Omit<SavedSnippetRow, 'id'>): Promise<SavedSnippetRow> {
  return db.insertInto('saved_snippets').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateSnippet(db: AnyDb, id: number, values: Updateable<SavedSnippetTable>): Promise<void> {
  await db.updateTable('saved_snippets').set(values).where('id', '=', id).execute();
}

export async function deleteSnippet(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('saved_snippets').where('id', '=', id).execute();
}

import { prepared } from './prepared.js';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/** A user's alert words in the order they were added. */
const alertWordsQuery = prepared(1, (db, userId: number) => db.selectFrom('alert_words').select('word').where('user_id', '=', userId).orderBy('id'));
export async function alertWordsOfUser(db: AnyDb, userId: number): Promise<string[]> {
  const rows = await alertWordsQuery(db, userId);
  return rows.map((r) => r.word);
}

export async function insertAlertWords(db: AnyDb, realmId: number, userId: number, words: readonly string[]): Promise<void> {
  if (words.length === 0) return;
  await db.insertInto('alert_words').values(words.map((word) => ({ realm_id: realmId, user_id: userId, word }))).execute();
}

export async function deleteAlertWordsByIds(db: AnyDb, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('alert_words').where('id', 'in', [...ids]).execute();
}

export function alertWordRowsOfUser(db: AnyDb, userId: number): Promise<{ id: number; word: string }[]> {
  return db.selectFrom('alert_words').select(['id', 'word']).where('user_id', '=', userId).orderBy('id').execute();
}

import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

export interface StorageEntry {
  readonly key: string;
  readonly value: string;
}

/** Every entry of one bot, in key order. */
export function storageOfUser(db: AnyDb, userId: number): Promise<StorageEntry[]> {
  return db.selectFrom('bot_storage').select(['key', 'value']).where('user_id', '=', userId).orderBy('key').execute();
}

/** Inserts or replaces entries (one statement each way: update existing keys, insert the rest). */
export async function upsertStorage(db: AnyDb, userId: number, entries: readonly StorageEntry[], existing: ReadonlySet<string>): Promise<void> {
  const fresh = entries.filter((e) => !existing.has(e.key));
  for (const e of entries) {
    if (existing.has(e.key)) await db.updateTable('bot_storage').set({ value: e.value }).where('user_id', '=', userId).where('key', '=', e.key).execute();
  }
  if (fresh.length > 0) await db.insertInto('bot_storage').values(fresh.map((e) => ({ user_id: userId, key: e.key, value: e.value }))).execute();
}

export async function deleteStorageKeys(db: AnyDb, userId: number, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('bot_storage').where('user_id', '=', userId).where('key', 'in', [...keys]).execute();
}

import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { RealmEmojiTable } from './client-compat-schema.js';

type AnyDb = Db | TxDb;
export type RealmEmojiRow = Selectable<RealmEmojiTable>;

/** Custom emoji queries (no rules). */

/** Every custom emoji of the realm, deactivated ones included, by id. */
export function realmEmojiRows(db: AnyDb, realmId: number): Promise<RealmEmojiRow[]> {
  return db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
}

export function activeRealmEmojiByName(db: AnyDb, realmId: number, name: string): Promise<RealmEmojiRow | undefined> {
  return db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).where('name', '=', name).where('deactivated', '=', 0).executeTakeFirst();
}

export async function insertRealmEmoji(db: AnyDb, row: { realm_id: number; name: string; author_id: number; file_name: string; is_animated: number }): Promise<number> {
  const r = await db.insertInto('realm_emoji').values({ ...row, deactivated: 0 }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function deactivateRealmEmoji(db: AnyDb, id: number): Promise<void> {
  await db.updateTable('realm_emoji').set({ deactivated: 1 }).where('id', '=', id).execute();
}

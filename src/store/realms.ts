import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { Selectable } from 'kysely';
import type { RealmTable } from './schema.js';

export type RealmRow = Selectable<RealmTable>;

export function realmById(db: Db | TxDb, id: number): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The realm served by this process (Parley serves one organization per database for now). */
export function defaultRealm(db: Db | TxDb): Promise<RealmRow | undefined> {
  return db.selectFrom('realms').selectAll().orderBy('id').limit(1).executeTakeFirst();
}

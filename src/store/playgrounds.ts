import { prepared } from './prepared.js';
import type { Selectable } from 'kysely';
import { isPossibleId } from '../domain/rules/ids.js';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { RealmPlaygroundTable } from './playground-schema.js';

type AnyDb = Db | TxDb;
export type PlaygroundRow = Selectable<RealmPlaygroundTable>;

/** Code playground queries (no rules). */

/** The realm's playgrounds in id order (Zulip's get_realm_playgrounds). */
const playgroundsQuery = prepared(1, (db, realmId: number) => db.selectFrom('realm_playgrounds').selectAll().where('realm_id', '=', realmId).orderBy('id'));
export function playgroundRows(db: AnyDb, realmId: number): Promise<PlaygroundRow[]> {
  return playgroundsQuery(db, realmId);
}

export function playgroundById(db: AnyDb, realmId: number, id: number): Promise<PlaygroundRow | undefined> {
  // An id beyond a 32-bit row id cannot exist (and would be a PostgreSQL error).
  if (!isPossibleId(id)) return Promise.resolve(undefined);
  return db.selectFrom('realm_playgrounds').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

export async function playgroundExists(db: AnyDb, realmId: number, pygmentsLanguage: string, name: string): Promise<boolean> {
  const row = await db
    .selectFrom('realm_playgrounds')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('pygments_language', '=', pygmentsLanguage)
    .where('name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertPlayground(db: AnyDb, row: { realm_id: number; name: string; pygments_language: string; url_template: string }): Promise<number> {
  return (await db.insertInto('realm_playgrounds').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function deletePlayground(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('realm_playgrounds').where('id', '=', id).execute();
}

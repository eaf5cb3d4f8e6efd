import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { UserTable } from './schema.js';

export type UserRow = Selectable<UserTable>;
type AnyDb = Db | TxDb;

/** Authentication lookup: the user holding this API key, with the realm's deactivation flag. */
export function userByApiKey(db: AnyDb, apiKey: string) {
  return db
    .selectFrom('users')
    .innerJoin('realms', 'realms.id', 'users.realm_id')
    .selectAll('users')
    .select('realms.deactivated as realm_deactivated')
    .where('users.api_key', '=', apiKey)
    .executeTakeFirst();
}

export function userById(db: AnyDb, realmId: number, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

export function userByEmail(db: AnyDb, realmId: number, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('email_lower', '=', email.trim().toLowerCase())
    .executeTakeFirst();
}

export function usersInRealm(db: AnyDb, realmId: number, ids?: readonly number[]): Promise<UserRow[]> {
  let q = db.selectFrom('users').selectAll().where('realm_id', '=', realmId);
  if (ids) {
    if (ids.length === 0) return Promise.resolve([]);
    q = q.where('id', 'in', [...ids]);
  }
  return q.orderBy('id').execute();
}

export async function activeUserIds(db: AnyDb, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
  return rows.map((r) => r.id);
}

export async function countActiveHumanOwners(db: AnyDb, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('role', '=', 100)
    .where('is_active', '=', 1)
    .where('is_bot', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertUser(db: AnyDb, row: Insertable<UserTable>): Promise<number> {
  const r = await db.insertInto('users').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function updateUser(db: AnyDb, id: number, patch: Updateable<UserTable>): Promise<void> {
  await db.updateTable('users').set(patch).where('id', '=', id).execute();
}

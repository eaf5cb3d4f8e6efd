import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

export async function systemGroupIds(db: AnyDb, realmId: number): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('user_groups')
    .select(['id', 'name'])
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', 1)
    .execute();
  return new Map(rows.map((r) => [r.name!, r.id]));
}

export async function addMembers(db: AnyDb, realmId: number, groupId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insertInto('user_group_members')
    .values(userIds.map((user_id) => ({ realm_id: realmId, group_id: groupId, user_id })))
    .execute();
}

export async function removeMembers(db: AnyDb, groupId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  await db.deleteFrom('user_group_members').where('group_id', '=', groupId).where('user_id', 'in', [...userIds]).execute();
}

export async function groupIdsOfUser(db: AnyDb, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('user_group_members').select('group_id').where('user_id', '=', userId).execute();
  return rows.map((r) => r.group_id);
}

import type { Selectable, Updateable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { UserGroupTable } from './schema.js';

type AnyDb = Db | TxDb;
export type UserGroupRow = Selectable<UserGroupTable>;

/** A group of the realm, named or anonymous. */
export function groupById(db: AnyDb, realmId: number, id: number): Promise<UserGroupRow | undefined> {
  return db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

export async function groupNameTaken(db: AnyDb, realmId: number, name: string): Promise<boolean> {
  const row = await db.selectFrom('user_groups').select('id').where('realm_id', '=', realmId).where('name', '=', name).executeTakeFirst();
  return row !== undefined;
}

export async function updateGroup(db: AnyDb, id: number, values: Updateable<UserGroupTable>): Promise<void> {
  await db.updateTable('user_groups').set(values).where('id', '=', id).execute();
}

/** Direct members that are active users, sorted. */
export async function activeDirectMemberIds(db: AnyDb, groupId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_members')
    .innerJoin('users', 'users.id', 'user_group_members.user_id')
    .select('user_group_members.user_id')
    .where('user_group_members.group_id', '=', groupId)
    .where('users.is_active', '=', 1)
    .orderBy('user_group_members.user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

/** Which of these users are direct members (active or not). */
export async function directMembershipsOf(db: AnyDb, groupId: number, userIds: readonly number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('user_group_members')
    .select('user_id')
    .where('group_id', '=', groupId)
    .where('user_id', 'in', [...userIds])
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

export async function directSubgroupIds(db: AnyDb, groupId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_subgroups')
    .select('subgroup_id')
    .where('supergroup_id', '=', groupId)
    .orderBy('subgroup_id')
    .execute();
  return rows.map((r) => r.subgroup_id);
}

/**
 * The named groups reachable from these ids (the ids themselves included),
 * following subgroup links. One query.
 */
export async function recursiveNamedSubgroups(
  db: AnyDb,
  realmId: number,
  groupIds: readonly number[],
): Promise<{ id: number; deactivated: number }[]> {
  // Ids beyond the 32-bit range cannot exist (and would be an error on PostgreSQL).
  const possible = groupIds.filter((id) => Number.isSafeInteger(id) && id > 0 && id <= 2_147_483_647);
  if (possible.length === 0) return [];
  const rows = await sql<{ id: number; deactivated: number }>`
    WITH RECURSIVE reach(id) AS (
      SELECT g.id FROM user_groups g
      WHERE g.id IN (${sql.join(possible)}) AND g.realm_id = ${realmId} AND g.name IS NOT NULL
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    )
    SELECT g.id, g.deactivated FROM user_groups g JOIN reach r ON r.id = g.id
    WHERE g.name IS NOT NULL
    ORDER BY g.id`.execute(db);
  return rows.rows.map((r) => ({ id: Number(r.id), deactivated: Number(r.deactivated) }));
}

/** Named groups strictly below this one (not the group itself). One query. */
export async function recursiveStrictSubgroupIds(db: AnyDb, groupId: number): Promise<number[]> {
  const rows = await sql<{ id: number }>`
    WITH RECURSIVE reach(id) AS (
      SELECT subgroup_id FROM user_group_subgroups WHERE supergroup_id = ${groupId}
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    )
    SELECT g.id FROM user_groups g JOIN reach r ON r.id = g.id
    WHERE g.name IS NOT NULL
    ORDER BY g.id`.execute(db);
  return rows.rows.map((r) => Number(r.id));
}

export async function addSubgroupLinks(db: AnyDb, realmId: number, supergroupId: number, subgroupIds: readonly number[]): Promise<void> {
  if (subgroupIds.length === 0) return;
  await db
    .insertInto('user_group_subgroups')
    .values(subgroupIds.map((subgroup_id) => ({ realm_id: realmId, supergroup_id: supergroupId, subgroup_id })))
    .execute();
}

export async function removeSubgroupLinks(db: AnyDb, supergroupId: number, subgroupIds: readonly number[]): Promise<void> {
  if (subgroupIds.length === 0) return;
  await db.deleteFrom('user_group_subgroups').where('supergroup_id', '=', supergroupId).where('subgroup_id', 'in', [...subgroupIds]).execute();
}

/** The groups (named or anonymous) that have this group as a direct subgroup. */
export async function directSupergroups(db: AnyDb, groupId: number): Promise<{ id: number; name: string | null; deactivated: number }[]> {
  return db
    .selectFrom('user_group_subgroups')
    .innerJoin('user_groups', 'user_groups.id', 'user_group_subgroups.supergroup_id')
    .select(['user_groups.id', 'user_groups.name', 'user_groups.deactivated'])
    .where('user_group_subgroups.subgroup_id', '=', groupId)
    .orderBy('user_groups.id')
    .execute();
}

/** Every group row of a realm, named and anonymous (for /register and lists). */
export function groupsOfRealm(db: AnyDb, realmId: number): Promise<UserGroupRow[]> {
  return db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
}

/** Active direct members and direct subgroups of many groups: two queries. */
export async function membershipOfGroups(
  db: AnyDb,
  realmId: number,
): Promise<{ members: Map<number, number[]>; subgroups: Map<number, number[]> }> {
  const [m, s] = await Promise.all([
    db
      .selectFrom('user_group_members')
      .innerJoin('users', 'users.id', 'user_group_members.user_id')
      .select(['user_group_members.group_id', 'user_group_members.user_id'])
      .where('user_group_members.realm_id', '=', realmId)
      .where('users.is_active', '=', 1)
      .orderBy('user_group_members.user_id')
      .execute(),
    db
      .selectFrom('user_group_subgroups')
      .select(['supergroup_id', 'subgroup_id'])
      .where('realm_id', '=', realmId)
      .orderBy('subgroup_id')
      .execute(),
  ]);
  const members = new Map<number, number[]>();
  const subgroups = new Map<number, number[]>();
  for (const r of m) (members.get(r.group_id) ?? members.set(r.group_id, []).get(r.group_id)!).push(r.user_id);
  for (const r of s) (subgroups.get(r.supergroup_id) ?? subgroups.set(r.supergroup_id, []).get(r.supergroup_id)!).push(r.subgroup_id);
  return { members, subgroups };
}

import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { nowSeconds } from '../../store/db.js';
import { isPossibleId } from './ids.js';
import { directRead } from '../../store/prepared.js';

type AnyDb = Db | TxDb;

/**
 * Group-setting values. A permission setting stores one user_groups id: a
 * named group (system or user-defined) or an anonymous group (name NULL)
 * holding the direct members and subgroups of a
 * {"direct_members": [...], "direct_subgroups": [...]} value. On the wire a
 * named group is its integer id and an anonymous one is the object.
 */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/**
 * The groups reachable downward from the seed groups through subgroups, as a
 * recursive CTE named `reach(id)`: a group's members are its direct members
 * and those of every group below it, at any depth.
 */
const reachFrom = (seed: RawBuilder<unknown>): RawBuilder<unknown> => sql`
    WITH RECURSIVE reach(id) AS (
      ${seed}
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    )`;
// PostgreSQL types a bare parameter as text; the cast makes the CTE's seed an integer.
const fromGroup = (groupId: number): RawBuilder<unknown> => reachFrom(sql`SELECT CAST(${groupId} AS integer)`);

/** Is the user in the group, directly or through any depth of subgroups? One query. */
export async function isUserInGroup(db: AnyDb, userId: number, groupId: number): Promise<boolean> {
  const row = await sql<{ hit: number }>`${fromGroup(groupId)}
    SELECT 1 AS hit FROM user_group_members m
    JOIN users u ON u.id = m.user_id
    WHERE m.user_id = ${userId} AND u.is_active = 1 AND m.group_id IN (SELECT id FROM reach)
    LIMIT 1`.execute(db);
  return row.rows.length > 0;
}

/**
 * Is the user in at least one of these groups (directly or through any depth
 * of subgroups)? One query whatever the nesting; used for checks such as
 * "can manage all groups, or this group's can_manage_group, or its can_add_members_group".
 */
export async function isUserInAnyGroup(db: AnyDb, userId: number, groupIds: readonly number[]): Promise<boolean> {
  const ids = [...new Set(groupIds)];
  if (ids.length === 0) return false;
  const row = await sql<{ hit: number }>`${reachFrom(sql`SELECT g.id FROM user_groups g WHERE g.id IN (${sql.join(ids)})`)}
    SELECT 1 AS hit FROM user_group_members m
    JOIN users u ON u.id = m.user_id
    WHERE m.user_id = ${userId} AND u.is_active = 1 AND m.group_id IN (SELECT id FROM reach)
    LIMIT 1`.execute(db);
  return row.rows.length > 0;
}

/** Every active user id in the group, recursively. One query. */
export async function recursiveMemberIds(db: AnyDb, groupId: number): Promise<number[]> {
  const rows = await sql<{ user_id: number }>`${fromGroup(groupId)}
    SELECT DISTINCT m.user_id FROM user_group_members m
    JOIN users u ON u.id = m.user_id
    WHERE u.is_active = 1 AND m.group_id IN (SELECT id FROM reach)
    ORDER BY m.user_id`.execute(db);
  return rows.rows.map((r) => Number(r.user_id));
}

/** The ids of every group the user belongs to, directly or through subgroups. One query. */
export async function groupIdsContainingUser(db: AnyDb, userId: number): Promise<Set<number>> {
  // Every channel send checks a group setting: straight on the connection on SQLite (store/prepared.ts directRead).
  const rows = await directRead<{ id: number }>(db, GROUPS_CONTAINING_USER_SQLITE, [userId], async () =>
    (await sql<{ id: number }>`
    WITH RECURSIVE up(id) AS (
      SELECT group_id FROM user_group_members WHERE user_id = ${userId}
      UNION
      SELECT s.supergroup_id FROM user_group_subgroups s JOIN up ON s.subgroup_id = up.id
    )
    SELECT id FROM up`.execute(db)).rows,
  );
  return new Set(rows.map((r) => Number(r.id)));
}
const GROUPS_CONTAINING_USER_SQLITE = `WITH RECURSIVE up(id) AS (
  SELECT group_id FROM user_group_members WHERE user_id = ?
  UNION
  SELECT s.supergroup_id FROM user_group_subgroups s JOIN up ON s.subgroup_id = up.id
)
SELECT id FROM up`;

/** The wire form of a stored setting: an id for named groups, the object for anonymous ones. */
export async function presentGroupSetting(db: AnyDb, groupId: number): Promise<GroupSettingValue> {
  const g = await db.selectFrom('user_groups').select(['id', 'name']).where('id', '=', groupId).executeTakeFirstOrThrow();
  if (g.name !== null) return g.id;
  const [members, subgroups] = await Promise.all([
    db
      .selectFrom('user_group_members')
      .innerJoin('users', 'users.id', 'user_group_members.user_id')
      .select('user_group_members.user_id')
      .where('user_group_members.group_id', '=', groupId)
      .where('users.is_active', '=', 1)
      .orderBy('user_group_members.user_id')
      .execute(),
    db.selectFrom('user_group_subgroups').select('subgroup_id').where('supergroup_id', '=', groupId).orderBy('subgroup_id').execute(),
  ]);
  return { direct_members: members.map((m) => m.user_id), direct_subgroups: subgroups.map((s) => s.subgroup_id) };
}

/** Presents many stored settings at once (for lists and /register): two queries whatever the count. */
export async function presentGroupSettings(db: AnyDb, groupIds: readonly number[]): Promise<Map<number, GroupSettingValue>> {
  const out = new Map<number, GroupSettingValue>();
  const ids = [...new Set(groupIds)];
  if (ids.length === 0) return out;
  const groups = await db.selectFrom('user_groups').select(['id', 'name']).where('id', 'in', ids).execute();
  const anon = groups.filter((g) => g.name === null).map((g) => g.id);
  for (const g of groups) if (g.name !== null) out.set(g.id, g.id);
  if (anon.length) {
    const [members, subgroups] = await Promise.all([
      db
        .selectFrom('user_group_members')
        .innerJoin('users', 'users.id', 'user_group_members.user_id')
        .select(['user_group_members.group_id', 'user_group_members.user_id'])
        .where('user_group_members.group_id', 'in', anon)
        .where('users.is_active', '=', 1)
        .orderBy('user_group_members.user_id')
        .execute(),
      db.selectFrom('user_group_subgroups').select(['supergroup_id', 'subgroup_id']).where('supergroup_id', 'in', anon).orderBy('subgroup_id').execute(),
    ]);
    for (const id of anon) out.set(id, { direct_members: [], direct_subgroups: [] });
    for (const m of members) (out.get(m.group_id) as { direct_members: number[] }).direct_members.push(m.user_id);
    for (const s of subgroups) (out.get(s.supergroup_id) as { direct_subgroups: number[] }).direct_subgroups.push(s.subgroup_id);
  }
  return out;
}

export interface SettingRules {
  /** System group names this setting may not point to, e.g. ['role:internet', 'role:everyone']. */
  readonly disallowed?: readonly string[];
  /** Only system groups allowed (SYSTEM_GROUP_REQUIRED). */
  readonly systemGroupsOnly?: boolean;
  /** Zulip's allowed_system_groups: when given, the only system groups the setting may point to. */
  readonly allowed?: readonly string[];
}

/**
 * Zulip's parse_group_setting_value: an object naming exactly one subgroup and
 * no members means that group, and an empty object means role:nobody (pass its
 * id). Values are compared and stored in this normal form.
 */
export function normalizeGroupSetting(value: GroupSettingValue, nobodyGroupId: number): GroupSettingValue {
  if (typeof value === 'number') return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) return value.direct_subgroups[0]!;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 0) return nobodyGroupId;
  return value;
}

/** Zulip's equality of two setting values: same id, or the same member and subgroup sets. */
export function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const same = (x: readonly number[], y: readonly number[]) => {
    const sx = new Set(x);
    const sy = new Set(y);
    return sx.size === sy.size && [...sx].every((v) => sy.has(v));
  };
  return same(a.direct_members, b.direct_members) && same(a.direct_subgroups, b.direct_subgroups);
}

const settingGroupError = (settingName: string, groupName: string): JsonableError =>
  badRequest(`'${settingName}' setting cannot be set to '${groupName}' group.`);

/**
 * Validates a wire value and returns the group id to store, creating an
 * anonymous group for the object form. The value is first normalized as
 * Zulip does (one subgroup and no members is that group; an empty object is
 * role:nobody). Deactivated groups cannot hold a permission, and only active
 * users can be direct members. Errors use Zulip's wording.
 */
export async function resolveGroupSetting(
  db: TxDb,
  realmId: number,
  settingName: string,
  value: GroupSettingValue,
  rules: SettingRules = {},
  creatorId: number | null = null,
): Promise<number> {
  if (typeof value !== 'number' && value.direct_members.length === 0 && value.direct_subgroups.length === 0) {
    value = await systemGroupId(db, realmId, 'role:nobody');
  }
  if (typeof value !== 'number' && value.direct_members.length === 0 && value.direct_subgroups.length === 1) {
    value = value.direct_subgroups[0]!;
  }
  if (typeof value === 'number') {
    if (!isPossibleId(value)) throw badRequest('Invalid user group');
    const g = await db
      .selectFrom('user_groups')
      .select(['id', 'name', 'is_system_group', 'deactivated'])
      .where('id', '=', value)
      .where('realm_id', '=', realmId)
      .executeTakeFirst();
    if (!g || g.name === null) throw badRequest('Invalid user group');
    if (g.deactivated) throw badRequest('User group is deactivated.');
    if (rules.systemGroupsOnly && !g.is_system_group) {
      throw new JsonableError(`'${settingName}' must be a system user group.`, { code: 'SYSTEM_GROUP_REQUIRED' });
    }
    if (g.is_system_group && rules.disallowed?.includes(g.name)) throw settingGroupError(settingName, g.name);
    if (g.is_system_group && rules.allowed && !rules.allowed.includes(g.name)) throw settingGroupError(settingName, g.name);
    return g.id;
  }
  if (rules.systemGroupsOnly) {
    throw new JsonableError(`'${settingName}' must be a system user group.`, { code: 'SYSTEM_GROUP_REQUIRED' });
  }
  const members = [...new Set(value.direct_members)];
  const subgroups = [...new Set(value.direct_subgroups)];
  if (members.length) {
    const bigId = members.find((m) => !isPossibleId(m));
    if (bigId !== undefined) throw badRequest(`Invalid user ID: ${bigId}`);
    const found = await db
      .selectFrom('users')
      .select('id')
      .where('realm_id', '=', realmId)
      .where('is_active', '=', 1)
      .where('id', 'in', members)
      .execute();
    const ok = new Set(found.map((u) => u.id));
    const bad = members.find((m) => !ok.has(m));
    if (bad !== undefined) throw badRequest(`Invalid user ID: ${bad}`);
  }
  if (subgroups.length) {
    const bigId = subgroups.find((sg) => !isPossibleId(sg));
    if (bigId !== undefined) throw badRequest(`Invalid user group ID: ${bigId}`);
    const found = await db
      .selectFrom('user_groups')
      .select(['id', 'name', 'is_system_group', 'deactivated'])
      .where('realm_id', '=', realmId)
      .where('id', 'in', subgroups)
      .where('name', 'is not', null)
      .execute();
    const ok = new Map(found.map((g) => [g.id, g]));
    const bad = subgroups.find((sg) => !ok.has(sg));
    if (bad !== undefined) throw badRequest(`Invalid user group ID: ${bad}`);
    for (const sg of subgroups) {
      const g = ok.get(sg)!;
      if (g.deactivated) throw badRequest('User group is deactivated.');
      if (g.is_system_group && rules.disallowed?.includes(g.name!)) throw settingGroupError(settingName, g.name!);
    }
  }
  const row = await db
    .insertInto('user_groups')
    .values({ realm_id: realmId, name: null, description: '', is_system_group: 0, creator_id: creatorId, date_created: nowSeconds(), deactivated: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (members.length) await db.insertInto('user_group_members').values(members.map((user_id) => ({ realm_id: realmId, group_id: row.id, user_id }))).execute();
  if (subgroups.length) {
    await db.insertInto('user_group_subgroups').values(subgroups.map((subgroup_id) => ({ realm_id: realmId, supergroup_id: row.id, subgroup_id }))).execute();
  }
  return row.id;
}

/**
 * Deletes an anonymous group that a setting no longer points to (its
 * members and subgroup links first). Named groups are never touched.
 */
export async function dropAnonymousGroup(db: TxDb, groupId: number): Promise<void> {
  const g = await db.selectFrom('user_groups').select('name').where('id', '=', groupId).executeTakeFirst();
  if (!g || g.name !== null) return;
  await db.deleteFrom('user_group_members').where('group_id', '=', groupId).execute();
  await db.deleteFrom('user_group_subgroups').where('supergroup_id', '=', groupId).execute();
  await db.deleteFrom('user_groups').where('id', '=', groupId).execute();
}


/** The id of a system group by name (e.g. 'role:members') in a realm. */
export async function systemGroupId(db: AnyDb, realmId: number, name: string): Promise<number> {
  const g = await db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', 1)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return g.id;
}

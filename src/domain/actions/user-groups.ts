import type { Caller, Tx, TxDb } from '../context.js';
import { CHANNEL_PERMISSION_NAMES, settingColumn } from '../rules/channels.js';
import { badRequest, JsonableError } from '../errors.js';
import {
  dropAnonymousGroup,
  presentGroupSettings,
  resolveGroupSetting,
  systemGroupId,
  type GroupSettingValue,
} from '../rules/group-settings.js';
import { REALM_GROUP_SETTING_DEFAULTS } from '../rules/realm-group-settings.js';
import { realmSettings } from '../rules/realm-settings.js';
import { GROUP_PERMISSION_SETTINGS, GROUP_SETTING_NAMES, type GroupSettingName } from '../rules/user-groups.js';
import { nowSeconds } from '../../store/db.js';
import * as groups from '../../store/groups.js';
import * as store from '../../store/user-groups.js';
import { activeUserIds } from '../../store/users.js';
import { presentUserGroup, type UserGroupObject } from '../../presenters/user-group.js';
import type { UserGroupRow } from '../../store/user-groups.js';
import { emitPrivateChannelAccessChanges, privateChannelAccess } from './channel-access.js';

/**
 * User-group writers. Every change is sent as a user_group event to every
 * active user of the realm (Zulip does the same; groups are realm-wide data).
 * Member and subgroup changes may also give or take away sight of private
 * channels whose permission settings use the group: those users get stream
 * create / delete (channel-access.ts), as from Zulip's bulk_add_members_to_user_groups.
 */

async function emitToRealm(tx: Tx, realmId: number, event: Record<string, unknown> & { op: string }): Promise<void> {
  tx.emit(realmId, { type: 'user_group', ...event }, await activeUserIds(tx.db, realmId));
}

/** The API object of one named group, read inside the transaction. */
export async function loadUserGroupObject(db: TxDb, row: UserGroupRow): Promise<UserGroupObject> {
  const nobody = await systemGroupId(db, row.realm_id, 'role:nobody');
  const settingIds = GROUP_SETTING_NAMES.map((n) => row[n] ?? nobody);
  const values = await presentGroupSettings(db, settingIds);
  const members = new Map<number, number[]>([[row.id, await store.activeDirectMemberIds(db, row.id)]]);
  const subgroups = new Map<number, number[]>([[row.id, await store.directSubgroupIds(db, row.id)]]);
  const named = new Set<number>();
  for (const [id, v] of values) {
    if (typeof v === 'number') named.add(id);
    else {
      members.set(id, v.direct_members);
      subgroups.set(id, v.direct_subgroups);
    }
  }
  return presentUserGroup(row, { members, subgroups }, named, nobody);
}

export interface NewUserGroup {
  readonly name: string;
  readonly description: string;
  /** Active users of the realm, already checked. */
  readonly memberIds: readonly number[];
  /** Wire values given in the request; the rest take their defaults. */
  readonly settings: Partial<Record<GroupSettingName, GroupSettingValue>>;
}

const alreadyExists = (name: string): JsonableError => badRequest(`User group '${name}' already exists.`);

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || /UNIQUE constraint failed/i.test(e?.message ?? '');
}

/**
 * Zulip's check_add_user_group: resolves the settings (in Zulip's order, so
 * the first bad one is reported), refuses a taken name, creates the group and
 * its members, and sends user_group add. Defaults: group_creator settings get
 * a fresh anonymous group holding just the creator.
 */
export async function doCreateUserGroup(tx: Tx, caller: Caller, ng: NewUserGroup): Promise<UserGroupRow> {
  const realmId = caller.realmId;
  const resolved: Partial<Record<GroupSettingName, number>> = {};
  for (const name of GROUP_SETTING_NAMES) {
    const value = ng.settings[name];
    if (value !== undefined) resolved[name] = await resolveGroupSetting(tx.db, realmId, name, value, GROUP_PERMISSION_SETTINGS[name].rules, caller.id);
  }
  if (await store.groupNameTaken(tx.db, realmId, ng.name)) throw alreadyExists(ng.name);
  for (const name of GROUP_SETTING_NAMES) {
    if (resolved[name] !== undefined) continue;
    const def = GROUP_PERMISSION_SETTINGS[name].defaultGroup;
    resolved[name] =
      def === 'group_creator'
        ? await resolveGroupSetting(tx.db, realmId, name, { direct_members: [caller.id], direct_subgroups: [] }, {}, caller.id)
        : await systemGroupId(tx.db, realmId, def);
  }
  let id: number;
  try {
    const row = await tx.db
      .insertInto('user_groups')
      .values({
        realm_id: realmId,
        name: ng.name,
        description: ng.description,
        is_system_group: 0,
        creator_id: caller.id,
        date_created: nowSeconds(),
        deactivated: 0,
        ...resolved,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    id = row.id;
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(ng.name);
    throw err;
  }
  const members = [...new Set(ng.memberIds)].sort((a, b) => a - b);
  await groups.addMembers(tx.db, realmId, id, members);
  const row = (await store.groupById(tx.db, realmId, id))!;
  const group = await loadUserGroupObject(tx.db, row);
  await emitToRealm(tx, realmId, { op: 'add', group });
  return row;
}

/**
 * Checks subgroups to add (Zulip's lock_subgroups_with_respect_to_supergroup):
 * every id must be a named group of the realm, and active.
 */
async function checkPotentialSubgroups(db: TxDb, realmId: number, subgroupIds: readonly number[]): Promise<void> {
  const reach = await store.recursiveNamedSubgroups(db, realmId, subgroupIds);
  const direct = new Map(reach.filter((g) => subgroupIds.includes(g.id)).map((g) => [g.id, g]));
  const missing = subgroupIds.find((id) => !direct.has(id));
  if (missing !== undefined) throw badRequest(`Invalid user group ID: ${missing}`);
  for (const id of subgroupIds) if (direct.get(id)!.deactivated) throw badRequest('User group is deactivated.');
}

/** Adds subgroups: checks existence, duplicates and cycles, then links them and sends add_subgroups. */
export async function doAddSubgroups(tx: Tx, group: UserGroupRow, subgroupIds: readonly number[]): Promise<void> {
  const ids = [...new Set(subgroupIds)];
  if (ids.length === 0) return;
  const reach = await store.recursiveNamedSubgroups(tx.db, group.realm_id, ids);
  const direct = new Map(reach.filter((g) => ids.includes(g.id)).map((g) => [g.id, g]));
  const missing = ids.find((id) => !direct.has(id));
  if (missing !== undefined) throw badRequest(`Invalid user group ID: ${missing}`);
  for (const id of ids) if (direct.get(id)!.deactivated) throw badRequest('User group is deactivated.');
  const existing = new Set(await store.directSubgroupIds(tx.db, group.id));
  const dup = ids.find((id) => existing.has(id));
  if (dup !== undefined) throw badRequest(`User group ${dup} is already a subgroup of this group.`);
  if (reach.some((g) => g.id === group.id)) {
    throw badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
  }
  const sorted = ids.sort((a, b) => a - b);
  const access = await privateChannelAccess(tx, group.realm_id);
  await store.addSubgroupLinks(tx.db, group.realm_id, group.id, sorted);
  await emitToRealm(tx, group.realm_id, { op: 'add_subgroups', group_id: group.id, direct_subgroup_ids: sorted });
  await emitPrivateChannelAccessChanges(tx, access);
}

export async function doRemoveSubgroups(tx: Tx, group: UserGroupRow, subgroupIds: readonly number[]): Promise<void> {
  const ids = [...new Set(subgroupIds)];
  if (ids.length === 0) return;
  await checkPotentialSubgroups(tx.db, group.realm_id, ids);
  const existing = new Set(await store.directSubgroupIds(tx.db, group.id));
  const absent = ids.find((id) => !existing.has(id));
  if (absent !== undefined) throw badRequest(`User group ${absent} is not a subgroup of this group.`);
  const sorted = ids.sort((a, b) => a - b);
  const access = await privateChannelAccess(tx, group.realm_id);
  await store.removeSubgroupLinks(tx.db, group.id, sorted);
  await emitToRealm(tx, group.realm_id, { op: 'remove_subgroups', group_id: group.id, direct_subgroup_ids: sorted });
  await emitPrivateChannelAccessChanges(tx, access);
}

/** Adds users (active, not yet direct members) and sends add_members. */
export async function doAddMembers(tx: Tx, group: UserGroupRow, userIds: readonly number[]): Promise<void> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return;
  const already = await store.directMembershipsOf(tx.db, group.id, ids);
  const dup = ids.find((id) => already.has(id));
  if (dup !== undefined) throw badRequest(`User ${dup} is already a member of this group`);
  const access = await privateChannelAccess(tx, group.realm_id);
  await groups.addMembers(tx.db, group.realm_id, group.id, ids);
  await emitToRealm(tx, group.realm_id, { op: 'add_members', group_id: group.id, user_ids: ids });
  await emitPrivateChannelAccessChanges(tx, access);
}

/** Removes direct members and sends remove_members. */
export async function doRemoveMembers(tx: Tx, group: UserGroupRow, userIds: readonly number[]): Promise<void> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return;
  const current = new Set(await store.activeDirectMemberIds(tx.db, group.id));
  const absent = userIds.find((id) => !current.has(id));
  if (absent !== undefined) throw badRequest(`There is no member '${absent}' in this user group`);
  const access = await privateChannelAccess(tx, group.realm_id);
  await groups.removeMembers(tx.db, group.id, ids);
  await emitToRealm(tx, group.realm_id, { op: 'remove_members', group_id: group.id, user_ids: ids });
  await emitPrivateChannelAccessChanges(tx, access);
}

export async function doUpdateUserGroupName(tx: Tx, group: UserGroupRow, name: string): Promise<void> {
  if ((await store.groupNameTaken(tx.db, group.realm_id, name)) && name !== group.name) throw alreadyExists(name);
  try {
    await store.updateGroup(tx.db, group.id, { name });
  } catch (err) {
    if (isUniqueViolation(err)) throw alreadyExists(name);
    throw err;
  }
  // The hint lets delivery hold a rename of a deactivated group back from
  // clients without include_deactivated_groups (Zulip does the same).
  await emitToRealm(tx, group.realm_id, { op: 'update', group_id: group.id, data: { name }, __deactivated: group.deactivated === 1 });
}

export async function doUpdateUserGroupDescription(tx: Tx, group: UserGroupRow, description: string): Promise<void> {
  await store.updateGroup(tx.db, group.id, { description });
  await emitToRealm(tx, group.realm_id, { op: 'update', group_id: group.id, data: { description } });
}

/**
 * Points a permission setting at a new value (already validated and
 * normalized by the caller's resolve), drops the old anonymous group, and
 * sends update with the setting's new API value.
 */
export async function doChangeUserGroupSetting(tx: Tx, caller: Caller, group: UserGroupRow, setting: GroupSettingName, value: GroupSettingValue): Promise<void> {
  const newId = await resolveGroupSetting(tx.db, group.realm_id, setting, value, GROUP_PERMISSION_SETTINGS[setting].rules, caller.id);
  const oldId = group[setting];
  await store.updateGroup(tx.db, group.id, { [setting]: newId });
  if (oldId !== null && oldId !== newId) await dropAnonymousGroup(tx.db, oldId);
  const apiValue = (await presentGroupSettings(tx.db, [newId])).get(newId)!;
  await emitToRealm(tx, group.realm_id, { op: 'update', group_id: group.id, data: { [setting]: apiValue } });
}

/** Active (not archived) channels with a permission setting held by one of these groups. */
async function channelObjections(db: TxDb, realmId: number, using: readonly number[]): Promise<Record<string, unknown>[]> {
  const cols = CHANNEL_PERMISSION_NAMES.map(settingColumn);
  const rows = await db
    .selectFrom('channels')
    .select(['id', ...cols])
    .where('realm_id', '=', realmId)
    .where('deactivated', '=', 0)
    .where((eb) => eb.or(cols.map((c) => eb(c, 'in', [...using]))))
    .orderBy('id')
    .execute();
  return rows.map((ch) => ({
    type: 'channel',
    channel_id: ch.id,
    settings: CHANNEL_PERMISSION_NAMES.filter((n) => using.includes(ch[settingColumn(n)])),
  }));
}

/**
 * Zulip's access_user_group_for_deactivation objections: active named
 * supergroups, then channels, then other groups'
 * settings, then realm settings. A setting counts as using the group when it
 * is the group or an anonymous group that has it as a direct subgroup.
 */
export async function deactivationObjections(db: TxDb, group: UserGroupRow): Promise<Record<string, unknown>[]> {
  const objections: Record<string, unknown>[] = [];
  const supers = await store.directSupergroups(db, group.id);
  const activeNamed = supers.filter((s) => s.name !== null && !s.deactivated).map((s) => s.id);
  if (activeNamed.length) objections.push({ type: 'subgroup', supergroup_ids: activeNamed });
  const using = [group.id, ...supers.filter((s) => s.name === null).map((s) => s.id)];
  objections.push(...(await channelObjections(db, group.realm_id, using)));
  const users = await db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', group.realm_id)
    .where('name', 'is not', null)
    .where('deactivated', '=', 0)
    .where((eb) => eb.or(GROUP_SETTING_NAMES.map((n) => eb(n, 'in', using))))
    .orderBy('id')
    .execute();
  for (const g of users) {
    const settings = GROUP_SETTING_NAMES.filter((n) => g[n] !== null && using.includes(g[n]!));
    objections.push({ type: 'user_group', group_id: g.id, settings });
  }
  const realm = await db.selectFrom('realms').select('settings').where('id', '=', group.realm_id).executeTakeFirstOrThrow();
  const rs = realmSettings(realm.settings);
  const realmUses = Object.keys(REALM_GROUP_SETTING_DEFAULTS).filter((k) => typeof rs[k] === 'number' && using.includes(rs[k] as number));
  if (realmUses.length) objections.push({ type: 'realm', settings: realmUses });
  return objections;
}

/**
 * Deactivates a group. Clients with include_deactivated_groups learn it from
 * update {deactivated: true}; the others from remove. Both are sent, as Zulip
 * does, and delivery keeps the one each client understands (events/delivery.ts, state/user-groups.ts).
 */
export async function doDeactivateUserGroup(tx: Tx, group: UserGroupRow): Promise<void> {
  const objections = await deactivationObjections(tx.db, group);
  if (objections.length) {
    throw new JsonableError('Cannot deactivate user group in use.', { code: 'CANNOT_DEACTIVATE_GROUP_IN_USE', data: { objections } });
  }
  await store.updateGroup(tx.db, group.id, { deactivated: 1 });
  await emitToRealm(tx, group.realm_id, { op: 'update', group_id: group.id, data: { deactivated: true } });
  await emitToRealm(tx, group.realm_id, { op: 'remove', group_id: group.id });
}

/** Reactivates a group: update {deactivated: false}, and add (for_reactivation) for clients that had dropped it. */
export async function doReactivateUserGroup(tx: Tx, group: UserGroupRow): Promise<void> {
  await store.updateGroup(tx.db, group.id, { deactivated: 0 });
  await emitToRealm(tx, group.realm_id, { op: 'update', group_id: group.id, data: { deactivated: false } });
  const row = (await store.groupById(tx.db, group.realm_id, group.id))!;
  const obj = await loadUserGroupObject(tx.db, row);
  await emitToRealm(tx, group.realm_id, { op: 'add', group: obj, __for_reactivation: true });
}

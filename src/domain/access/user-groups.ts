import type { Db } from '../../store/db.js';
import type { Caller, TxDb } from '../context.js';
import { badRequest, insufficientPermission } from '../errors.js';
import { isUserInAnyGroup, systemGroupId } from '../rules/group-settings.js';
import { realmGroupSettingId } from '../rules/realm-group-settings.js';
import { GROUP_PERMISSION_SETTINGS, type GroupSettingName } from '../rules/user-groups.js';
import { isPossibleId } from '../rules/ids.js';
import { ROLE_GUEST } from '../rules/users.js';
import { groupById, type UserGroupRow } from '../../store/user-groups.js';

type AnyDb = Db | TxDb;

/**
 * Zulip's get_user_group_by_id_in_realm: a named group of the caller's realm
 * ("Invalid user group" otherwise, anonymous groups included), refused when
 * deactivated unless allowed.
 */
export async function namedGroupInRealm(db: AnyDb, realmId: number, groupId: number, opts: { allowDeactivated?: boolean } = {}): Promise<UserGroupRow> {
  const row = isPossibleId(groupId) ? await groupById(db, realmId, groupId) : undefined;
  if (!row || row.name === null) throw badRequest('Invalid user group');
  if (row.deactivated && !opts.allowDeactivated) throw badRequest('User group is deactivated.');
  return row;
}

/** The group ids whose members hold a permission on this group for this caller. */
export async function permissionGroupIds(db: AnyDb, caller: Caller, group: UserGroupRow, settings: readonly GroupSettingName[]): Promise<number[]> {
  const isGuest = caller.role === ROLE_GUEST;
  const ids: number[] = [];
  // can_manage_all_groups does not allow role:everyone, so guests never hold it.
  if (!isGuest) ids.push(await realmGroupSettingId(db, caller.realmId, 'can_manage_all_groups'));
  const nobody = await systemGroupId(db, caller.realmId, 'role:nobody');
  for (const name of ['can_manage_group' as const, ...settings]) {
    if (isGuest && !GROUP_PERMISSION_SETTINGS[name].allowEveryone) continue;
    ids.push(group[name] ?? nobody);
  }
  return ids;
}

/**
 * Zulip's access_user_group_for_update: the caller may change the group when
 * they can manage all groups, are in its can_manage_group, or are in one of
 * the action's own settings (e.g. can_join_group, falling back to
 * can_add_members_group, for adding oneself). System groups are never
 * changed here. The membership test is one query whatever the nesting.
 */
export async function accessUserGroupForUpdate(
  db: AnyDb,
  caller: Caller,
  groupId: number,
  settings: readonly GroupSettingName[],
  opts: { allowDeactivated?: boolean } = {},
): Promise<UserGroupRow> {
  const group = await namedGroupInRealm(db, caller.realmId, groupId, opts);
  if (group.is_system_group) throw insufficientPermission();
  const ids = await permissionGroupIds(db, caller, group, settings);
  if (!(await isUserInAnyGroup(db, caller.id, ids))) throw insufficientPermission();
  return group;
}

/**
 * Zulip's user_ids_to_users(allow_deactivated=False): the active users of the
 * realm with these ids; the first unknown or deactivated id, in request
 * order, gives "Invalid user ID: <id>".
 */
export async function activeUsersByIds(db: AnyDb, realmId: number, userIds: readonly number[]): Promise<number[]> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return [];
  const possible = ids.filter(isPossibleId);
  const rows = possible.length === 0 ? [] : await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).where('id', 'in', possible).execute();
  const found = new Set(rows.map((r) => r.id));
  const bad = userIds.find((id) => !found.has(id));
  if (bad !== undefined) throw badRequest(`Invalid user ID: ${bad}`);
  return ids;
}

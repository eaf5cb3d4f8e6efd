import type { GroupSettingValue } from '../domain/rules/group-settings.js';
import { GROUP_SETTING_NAMES, type GroupSettingName } from '../domain/rules/user-groups.js';
import type { UserGroupRow } from '../store/user-groups.js';

/** Zulip's UserGroupDict, as GET /user_groups, /register and user_group add events carry it. */
export interface UserGroupObject {
  name: string;
  creator_id: number | null;
  date_created: number | null;
  members: number[];
  description: string;
  id: number;
  is_system_group: boolean;
  direct_subgroup_ids: number[];
  can_add_members_group: GroupSettingValue;
  can_join_group: GroupSettingValue;
  can_leave_group: GroupSettingValue;
  can_manage_group: GroupSettingValue;
  can_mention_group: GroupSettingValue;
  can_remove_members_group: GroupSettingValue;
  deactivated: boolean;
  [key: string]: unknown;
}

/** Where a group's setting points: NULL (system groups) is role:nobody. */
export function settingGroupId(row: UserGroupRow, setting: GroupSettingName, nobodyId: number): number {
  return row[setting] ?? nobodyId;
}

/**
 * Presents a named group. `membership` gives the active direct members and
 * direct subgroups of every group involved (the group and its anonymous
 * setting groups); `named` tells named group ids from anonymous ones.
 */
export function presentUserGroup(
  row: UserGroupRow,
  membership: { members: ReadonlyMap<number, readonly number[]>; subgroups: ReadonlyMap<number, readonly number[]> },
  named: ReadonlySet<number>,
  nobodyId: number,
): UserGroupObject {
  const setting = (name: GroupSettingName): GroupSettingValue => {
    const id = settingGroupId(row, name, nobodyId);
    if (named.has(id)) return id;
    return { direct_members: [...(membership.members.get(id) ?? [])], direct_subgroups: [...(membership.subgroups.get(id) ?? [])] };
  };
  const settings = Object.fromEntries(GROUP_SETTING_NAMES.map((n) => [n, setting(n)])) as Record<GroupSettingName, GroupSettingValue>;
  return {
    name: row.name!,
    creator_id: row.creator_id,
    date_created: row.date_created,
    members: [...(membership.members.get(row.id) ?? [])],
    description: row.description,
    id: row.id,
    is_system_group: row.is_system_group === 1,
    direct_subgroup_ids: [...(membership.subgroups.get(row.id) ?? [])],
    ...settings,
    deactivated: row.deactivated === 1,
  };
}

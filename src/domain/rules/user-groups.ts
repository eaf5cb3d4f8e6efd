import { badRequest } from '../errors.js';
import type { SettingRules } from './group-settings.js';

/** Zulip's NamedUserGroup.MAX_NAME_LENGTH. */
export const MAX_USER_GROUP_NAME_LENGTH = 100;
const INVALID_NAME_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

/**
 * The permission settings of a named user group, in Zulip's order (the order
 * errors are reported and events carry them). `defaultGroup` is a system group
 * name, or 'group_creator': a new anonymous group holding just the creator.
 * `allowEveryone` false also means guests never hold the permission, whatever
 * the value (Zulip's allow_everyone_group).
 */
export interface GroupPermissionSetting {
  readonly name: GroupSettingName;
  readonly defaultGroup: string;
  readonly allowEveryone: boolean;
  readonly rules: SettingRules;
}

export const GROUP_SETTING_NAMES = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;
export type GroupSettingName = (typeof GROUP_SETTING_NAMES)[number];

export const GROUP_PERMISSION_SETTINGS: Readonly<Record<GroupSettingName, GroupPermissionSetting>> = {
  can_add_members_group: {
    name: 'can_add_members_group',
    defaultGroup: 'group_creator',
    allowEveryone: false,
    rules: { disallowed: ['role:internet', 'role:everyone'] },
  },
  can_join_group: {
    name: 'can_join_group',
    defaultGroup: 'role:nobody',
    allowEveryone: false,
    rules: { disallowed: ['role:internet', 'role:everyone'] },
  },
  can_leave_group: {
    name: 'can_leave_group',
    defaultGroup: 'role:everyone',
    allowEveryone: true,
    rules: { disallowed: ['role:internet'] },
  },
  can_manage_group: {
    name: 'can_manage_group',
    defaultGroup: 'group_creator',
    allowEveryone: false,
    rules: { disallowed: ['role:internet', 'role:everyone'] },
  },
  // api.md: "Cannot be role:internet or role:owners".
  can_mention_group: {
    name: 'can_mention_group',
    defaultGroup: 'role:everyone',
    allowEveryone: true,
    rules: { disallowed: ['role:internet', 'role:owners'] },
  },
  can_remove_members_group: {
    name: 'can_remove_members_group',
    defaultGroup: 'role:nobody',
    allowEveryone: false,
    rules: { disallowed: ['role:internet', 'role:everyone'] },
  },
};

/** Zulip's check_user_group_name; returns the name unchanged (it is not stripped). */
export function checkUserGroupName(name: string): string {
  if (name.trim() === '') throw badRequest("User group name can't be empty!");
  if ([...name].length > MAX_USER_GROUP_NAME_LENGTH) {
    throw badRequest(`User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`);
  }
  for (const prefix of INVALID_NAME_PREFIXES) {
    if (name.startsWith(prefix)) throw badRequest(`User group name cannot start with '${prefix}'.`);
  }
  return name;
}

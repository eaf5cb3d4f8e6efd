import type { Generated } from 'kysely';

/**
 * Table types for Kysely. Booleans are stored as 0/1 integers on both back
 * ends so queries and rows look the same on SQLite and PostgreSQL; unix times
 * are integer seconds (int8 on PostgreSQL, parsed back to number).
 * JSON columns are text holding a JSON document.
 */
export interface RealmTable {
  id: Generated<number>;
  string_id: string;
  name: string;
  description: string;
  date_created: number;
  deactivated: number;
  /** JSON: realm settings that differ from the defaults in domain/rules/realm-settings.ts */
  settings: string;
}

export interface UserTable {
  id: Generated<number>;
  realm_id: number;
  delivery_email: string;
  /** lower(delivery_email), for case-insensitive unique lookups */
  email_lower: string;
  full_name: string;
  password_hash: string | null;
  api_key: string;
  role: number;
  is_active: number;
  is_bot: number;
  bot_type: number | null;
  bot_owner_id: number | null;
  date_joined: number;
  timezone: string;
  avatar_source: string;
  avatar_version: number;
  is_imported_stub: number;
  can_create_users: number;
  tos_version: number;
  /** JSON: user settings explicitly set by the user (or an admin); the rest are defaults */
  settings: string;
}

export interface UserGroupTable {
  id: Generated<number>;
  realm_id: number;
  /** null for anonymous groups (the members of a group-setting value) */
  name: string | null;
  description: string;
  is_system_group: number;
  creator_id: number | null;
  date_created: number;
  deactivated: number;
}

export interface UserGroupMemberTable {
  realm_id: number;
  group_id: number;
  user_id: number;
}

export interface UserGroupSubgroupTable {
  realm_id: number;
  supergroup_id: number;
  subgroup_id: number;
}

export interface Database {
  realms: RealmTable;
  users: UserTable;
  user_groups: UserGroupTable;
  user_group_members: UserGroupMemberTable;
  user_group_subgroups: UserGroupSubgroupTable;
}

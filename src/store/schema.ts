import type { Generated } from 'kysely';
import type { AttachmentTables } from './attachments-schema.js';
import type { ChannelTables } from './channels-schema.js';
import type { ClientCompatTables } from './client-compat-schema.js';
import type { MobileTables } from './mobile-schema.js';
import type { PlaygroundTables } from './playground-schema.js';
import type { EventsTables } from './events-schema.js';
import type { JoinTables } from './join-schema.js';
import type { MessageTables } from './messages-schema.js';
import type { ScheduledMessageTables } from './scheduled-messages-schema.js';

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
  /** JSON: defaults for new users' settings that differ from domain/rules/user-settings.ts (migration 1500). */
  user_settings_defaults: Generated<string>;
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
  /** Issue 11: stem of the uploaded avatar files (NULL unless avatar_source is 'U'). */
  avatar_file: string | null;
  /** Issue 11: bot defaults (channel ids; NULL for none). */
  default_sending_stream_id: number | null;
  default_events_register_stream_id: number | null;
  default_all_public_streams: Generated<number>;
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
  /**
   * Permission settings of named groups (issue 7): the user_groups id each
   * setting points to. NULL means role:nobody (system groups are created
   * without values; for them every setting is role:nobody, as in Zulip).
   */
  can_add_members_group: number | null;
  can_join_group: number | null;
  can_leave_group: number | null;
  can_manage_group: number | null;
  can_mention_group: number | null;
  can_remove_members_group: number | null;
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

/** A server-side draft (issue 7). */
export interface DraftTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  /** '' (unaddressed), 'stream' or 'private' */
  type: string;
  /** the channel of a stream draft */
  stream_id: number | null;
  /** JSON list: the recipients of a private draft as the API shows them (others, or just the owner) */
  to_user_ids: string;
  topic: string;
  content: string;
  /** unix seconds, with fractions */
  last_edit_time: number;
}

/** A left-sidebar navigation view of one user (issue 7). */
export interface NavigationViewTable {
  id: Generated<number>;
  user_id: number;
  fragment: string;
  is_pinned: number;
  name: string | null;
}

/** A saved snippet of one user (issue 7). */
export interface SavedSnippetTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  title: string;
  content: string;
  date_created: number;
}

/** A realm's custom profile field (issue 11). */
export interface CustomProfileFieldTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  hint: string;
  field_type: number;
  /** JSON text for choice and external-account fields, '' otherwise (as Zulip stores it) */
  field_data: string;
  sort_order: number;
  display_in_profile_summary: number;
  required: number;
  editable_by_user: number;
}

/** One user's value of a custom profile field (issue 11). */
export interface CustomProfileFieldValueTable {
  realm_id: number;
  user_id: number;
  field_id: number;
  value: string;
  rendered_value: string | null;
}

/** A user's status text and emoji (issue 11). */
export interface UserStatusTable {
  user_id: number;
  realm_id: number;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  client: string;
  timestamp: number;
}

/** A signed-in browser (issue 14): only the token's hash is stored. */
export interface WebSessionTable {
  token_hash: string;
  user_id: number;
  realm_id: number;
  csrf_token: string;
  auth_hash: string;
  created_at: number;
  expires_at: number;
}

export interface Database
  extends ChannelTables,
    EventsTables,
    MessageTables,
    ClientCompatTables,
    MobileTables,
    AttachmentTables,
    PlaygroundTables,
    ScheduledMessageTables,
    JoinTables {
  web_sessions: WebSessionTable;
  realms: RealmTable;
  users: UserTable;
  user_groups: UserGroupTable;
  user_group_members: UserGroupMemberTable;
  user_group_subgroups: UserGroupSubgroupTable;
  drafts: DraftTable;
  navigation_views: NavigationViewTable;
  saved_snippets: SavedSnippetTable;
  custom_profile_fields: CustomProfileFieldTable;
  custom_profile_field_values: CustomProfileFieldValueTable;
  user_statuses: UserStatusTable;
  bot_storage: BotStorageTable;
  bot_services: BotServiceTable;
  outgoing_webhook_jobs: OutgoingWebhookJobTable;
  realm_exports: RealmExportTable;
}

/** Issue 19: Zulip's BotStorageData (key/value strings per bot). */
export interface BotStorageTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  value: string;
}

/** Issue 19: Zulip's Service (an outgoing-webhook bot's URL, token and interface). */
export interface BotServiceTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  base_url: string;
  token: string;
  /** 1 generic, 2 Slack-compatible (Zulip's Service.GENERIC / SLACK). */
  interface: number;
}

/** Issue 19: a triggered outgoing-webhook request, until answered or given up. */
export interface OutgoingWebhookJobTable {
  id: Generated<number>;
  realm_id: number;
  bot_id: number;
  message_id: number;
  /** "mention" or "direct_message". */
  trigger: string;
  message_json: string;
  failed_tries: number;
  /** Unix seconds. */
  due_at: number;
  claimed_until: number | null;
}
/** Issue 19: an organization data export (Zulip's RealmExport). */
export interface RealmExportTable {
  id: Generated<number>;
  realm_id: number;
  acting_user_id: number | null;
  /** 1 public, 2 full with consent (Zulip's RealmExport.EXPORT_*) */
  type: number;
  /** 1 requested, 2 started, 3 succeeded, 4 failed, 5 deleted */
  status: number;
  date_requested: number;
  date_started: number | null;
  date_succeeded: number | null;
  date_failed: number | null;
  date_deleted: number | null;
  /** storage key of the tarball (files layer), once it is written */
  export_path: string | null;
  tarball_size_bytes: number | null;
}

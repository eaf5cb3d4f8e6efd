/**
 * The organization export format: Zulip's (zerver/lib/export.py), so that a
 * tarball moves between Zulip and Parley in both directions.
 *
 *   <dir>/realm.json            {zerver_realm: [..], zerver_userprofile: [..], zerver_stream: [..], ...}
 *   <dir>/messages-000001.json  {zerver_message: [..], zerver_usermessage: [..]}
 *   <dir>/attachment.json       {zerver_attachment: [..]}  (each with its `messages` id list)
 *   <dir>/uploads/records.json  [{path, s3_path, realm_id, user_profile_id, content_type, size, ...}]
 *   <dir>/uploads/<path_id>     the uploaded files
 *   <dir>/avatars/records.json, <dir>/emoji/records.json, <dir>/realm_icons/records.json
 *
 * Rows are Zulip's field names: a foreign key is named after the field, not
 * the column (`sender`, `recipient`, `user_profile`), times are float unix
 * seconds, booleans are JSON booleans. The specs below map each of our tables
 * to its Zulip key; columns that only Parley keeps (derived keys) are left
 * out on export and derived again on import.
 */

export interface TableSpec {
  /** Our table. */
  readonly table: string;
  /** The key in realm.json (or messages-*.json). */
  readonly key: string;
  /** our column -> Zulip field (unlisted columns keep their name). */
  readonly rename: Readonly<Record<string, string>>;
  /** Our columns not written (derived on import, or secrets). */
  readonly drop?: readonly string[];
  /** Boolean columns (0/1 here, true/false in the file). */
  readonly bools?: readonly string[];
  /**
   * A user's private data (Zulip's limit_to_consenting_users): exported only
   * for users whose private data goes out (none in a public export).
   */
  readonly privateBy?: string;
}

const R = { realm_id: 'realm' };

/** Tables written to realm.json, in an order that satisfies foreign keys on import. */
export const REALM_TABLES: readonly TableSpec[] = [
  { table: 'recipients', key: 'zerver_recipient', rename: {}, drop: ['realm_id'] },
  { table: 'channel_folders', key: 'zerver_channelfolder', rename: { ...R, creator_id: 'creator' }, drop: ['name_lower'], bools: ['is_archived'] },
  {
    table: 'channels',
    key: 'zerver_stream',
    rename: {
      ...R,
      creator_id: 'creator',
      folder_id: 'folder',
      recipient_id: 'recipient',
      can_add_subscribers_group_id: 'can_add_subscribers_group',
      can_administer_channel_group_id: 'can_administer_channel_group',
      can_create_topic_group_id: 'can_create_topic_group',
      can_delete_any_message_group_id: 'can_delete_any_message_group',
      can_delete_own_message_group_id: 'can_delete_own_message_group',
      can_move_messages_out_of_channel_group_id: 'can_move_messages_out_of_channel_group',
      can_move_messages_within_channel_group_id: 'can_move_messages_within_channel_group',
      can_remove_subscribers_group_id: 'can_remove_subscribers_group',
      can_resolve_topics_group_id: 'can_resolve_topics_group',
      can_send_message_group_id: 'can_send_message_group',
      can_subscribe_group_id: 'can_subscribe_group',
    },
    drop: ['name_lower'],
    bools: ['invite_only', 'is_web_public', 'history_public_to_subscribers', 'deactivated', 'is_recently_active'],
  },
  {
    table: 'subscriptions',
    key: 'zerver_subscription',
    rename: { user_id: 'user_profile', recipient_id: 'recipient' },
    drop: ['realm_id', 'channel_id'],
    bools: ['active', 'is_muted', 'pin_to_top', 'desktop_notifications', 'audible_notifications', 'push_notifications', 'email_notifications', 'wildcard_mentions_notify'],
  },
  { table: 'direct_message_groups', key: 'zerver_huddle', rename: {}, drop: ['realm_id'] },
  { table: 'user_group_members', key: 'zerver_usergroupmembership', rename: { group_id: 'user_group', user_id: 'user_profile' }, drop: ['realm_id'] },
  { table: 'user_group_subgroups', key: 'zerver_groupgroupmembership', rename: { supergroup_id: 'supergroup', subgroup_id: 'subgroup' }, drop: ['realm_id'] },
  { table: 'default_channels', key: 'zerver_defaultstream', rename: { ...R, channel_id: 'stream' } },
  { table: 'realm_domains', key: 'zerver_realmdomain', rename: R, bools: ['allow_subdomains'] },
  { table: 'realm_linkifiers', key: 'zerver_realmfilter', rename: { ...R, sort_order: 'order' } },
  { table: 'realm_emoji', key: 'zerver_realmemoji', rename: { ...R, author_id: 'author' }, bools: ['is_animated', 'deactivated'] },
  { table: 'custom_profile_fields', key: 'zerver_customprofilefield', rename: { ...R, sort_order: 'order' }, bools: ['display_in_profile_summary', 'required', 'editable_by_user'] },
  { table: 'custom_profile_field_values', key: 'zerver_customprofilefieldvalue', rename: { user_id: 'user_profile', field_id: 'field' }, drop: ['realm_id'] },
  { table: 'user_topics', key: 'zerver_usertopic', rename: { user_id: 'user_profile', channel_id: 'stream', topic_name: 'topic_name' }, drop: ['realm_id', 'topic_lower'], privateBy: 'user_id' },
  { table: 'alert_words', key: 'zerver_alertword', rename: { ...R, user_id: 'user_profile' }, privateBy: 'user_id' },
  { table: 'muted_users', key: 'zerver_muteduser', rename: { user_id: 'user_profile', muted_user_id: 'muted_user' }, privateBy: 'user_id' },
  { table: 'saved_snippets', key: 'zerver_savedsnippet', rename: { ...R, user_id: 'user_profile' }, privateBy: 'user_id' },
  { table: 'navigation_views', key: 'zerver_navigationview', rename: { user_id: 'user' }, bools: ['is_pinned'], privateBy: 'user_id' },
  { table: 'bot_storage', key: 'zerver_botstoragedata', rename: { user_id: 'bot_profile' }, privateBy: 'user_id' },
];

export const MESSAGE_SPEC: TableSpec = {
  table: 'messages',
  key: 'zerver_message',
  rename: { ...R, sender_id: 'sender', recipient_id: 'recipient', topic: 'subject' },
  drop: ['stream_id', 'dm_key', 'topic_key', 'search_tsv'],
  bools: ['is_me_message', 'has_link', 'has_image', 'has_attachment'],
};
export const USER_MESSAGE_SPEC: TableSpec = { table: 'user_messages', key: 'zerver_usermessage', rename: { user_id: 'user_profile', message_id: 'message', flags: 'flags_mask' } };
export const REACTION_SPEC: TableSpec = { table: 'reactions', key: 'zerver_reaction', rename: { user_id: 'user_profile', message_id: 'message' }, drop: ['realm_id'] };
export const ATTACHMENT_SPEC: TableSpec = {
  table: 'attachments',
  key: 'zerver_attachment',
  rename: { ...R, owner_id: 'owner' },
  // Image facts go to zerver_imageattachment rows (Zulip's ImageAttachment fields), not onto Attachment.
  drop: ['image_width', 'image_height', 'image_frames', 'thumbnail_state'],
  bools: ['is_realm_public'],
};

/** Columns of users written as user fields (the rest: settings, spread as Zulip's columns). */
export const USER_RENAME: Readonly<Record<string, string>> = {
  realm_id: 'realm',
  bot_owner_id: 'bot_owner',
  default_sending_stream_id: 'default_sending_stream',
  default_events_register_stream_id: 'default_events_register_stream',
};
/** Never exported: Zulip leaves out passwords and API keys too; the rest are derived. */
export const USER_DROP = ['password_hash', 'api_key', 'email_lower', 'settings', 'avatar_file'];
export const USER_BOOLS = ['is_active', 'is_bot', 'is_imported_stub', 'can_create_users', 'default_all_public_streams'];

/** Zulip's RealmExport constants. */
export const EXPORT_PUBLIC = 1;
export const EXPORT_FULL_WITH_CONSENT = 2;
export const STATUS_REQUESTED = 1;
export const STATUS_STARTED = 2;
export const STATUS_SUCCEEDED = 3;
export const STATUS_FAILED = 4;
export const STATUS_DELETED = 5;

/** Zulip's Recipient types. */
export const RECIPIENT_PERSONAL = 1;
export const RECIPIENT_STREAM = 2;
export const RECIPIENT_HUDDLE = 3;

export type Row = Record<string, unknown>;

/** One of our rows -> its Zulip export form. */
export function toZulip(spec: Pick<TableSpec, 'rename' | 'drop' | 'bools'>, row: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (spec.drop?.includes(k)) continue;
    out[spec.rename[k] ?? k] = spec.bools?.includes(k) && v !== null ? v === 1 || v === true : v;
  }
  return out;
}

/** A Zulip export row -> our column names (unknown fields kept; the importer keeps only real columns). */
export function fromZulip(spec: Pick<TableSpec, 'rename' | 'bools'>, row: Row): Row {
  const back = new Map(Object.entries(spec.rename).map(([ours, theirs]) => [theirs, ours]));
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) {
    const col = back.get(k) ?? k;
    out[col] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
  }
  return out;
}

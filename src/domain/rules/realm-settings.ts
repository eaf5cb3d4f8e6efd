/**
 * Realm settings with Zulip's defaults. A realm row stores only what differs
 * from these (JSON); readers merge. Later features add their settings here.
 */
export const REALM_SETTING_DEFAULTS = {
  emails_restricted_to_domains: false,
  disallow_disposable_email_addresses: true,
  require_unique_names: false,
  waiting_period_threshold: 0,
  password_auth_enabled: true,
  default_language: 'en',
  realm_empty_topic_display_name: 'general chat',
  invite_required: true,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  /** Issue 15: the organization's upload quota in MiB (null: none); set by the server operator, not PATCH /realm. */
  upload_quota_mib: null as number | null,
  mandatory_topics: false,
  message_retention_days: -1,
  allow_message_editing: true,
  message_content_edit_limit_seconds: 600,
  message_content_delete_limit_seconds: null as number | null,
  move_messages_within_stream_limit_seconds: 604800,
  move_messages_between_streams_limit_seconds: 604800,
  message_edit_history_visibility_policy: 'all',
  allow_edit_history: true,
  name_changes_disabled: false,
  email_changes_disabled: false,
  avatar_changes_disabled: false,
  enable_spectator_access: false,
  digest_emails_enabled: false,
  digest_weekday: 1,
  send_welcome_emails: true,
  org_type: 0,
  plan_type: 1,
  video_chat_provider: 1,
  giphy_rating: 2,
  enable_read_receipts: true,
  enable_guest_user_indicator: true,
  enable_guest_user_dm_warning: true,
  topics_policy: 'allow_empty_topic',
  new_stream_announcements_stream_id: -1,
  signup_announcements_stream_id: -1,
  zulip_update_announcements_stream_id: -1,
  moderation_request_channel_id: -1,
  jitsi_server_url: null as string | null,
  bot_creation_policy: 1,
  want_advertise_in_communities_directory: false,
  // Channels and realm administration (issue 4).
  send_channel_events_messages: true,
  message_content_allowed_in_email_notifications: true,
  default_code_block_language: '',
  welcome_message_custom_text: '',
  icon_source: 'G',
  logo_source: 'D',
  night_logo_source: 'D',
};

export type RealmSettings = typeof REALM_SETTING_DEFAULTS & Record<string, unknown>;

export function realmSettings(json: string): RealmSettings {
  return { ...REALM_SETTING_DEFAULTS, ...(JSON.parse(json) as Record<string, unknown>) } as RealmSettings;
}

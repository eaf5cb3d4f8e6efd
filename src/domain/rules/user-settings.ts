/**
 * Per-user settings with their defaults (Zulip's UserBaseSettings). A user row
 * stores only the settings that were explicitly set (JSON); everything else is
 * the default from this table. `timezone` is not here: it is a column of the
 * user row, presented with the settings.
 *
 * Each entry says how PATCH /settings receives the value: a JSON boolean, a
 * JSON integer (optionally restricted to a set), or a raw string (optionally
 * restricted to a set). Validation messages follow Zulip's typed_endpoint.
 */
export type SettingValue = boolean | number | string;

export type SettingSpec =
  | { readonly kind: 'bool'; readonly default: boolean }
  | { readonly kind: 'int'; readonly default: number; readonly values?: readonly number[] }
  | { readonly kind: 'str'; readonly default: string; readonly values?: readonly string[] };

const bool = (d: boolean): SettingSpec => ({ kind: 'bool', default: d });
const intIn = (d: number, values?: readonly number[]): SettingSpec => (values ? { kind: 'int', default: d, values } : { kind: 'int', default: d });
const strIn = (d: string, values?: readonly string[]): SettingSpec => (values ? { kind: 'str', default: d, values } : { kind: 'str', default: d });

/** The names of resolved_topic_notice_auto_read_policy (Zulip stores 1, 2, 3; the API speaks names). */
export const RESOLVED_TOPIC_NOTICE_POLICIES = ['always', 'except_followed', 'never'] as const;
export const EMOJISETS = ['google', 'twitter', 'text'] as const;
export const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
];
/** api.md: `recent` replaced `recent_topics` at feature level 454. */
export const WEB_HOME_VIEWS = ['recent', 'inbox', 'all_messages'] as const;
export const NOTIFICATION_SOUNDS = ['chime', 'ding', 'droplet', 'highway', 'plink', 'same', 'zulip'] as const;

const ONE_TO_THREE = [1, 2, 3];
const ONE_TO_FOUR = [1, 2, 3, 4];

/** Every user setting (Zulip's UserProfile.property_types), in Zulip's model order. */
export const USER_SETTINGS: Readonly<Record<string, SettingSpec>> = {
  // General (display) settings.
  enter_sends: bool(false),
  left_side_userlist: bool(false),
  default_language: strIn('en'),
  web_home_view: strIn('inbox', WEB_HOME_VIEWS),
  web_escape_navigates_to_home_view: bool(true),
  fluid_layout_width: bool(false),
  high_contrast_mode: bool(false),
  translate_emoticons: bool(false),
  display_emoji_reaction_users: bool(true),
  twenty_four_hour_time: bool(false),
  starred_message_counts: bool(true),
  web_suggest_update_timezone: bool(true),
  color_scheme: intIn(1, ONE_TO_THREE),
  web_font_size_px: intIn(16),
  web_line_height_percent: intIn(140),
  web_animate_image_previews: strIn('on_hover', ['always', 'on_hover', 'never']),
  demote_inactive_streams: intIn(1, ONE_TO_THREE),
  web_mark_read_on_scroll_policy: intIn(1, ONE_TO_THREE),
  web_channel_default_view: intIn(1, ONE_TO_FOUR),
  emojiset: strIn('google', EMOJISETS),
  user_list_style: intIn(3, ONE_TO_THREE),
  web_stream_unreads_count_display_policy: intIn(2, ONE_TO_THREE),
  web_left_sidebar_unreads_count_summary: bool(true),
  web_navigate_to_sent_message: bool(true),
  web_inbox_show_channel_folders: bool(true),
  web_left_sidebar_show_channel_folders: bool(true),
  hide_ai_features: bool(false),
  // Notification settings.
  email_notifications_batching_period_seconds: intIn(120),
  enable_stream_desktop_notifications: bool(false),
  enable_stream_email_notifications: bool(false),
  enable_stream_push_notifications: bool(false),
  enable_stream_audible_notifications: bool(false),
  notification_sound: strIn('zulip'),
  wildcard_mentions_notify: bool(true),
  enable_followed_topic_desktop_notifications: bool(true),
  enable_followed_topic_email_notifications: bool(true),
  enable_followed_topic_push_notifications: bool(true),
  enable_followed_topic_audible_notifications: bool(true),
  enable_followed_topic_wildcard_mentions_notify: bool(true),
  enable_desktop_notifications: bool(true),
  pm_content_in_desktop_notifications: bool(true),
  enable_sounds: bool(true),
  enable_offline_email_notifications: bool(true),
  message_content_in_email_notifications: bool(true),
  enable_offline_push_notifications: bool(true),
  enable_online_push_notifications: bool(true),
  desktop_icon_count_display: intIn(1, ONE_TO_FOUR),
  enable_digest_emails: bool(true),
  enable_login_emails: bool(true),
  enable_marketing_emails: bool(true),
  presence_enabled: bool(true),
  realm_name_in_email_notifications_policy: intIn(1, ONE_TO_THREE),
  automatically_follow_topics_policy: intIn(3, ONE_TO_FOUR),
  automatically_unmute_topics_in_muted_streams_policy: intIn(2, ONE_TO_FOUR),
  automatically_follow_topics_where_mentioned: bool(true),
  resolved_topic_notice_auto_read_policy: strIn('except_followed', RESOLVED_TOPIC_NOTICE_POLICIES),
  enable_drafts_synchronization: bool(true),
  // Privacy settings.
  send_stream_typing_notifications: bool(true),
  send_private_typing_notifications: bool(true),
  send_read_receipts: bool(true),
  allow_private_data_export: bool(false),
  receives_typing_notifications: bool(true),
  email_address_visibility: intIn(1, [1, 2, 3, 4, 5]),
};

export const USER_SETTING_DEFAULTS: Readonly<Record<string, SettingValue>> = Object.fromEntries(
  Object.entries(USER_SETTINGS).map(([k, s]) => [k, s.default]),
);

/** Settings that existed before feature level 89 and also travel as update_display_settings events / legacy /register keys. */
export const DISPLAY_SETTINGS_LEGACY: readonly string[] = [
  'color_scheme', 'default_language', 'web_home_view', 'demote_inactive_streams', 'emojiset',
  'enable_drafts_synchronization', 'enter_sends', 'fluid_layout_width', 'high_contrast_mode',
  'left_side_userlist', 'starred_message_counts', 'translate_emoticons', 'twenty_four_hour_time',
];

/** Likewise for update_global_notifications. */
export const NOTIFICATION_SETTINGS_LEGACY: readonly string[] = [
  'desktop_icon_count_display', 'email_notifications_batching_period_seconds', 'enable_desktop_notifications',
  'enable_digest_emails', 'enable_login_emails', 'enable_marketing_emails', 'enable_offline_email_notifications',
  'enable_offline_push_notifications', 'enable_online_push_notifications', 'enable_sounds',
  'enable_stream_audible_notifications', 'enable_stream_desktop_notifications', 'enable_stream_email_notifications',
  'enable_stream_push_notifications', 'message_content_in_email_notifications', 'notification_sound',
  'pm_content_in_desktop_notifications', 'presence_enabled', 'realm_name_in_email_notifications_policy',
  'wildcard_mentions_notify',
];

/** Settings an administrator may not change for other users (target_users). */
export const SECURITY_SENSITIVE_SETTINGS: ReadonlySet<string> = new Set([
  'allow_private_data_export', 'email_address_visibility', 'enable_digest_emails', 'enable_login_emails',
  'enable_marketing_emails', 'presence_enabled', 'send_private_typing_notifications', 'send_read_receipts',
  'send_stream_typing_notifications',
]);

/** A user's effective settings: the defaults overlaid with what the row stores. */
export function userSettings(json: string): Record<string, SettingValue> {
  return { ...USER_SETTING_DEFAULTS, ...(JSON.parse(json) as Record<string, SettingValue>) };
}

/** The explicitly stored settings of a row (what differs from "never set"). */
export function storedSettings(json: string): Record<string, SettingValue> {
  return JSON.parse(json) as Record<string, SettingValue>;
}

/** "Invalid email batching period: {n} seconds" unless 0 < n <= one week. */
export const MAX_EMAIL_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

/**
 * IANA time zone names as Zulip's zoneinfo accepts them: known to the
 * runtime's time zone database and spelled with its capitalisation (zoneinfo
 * on a case-sensitive file system refuses "america/new_york").
 */
export function isValidTimezone(tz: string): boolean {
  if (tz === '' || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    return false;
  }
  if ((supportedTimezones ??= new Set(Intl.supportedValuesOf('timeZone'))).has(tz) || tz === 'UTC') return true;
  // Links (US/Eastern, Etc/GMT+5, EST5EDT): each segment starts with a capital or a digit.
  return /^[A-Z][A-Za-z0-9_+-]*(\/[A-Z0-9][A-Za-z0-9_+-]*)*$/.test(tz);
}
// Built on first use, not at start: listing the time zone database costs some 40 ms of CPU (P10).
let supportedTimezones: ReadonlySet<string> | undefined;

/**
 * The settings an organization sets defaults for (Zulip's RealmUserDefault):
 * every user setting but default_language (the realm has its own) and the
 * time zone.
 */
export const REALM_USER_DEFAULT_SETTINGS: readonly string[] = Object.keys(USER_SETTINGS).filter((k) => k !== 'default_language');

/** The realm's defaults for new users: the built-in defaults overlaid with what the realm stores. */
export function realmUserDefaults(json: string): Record<string, SettingValue> {
  const stored = JSON.parse(json) as Record<string, SettingValue>;
  return Object.fromEntries(REALM_USER_DEFAULT_SETTINGS.map((k) => [k, k in stored ? stored[k]! : USER_SETTING_DEFAULTS[k]!]));
}

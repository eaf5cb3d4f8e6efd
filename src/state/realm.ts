import { createHash } from 'node:crypto';
import { fakeEmailDomain, realmUrl } from '../config.js';
import * as limits from '../domain/rules/limits.js';
import { REALM_GROUP_SETTING_DEFAULTS } from '../domain/rules/realm-group-settings.js';
import { realmSettings } from '../domain/rules/realm-settings.js';
import { systemGroupIds } from '../store/groups.js';
import { serverEmojiDataPath } from '../domain/rules/server-emoji-data.js';
import { groupSettingValues, sharedRealm, systemGroupIdsFor } from './shared.js';
import type { StateModule } from './types.js';
import { SERVER_THUMBNAIL_FORMATS } from '../files/thumbnails.js';

/**
 * The `realm` part of /register: every realm setting as realm_<name>, the
 * realm permission group settings (group id or anonymous-group object), the
 * realm's identity, and the server's limits and protocol constants.
 *
 * Events: {type:'realm', op:'update', property, value} sets realm_<property>;
 * {type:'realm', op:'update_dict', property, data} sets realm_<key> for each
 * key of data (property 'default' for settings, 'icon'/'logo' for images).
 * realm_user update {is_active: false}: the user leaves the direct members
 * of anonymous group settings (as Zulip's apply_event; a reactivation sends
 * update_dict with the restored values).
 */

const GROUP_SETTINGS = Object.keys(REALM_GROUP_SETTING_DEFAULTS) as (keyof typeof REALM_GROUP_SETTING_DEFAULTS)[];
const GROUP_SETTING_SET: ReadonlySet<string> = new Set(GROUP_SETTINGS);

/**
 * The deprecated realm_wildcard_mention_policy, still in /register (the
 * mobile app requires it), derived from can_mention_many_users_group as
 * Zulip's get_corresponding_policy_value_for_group_setting does: the system
 * group's old enum value (everyone 1, members 2, full members 3, admins 5,
 * nobody 6, moderators 7); any other group (owners, a user-defined or an
 * anonymous group) reads as everyone.
 */
const WILDCARD_POLICY_BY_GROUP: Readonly<Record<string, number>> = {
  'role:everyone': 1,
  'role:members': 2,
  'role:fullmembers': 3,
  'role:administrators': 5,
  'role:nobody': 6,
  'role:moderators': 7,
};
export const wildcardMentionPolicy = (groupName: string | undefined): number => (groupName !== undefined ? WILDCARD_POLICY_BY_GROUP[groupName] : undefined) ?? 1;

/** The /register key of a realm property (settings already named realm_* keep their name). */
export const realmKey = (property: string): string => (property.startsWith('realm_') ? property : `realm_${property}`);

const iconUrl = (stringId: string): string =>
  `https://secure.gravatar.com/avatar/${createHash('md5').update(stringId).digest('hex')}?d=identicon&version=1`;

export const realmModule: StateModule = {
  fetchTypes: ['realm'],
  eventTypes: ['realm', 'realm_user'],
  async fetch(ctx) {
    const app = ctx.app;
    const realm = await sharedRealm(ctx);
    const settings = realmSettings(realm.settings);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(settings)) if (!GROUP_SETTING_SET.has(k)) out[realmKey(k)] = v;

    // Permission settings: the stored group id, else the default system group.
    const system = await systemGroupIdsFor(ctx, () => systemGroupIds(app.db, realm.id));
    const ids = GROUP_SETTINGS.map((s) => (typeof settings[s] === 'number' ? (settings[s] as number) : system.get(REALM_GROUP_SETTING_DEFAULTS[s])!));
    const presented = await groupSettingValues(ctx, ids.filter((id) => id !== undefined));
    GROUP_SETTINGS.forEach((s, i) => {
      out[realmKey(s)] = presented.get(ids[i]!) ?? ids[i];
    });
    const mentionGroup = out.realm_can_mention_many_users_group;
    const systemName = typeof mentionGroup === 'number' ? [...system].find(([, id]) => id === mentionGroup)?.[0] : undefined;
    out.realm_wildcard_mention_policy = wildcardMentionPolicy(systemName);

    const url = realmUrl(app.config);
    const password = Boolean(settings.password_auth_enabled);
    Object.assign(out, {
      realm_name: realm.name,
      realm_description: realm.description,
      realm_date_created: realm.date_created,
      realm_url: url,
      realm_uri: url,
      realm_icon_url: iconUrl(realm.string_id),
      realm_logo_url: '',
      realm_night_logo_url: '',
      realm_bot_domain: fakeEmailDomain(app.config),
      realm_authentication_methods: {
        Email: { enabled: password, available: true },
        Dev: { enabled: false, available: false },
        LDAP: { enabled: false, available: false },
      },
      realm_email_auth_enabled: password,
      realm_password_auth_enabled: password,
      realm_presence_disabled: false,
      realm_push_notifications_enabled: false,
      realm_push_notifications_enabled_end_timestamp: null,
      realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } },
      realm_default_external_accounts: {},
      realm_is_zephyr_mirror_realm: false,
      zulip_plan_is_not_limited: true,
      settings_send_digest_emails: false,
      server_generation: 0,
      development_environment: false,
      server_inline_image_preview: true,
      server_emoji_data_url: url + serverEmojiDataPath(),
      server_inline_url_embed_preview: app.config.linkPreviews,
      server_avatar_changes_disabled: false,
      server_name_changes_disabled: false,
      server_web_public_streams_enabled: false,
      server_needs_upgrade: false,
      server_can_summarize_topics: false,
      server_jitsi_server_url: null,
      jitsi_server_url: settings.jitsi_server_url ?? null,
      giphy_rating_options: {},
      password_min_length: limits.PASSWORD_MIN_LENGTH,
      password_max_length: limits.PASSWORD_MAX_LENGTH,
      password_min_guesses: limits.PASSWORD_MIN_GUESSES,
      max_avatar_file_size_mib: limits.MAX_AVATAR_FILE_SIZE_MIB,
      max_icon_file_size_mib: limits.MAX_ICON_FILE_SIZE_MIB,
      max_logo_file_size_mib: limits.MAX_LOGO_FILE_SIZE_MIB,
      max_file_upload_size_mib: app.config.maxFileUploadSizeMib,
      server_thumbnail_formats: SERVER_THUMBNAIL_FORMATS,
      max_stream_name_length: limits.MAX_STREAM_NAME_LENGTH,
      max_stream_description_length: limits.MAX_STREAM_DESCRIPTION_LENGTH,
      max_topic_length: limits.MAX_TOPIC_LENGTH,
      max_message_length: limits.MAX_MESSAGE_LENGTH,
      max_channel_folder_name_length: limits.MAX_CHANNEL_FOLDER_NAME_LENGTH,
      max_channel_folder_description_length: limits.MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
      max_reminder_note_length: limits.MAX_REMINDER_NOTE_LENGTH,
      max_bulk_new_subscription_messages: limits.MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
      event_queue_longpoll_timeout_seconds: limits.longpollTimeoutSeconds(app.config.heartbeatMinMs, app.config.heartbeatJitterMs),
      server_presence_ping_interval_seconds: limits.PRESENCE_PING_INTERVAL_SECS,
      server_presence_offline_threshold_seconds: limits.PRESENCE_OFFLINE_THRESHOLD_SECS,
      server_typing_started_expiry_period_milliseconds: limits.TYPING_STARTED_EXPIRY_PERIOD_MS,
      server_typing_stopped_wait_period_milliseconds: limits.TYPING_STOPPED_WAIT_PERIOD_MS,
      server_typing_started_wait_period_milliseconds: limits.TYPING_STARTED_WAIT_PERIOD_MS,
    });
    return out;
  },
  apply(state, event) {
    if (event.type === 'realm_user') {
      const person = event.person as { user_id?: number; is_active?: boolean } | undefined;
      if (event.op !== 'update' || person?.is_active !== false) return;
      for (const s of GROUP_SETTINGS) {
        const v = state[realmKey(s)] as { direct_members?: number[] } | number | undefined;
        if (v && typeof v === 'object' && Array.isArray(v.direct_members)) {
          state[realmKey(s)] = { ...v, direct_members: v.direct_members.filter((id) => id !== person.user_id) };
        }
      }
      return;
    }
    if (event.op === 'update' && typeof event.property === 'string') {
      state[realmKey(event.property)] = event.value;
    } else if (event.op === 'update_dict' && event.data && typeof event.data === 'object') {
      for (const [k, v] of Object.entries(event.data as Record<string, unknown>)) state[realmKey(k)] = v;
      const data = event.data as Record<string, unknown>;
      if ('can_mention_many_users_group' in data && 'realm_wildcard_mention_policy' in state) {
        // Zulip sends no event for the derived legacy value; recompute it from the
        // realm's groups when the client has them (they name the system groups).
        const v = data.can_mention_many_users_group;
        const groups = state.realm_user_groups as { id: number; name: string; is_system_group: boolean }[] | undefined;
        const g = typeof v === 'number' && Array.isArray(groups) ? groups.find((x) => x.id === v && x.is_system_group) : undefined;
        if (typeof v !== 'number' || g) state.realm_wildcard_mention_policy = wildcardMentionPolicy(g?.name);
      }
    }
  },
};

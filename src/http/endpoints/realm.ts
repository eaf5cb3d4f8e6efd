import { accessBefore, emitAccessChanges } from '../../domain/access/user-access-events.js';
import { z } from 'zod';
import { endpoint } from '../endpoint.js';
import { p, type Param } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest, JsonableError, ownerRequired } from '../../domain/errors.js';
import { accessChannelById, loadViewer } from '../../domain/access/channels.js';
import { doSetRealmGroupSetting, doSetRealmProperty } from '../../domain/actions/realm-settings.js';
import { presentGroupSetting, resolveGroupSetting, systemGroupId, type GroupSettingValue } from '../../domain/rules/group-settings.js';
import { REALM_GROUP_SETTING_DEFAULTS, realmGroupSettingId, type RealmGroupSetting } from '../../domain/rules/realm-group-settings.js';
import { ROLE_OWNER } from '../../domain/rules/users.js';
import { checkGroupValueIds, groupSettingChange, readRetention, type GroupSettingChange } from './channel-params.js';
import { requireAdmin } from './users.js';

/**
 * PATCH /realm (Zulip's update_realm): organization administrators; some
 * settings only owners. Each changed setting sends its realm event; the
 * response lists what changed ("updated" for string values, as Zulip).
 */

const BOOL_SETTINGS = [
  'allow_message_editing',
  'avatar_changes_disabled',
  'digest_emails_enabled',
  'disallow_disposable_email_addresses',
  'email_changes_disabled',
  'emails_restricted_to_domains',
  'enable_guest_user_dm_warning',
  'enable_guest_user_indicator',
  'enable_read_receipts',
  'enable_spectator_access',
  'inline_image_preview',
  'inline_url_embed_preview',
  'invite_required',
  'message_content_allowed_in_email_notifications',
  'name_changes_disabled',
  'require_unique_names',
  'send_channel_events_messages',
  'send_welcome_emails',
  'want_advertise_in_communities_directory',
] as const;

/** Settings that only organization owners may change. */
const OWNER_ONLY = new Set<string>([
  'invite_required',
  'emails_restricted_to_domains',
  'disallow_disposable_email_addresses',
  'waiting_period_threshold',
  'message_retention_days',
  'create_multiuse_invite_group',
  'can_create_groups',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
]);

/** Seconds limits: a positive integer, or "unlimited" (null). */
const LIMIT_SETTINGS = [
  'message_content_edit_limit_seconds',
  'message_content_delete_limit_seconds',
  'move_messages_within_stream_limit_seconds',
  'move_messages_between_streams_limit_seconds',
] as const;

const CHANNEL_SETTINGS = [
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
  'zulip_update_announcements_stream_id',
  'moderation_request_channel_id',
] as const;

/** Language codes Parley accepts for default_language (Zulip's translated languages). */
export const LANGUAGE_CODES = new Set([
  'ar', 'be', 'bg', 'bqi', 'ca', 'cs', 'cy', 'da', 'de', 'el', 'en', 'en_GB', 'eo', 'es', 'fa', 'fi', 'fr', 'gl', 'gu', 'he', 'hi',
  'hu', 'id', 'it', 'ja', 'ko', 'lt', 'lv', 'ml', 'mn', 'nl', 'no', 'pl', 'pt', 'pt_BR', 'pt_PT', 'ro', 'ru', 'si', 'sk', 'sr',
  'sv', 'ta', 'te', 'tl', 'tr', 'uk', 'uz', 'vi', 'zh-hans', 'zh_TW',
]);

const GROUP_SETTINGS = Object.keys(REALM_GROUP_SETTING_DEFAULTS) as RealmGroupSetting[];
/** Realm permissions that guests can never hold cannot point at role:everyone. */
/**
 * can_access_all_users_group (Zulip's Realm.REALM_PERMISSION_GROUP_SETTINGS:
 * require_system_group, allow_nobody_group False, allow_internet_group False,
 * allowed_system_groups [role:everyone, role:members]): only those two system
 * groups; anything else is refused with access_user_group_for_setting's
 * wording ("'can_access_all_users_group' must be a system user group." for
 * a named or anonymous non-system group, "... setting cannot be set to
 * 'role:X' group." for another system group).
 */
const ACCESS_ALL_USERS_RULES = { systemGroupsOnly: true, disallowed: ['role:internet', 'role:nobody'], allowed: ['role:everyone', 'role:members'] };
const NO_EVERYONE = new Set(['create_multiuse_invite_group', 'can_invite_users_group', 'can_manage_all_groups', 'can_manage_billing_group', 'can_create_groups']);

const params: Record<string, Param<any>> = {
  name: p.str(z.string().max(40)).optional(),
  description: p.str(z.string().max(1000)).optional(),
  default_language: p.str().optional(),
  default_code_block_language: p.str().optional(),
  welcome_message_custom_text: p.str(z.string().max(8000)).optional(),
  message_edit_history_visibility_policy: p.str().optional(),
  topics_policy: p.str().optional(),
  waiting_period_threshold: p.json(z.int().min(0)).optional(),
  digest_weekday: p.json(z.int().min(0).max(6)).optional(),
  giphy_rating: p.int().optional(),
  video_chat_provider: p.int().optional(),
  jitsi_server_url: p.json(z.string().nullable()).optional(),
  // JSON-encoded in Zulip; clients also send the words raw, so both are read.
  message_retention_days: p.str().optional(),
};
for (const s of BOOL_SETTINGS) params[s] = p.bool().optional();
for (const s of LIMIT_SETTINGS) params[s] = p.str().optional();
for (const s of CHANNEL_SETTINGS) params[s] = p.id().optional();
for (const s of GROUP_SETTINGS) params[s] = p.json(groupSettingChange).optional();

function parseLimit(name: string, value: number | string): number | null {
  if (value === 'unlimited') return null;
  if (typeof value !== 'number' || value <= 0) {
    throw new JsonableError(`Bad value for '${name}': ${String(value)}`, { code: 'REQUEST_VARIABLE_INVALID' });
  }
  return value;
}

export const updateRealm = endpoint({
  method: 'PATCH',
  path: '/realm',
  auth: 'user',
  guard: requireAdmin,
  params,
  handler: async (ctx, q: Record<string, any>) => {
    const db = ctx.app.db;
    const realmId = ctx.user.realmId;
    const isOwner = ctx.user.role === ROLE_OWNER;
    for (const key of OWNER_ONLY) if (q[key] !== undefined && !isOwner) throw ownerRequired();
    if (q.default_language !== undefined && !LANGUAGE_CODES.has(q.default_language)) throw badRequest(`Invalid language '${q.default_language}'`);
    if (q.video_chat_provider !== undefined && ![0, 1].includes(q.video_chat_provider)) {
      throw badRequest(`Invalid video_chat_provider ${q.video_chat_provider}`);
    }
    if (q.giphy_rating !== undefined && ![0, 1, 2, 3, 4].includes(q.giphy_rating)) throw badRequest(`Invalid giphy_rating ${q.giphy_rating}`);
    if (q.message_edit_history_visibility_policy !== undefined && !['all', 'moves', 'none'].includes(q.message_edit_history_visibility_policy)) {
      throw badRequest('Invalid message_edit_history_visibility_policy');
    }
    if (q.topics_policy !== undefined && !['allow_empty_topic', 'disable_empty_topic'].includes(q.topics_policy)) throw badRequest('Invalid topics_policy');
    const values: [string, unknown][] = [];
    for (const key of [...BOOL_SETTINGS, 'name', 'description', 'default_language', 'default_code_block_language', 'welcome_message_custom_text',
      'message_edit_history_visibility_policy', 'topics_policy', 'waiting_period_threshold', 'digest_weekday', 'giphy_rating', 'video_chat_provider', 'jitsi_server_url']) {
      if (q[key] !== undefined) values.push([key, q[key]]);
    }
    if (q.message_retention_days !== undefined) {
      const raw = readRetention(q.message_retention_days as string);
      const parsed = raw === 'unlimited' ? -1 : typeof raw === 'number' && raw > 0 ? raw : null;
      if (parsed === null) throw new JsonableError(`Bad value for 'message_retention_days': ${String(raw)}`, { code: 'REQUEST_VARIABLE_INVALID' });
      values.push(['message_retention_days', parsed]);
    }
    for (const key of LIMIT_SETTINGS) if (q[key] !== undefined) values.push([key, parseLimit(key, readRetention(q[key] as string))]);
    const viewer = await loadViewer(db, ctx.userRow);
    for (const key of CHANNEL_SETTINGS) {
      if (q[key] === undefined) continue;
      if (q[key] >= 0) await accessChannelById(db, viewer, q[key], { requireContentAccess: false });
      values.push([key, q[key] >= 0 ? q[key] : -1]);
    }
    const groupChanges: [RealmGroupSetting, GroupSettingValue][] = [];
    for (const key of GROUP_SETTINGS) {
      const change = q[key] as GroupSettingChange | undefined;
      if (change === undefined) continue;
      checkGroupValueIds(change.new);
      if (change.old !== undefined) checkGroupValueIds(change.old);
      const current = await presentGroupSetting(db, await realmGroupSettingId(db, realmId, key));
      if (change.old !== undefined && JSON.stringify(change.old) !== JSON.stringify(current)) throw badRequest("'old' value does not match the expected value.");
      if (JSON.stringify(change.new) === JSON.stringify(current)) continue;
      groupChanges.push([key, change.new]);
    }
    const data: Record<string, unknown> = {};
    await transact(ctx.app, async (tx) => {
      for (const [key, value] of values) {
        if (await doSetRealmProperty(tx, realmId, key, value)) data[key] = typeof value === 'string' ? 'updated' : value;
      }
      for (const [key, value] of groupChanges) {
        const rules = key === 'can_access_all_users_group' ? ACCESS_ALL_USERS_RULES : { disallowed: NO_EVERYONE.has(key) ? ['role:internet', 'role:everyone'] : ['role:internet'] };
        const groupId = await resolveGroupSetting(tx.db, realmId, key, value, rules, ctx.user.id);
        const apiValue = await presentGroupSetting(tx.db, groupId);
        // Who guests can access changes with this setting: every open queue of a guest gets the difference.
        const access = key === 'can_access_all_users_group' ? await accessBefore(tx, realmId) : undefined;
        await doSetRealmGroupSetting(tx, realmId, key, groupId, apiValue);
        if (access) await emitAccessChanges(ctx.app, tx, realmId, access);
        data[key] = apiValue;
      }
    });
    return data;
  },
});

/** The system group id for a default (used by tests and the realm state). */
export const systemGroup = systemGroupId;

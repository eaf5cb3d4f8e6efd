import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';
import { realmSettings } from './realm-settings.js';
import { isUserInGroup, systemGroupId } from './group-settings.js';

type AnyDb = Db | TxDb;

/**
 * Realm permission settings that are group-setting values, with Zulip's
 * defaults (system group names). The realm's settings JSON stores a group id
 * under the setting's name once an admin changes it; until then the default
 * system group applies.
 */
export const REALM_GROUP_SETTING_DEFAULTS = {
  can_access_all_users_group: 'role:everyone',
  can_add_custom_emoji_group: 'role:members',
  can_add_subscribers_group: 'role:members',
  can_create_bots_group: 'role:members',
  can_create_groups: 'role:members',
  can_create_public_channel_group: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_create_write_only_bots_group: 'role:members',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  can_manage_all_groups: 'role:owners',
  can_manage_billing_group: 'role:administrators',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_set_delete_message_policy_group: 'role:moderators',
  can_set_topics_policy_group: 'role:members',
  can_summarize_topics_group: 'role:everyone',
  create_multiuse_invite_group: 'role:administrators',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
} as const;

export type RealmGroupSetting = keyof typeof REALM_GROUP_SETTING_DEFAULTS;

/** The group id a realm permission setting points to. */
export async function realmGroupSettingId(db: AnyDb, realmId: number, setting: RealmGroupSetting): Promise<number> {
  const realm = await db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  const stored = realmSettings(realm.settings)[setting];
  if (typeof stored === 'number') return stored;
  return systemGroupId(db, realmId, REALM_GROUP_SETTING_DEFAULTS[setting]);
}

/** Does the user hold this realm permission? */
export async function userHasRealmPermission(db: AnyDb, realmId: number, userId: number, setting: RealmGroupSetting): Promise<boolean> {
  return isUserInGroup(db, userId, await realmGroupSettingId(db, realmId, setting));
}

import type { Tx } from '../context.js';
import { activeUserIds } from '../../store/users.js';
import { REALM_SETTING_DEFAULTS, realmSettings } from '../rules/realm-settings.js';

/**
 * Realm settings writes (PATCH /realm). Each change sends Zulip's realm event
 * to every active user: {type: realm, op: update, property, value}, or
 * {op: update_dict, property: default, data: {...}} for the settings Zulip
 * reports that way. The realm state module applies both generically.
 */

/** Settings Zulip reports with update_dict (historical message-editing bundle). */
const UPDATE_DICT_SETTINGS = new Set(['allow_message_editing', 'message_content_edit_limit_seconds']);

async function readSettings(tx: Tx, realmId: number): Promise<Record<string, unknown>> {
  const row = await tx.db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  return JSON.parse(row.settings) as Record<string, unknown>;
}

async function writeSettings(tx: Tx, realmId: number, stored: Record<string, unknown>): Promise<void> {
  await tx.db.updateTable('realms').set({ settings: JSON.stringify(stored) }).where('id', '=', realmId).execute();
}

/** Current value of a realm setting (name and description live in columns). */
export async function currentRealmValue(tx: Tx, realmId: number, name: string): Promise<unknown> {
  if (name === 'name' || name === 'description') {
    const row = await tx.db.selectFrom('realms').select(['name', 'description']).where('id', '=', realmId).executeTakeFirstOrThrow();
    return row[name];
  }
  const row = await tx.db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  return realmSettings(row.settings)[name];
}

/** Sets one realm property and sends its event; no-op when unchanged. Returns whether it changed. */
export async function doSetRealmProperty(tx: Tx, realmId: number, name: string, value: unknown): Promise<boolean> {
  const current = await currentRealmValue(tx, realmId, name);
  if (JSON.stringify(current) === JSON.stringify(value)) return false;
  if (name === 'name' || name === 'description') {
    await tx.db.updateTable('realms').set({ [name]: value as string }).where('id', '=', realmId).execute();
  } else {
    const stored = await readSettings(tx, realmId);
    if (name in REALM_SETTING_DEFAULTS && JSON.stringify((REALM_SETTING_DEFAULTS as Record<string, unknown>)[name]) === JSON.stringify(value)) {
      delete stored[name];
    } else stored[name] = value;
    await writeSettings(tx, realmId, stored);
  }
  const recipients = await activeUserIds(tx.db, realmId);
  const event = UPDATE_DICT_SETTINGS.has(name)
    ? { type: 'realm', op: 'update_dict', property: 'default', data: { [name]: value } }
    : { type: 'realm', op: 'update', property: name, value };
  tx.emit(realmId, event, recipients);
  return true;
}

async function isEveryoneGroup(tx: Tx, realmId: number, groupId: number): Promise<boolean> {
  const g = await tx.db.selectFrom('user_groups').select(['name', 'is_system_group']).where('id', '=', groupId).where('realm_id', '=', realmId).executeTakeFirst();
  return g?.is_system_group === 1 && g.name === 'role:everyone';
}

/** A realm permission group setting (stored as a group id); event as Zulip's update_dict. */
export async function doSetRealmGroupSetting(tx: Tx, realmId: number, name: string, groupId: number, apiValue: unknown): Promise<void> {
  const stored = await readSettings(tx, realmId);
  stored[name] = groupId;
  // can_access_all_users_group back at role:everyone (its default) is stored as absent: then no
  // request of a guest pays for the restriction check (domain/access/user-access.ts).
  if (name === 'can_access_all_users_group' && (await isEveryoneGroup(tx, realmId, groupId))) delete stored[name];
  await writeSettings(tx, realmId, stored);
  tx.emit(realmId, { type: 'realm', op: 'update_dict', property: 'default', data: { [name]: apiValue } }, await activeUserIds(tx.db, realmId));
}

const CHANNEL_REFERENCE_SETTINGS = [
  'moderation_request_channel_id',
  'new_stream_announcements_stream_id',
  'signup_announcements_stream_id',
  'zulip_update_announcements_stream_id',
] as const;

/** An archived channel stops being an announcement or moderation channel (one update_dict event, as Zulip). */
export async function setRealmChannelReferences(tx: Tx, realmId: number, channelId: number): Promise<void> {
  const stored = await readSettings(tx, realmId);
  const data: Record<string, number> = {};
  for (const key of CHANNEL_REFERENCE_SETTINGS) {
    if (stored[key] === channelId) {
      delete stored[key];
      data[key] = -1;
    }
  }
  if (Object.keys(data).length === 0) return;
  await writeSettings(tx, realmId, stored);
  tx.emit(realmId, { type: 'realm', op: 'update_dict', property: 'default', data }, await activeUserIds(tx.db, realmId));
}

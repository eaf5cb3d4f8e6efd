import type { Tx } from '../context.js';
import { metadataUserIds } from '../access/channels.js';
import { presentGroupSettings } from '../rules/group-settings.js';
import { REALM_GROUP_SETTING_DEFAULTS } from '../rules/realm-group-settings.js';
import { realmSettings } from '../rules/realm-settings.js';
import { GROUP_SETTING_NAMES } from '../rules/user-groups.js';
import { CHANNEL_PERMISSION_NAMES, settingColumn } from '../rules/channels.js';
import { activeUserIds } from '../../store/users.js';

/**
 * Anonymous group-setting values ({direct_members, direct_subgroups}) list
 * active users only, and clients drop a deactivated user from them on
 * realm_user update {is_active: false}. When a user comes back, every
 * anonymous group that lists them has a new value to announce (Zulip's
 * send_update_events_for_anonymous_group_settings):
 * - a named group's setting: user_group update {data: {setting: value}};
 * - a realm setting: realm update_dict {property: 'default', data: {setting: value}};
 * - a channel setting: stream update {property: setting, value} to those who
 *   see the channel (Zulip sends nothing there, and its clients' channel
 *   settings go stale; Parley keeps them in step like the other two).
 */
export async function emitAnonymousSettingUpdates(tx: Tx, realmId: number, anonymousGroupIds: readonly number[], mark: Record<string, unknown> = {}): Promise<void> {
  const ids = [...new Set(anonymousGroupIds)];
  if (ids.length === 0) return;
  const values = await presentGroupSettings(tx.db, ids);
  const everyone = await activeUserIds(tx.db, realmId);

  const groups = await tx.db
    .selectFrom('user_groups')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name', 'is not', null)
    .where((eb) => eb.or(GROUP_SETTING_NAMES.map((n) => eb(n, 'in', ids))))
    .orderBy('id')
    .execute();
  for (const g of groups) {
    for (const name of GROUP_SETTING_NAMES) {
      const gid = g[name];
      if (gid !== null && ids.includes(gid)) {
        tx.emit(realmId, { type: 'user_group', op: 'update', group_id: g.id, data: { [name]: values.get(gid) }, ...mark }, everyone);
      }
    }
  }

  const realm = await tx.db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  const rs = realmSettings(realm.settings);
  for (const name of Object.keys(REALM_GROUP_SETTING_DEFAULTS)) {
    const gid = rs[name];
    if (typeof gid === 'number' && ids.includes(gid)) {
      tx.emit(realmId, { type: 'realm', op: 'update_dict', property: 'default', data: { [name]: values.get(gid) }, ...mark }, everyone);
    }
  }

  const cols = CHANNEL_PERMISSION_NAMES.map(settingColumn);
  const channels = await tx.db
    .selectFrom('channels')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where((eb) => eb.or(cols.map((c) => eb(c, 'in', ids))))
    .orderBy('id')
    .execute();
  if (channels.length === 0) return;
  const audiences = await metadataUserIds(tx.db, realmId, channels);
  for (const ch of channels) {
    const to = [...audiences.get(ch.id)!].sort((a, b) => a - b);
    for (const name of CHANNEL_PERMISSION_NAMES) {
      const gid = ch[settingColumn(name)];
      if (!ids.includes(gid)) continue;
      tx.emit(realmId, { type: 'stream', op: 'update', stream_id: ch.id, name: ch.name, property: name, value: values.get(gid), ...mark }, to);
    }
  }
}

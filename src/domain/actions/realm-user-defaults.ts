import type { Tx } from '../context.js';
import { activeUserIds } from '../../store/users.js';
import { USER_SETTING_DEFAULTS, type SettingValue } from '../rules/user-settings.js';

/**
 * The organization's defaults for new users' settings (Zulip's
 * do_set_realm_user_default_setting): one setting at a time, no-op when
 * unchanged, and a realm_user_settings_defaults update event to every active
 * user. New users start with these values (actions/users.ts doCreateUser).
 */
export async function doSetRealmUserDefault(tx: Tx, realmId: number, name: string, value: SettingValue): Promise<boolean> {
  const row = await tx.db.selectFrom('realms').select('user_settings_defaults').where('id', '=', realmId).executeTakeFirstOrThrow();
  const stored = JSON.parse(row.user_settings_defaults) as Record<string, SettingValue>;
  const current = name in stored ? stored[name] : USER_SETTING_DEFAULTS[name];
  if (current === value) return false;
  if (USER_SETTING_DEFAULTS[name] === value) delete stored[name];
  else stored[name] = value;
  await tx.db.updateTable('realms').set({ user_settings_defaults: JSON.stringify(stored) }).where('id', '=', realmId).execute();
  tx.emit(realmId, { type: 'realm_user_settings_defaults', op: 'update', property: name, value }, await activeUserIds(tx.db, realmId));
  return true;
}

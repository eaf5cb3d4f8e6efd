import { doSetRealmUserDefault } from '../../domain/actions/realm-user-defaults.js';
import { transact } from '../../domain/context.js';
import { REALM_USER_DEFAULT_SETTINGS, type SettingValue } from '../../domain/rules/user-settings.js';
import { endpoint } from '../endpoint.js';
import type { Param } from '../params.js';
import { checkSettingValues, settingParam } from './settings.js';
import { requireAdmin } from './users.js';

/**
 * PATCH /realm/user_settings_defaults (Zulip's update_realm_user_settings_defaults):
 * organization administrators set the settings new users start with. Each
 * parameter is decoded and checked exactly as PATCH /settings does it
 * (same declarations, same value checks); only changed values are written,
 * each with its realm_user_settings_defaults event.
 */
const params = Object.fromEntries([...REALM_USER_DEFAULT_SETTINGS].sort().map((k) => [k, settingParam(k)])) as Record<string, Param<SettingValue | undefined>>;

export const updateRealmUserSettingsDefaults = endpoint({
  method: 'PATCH',
  path: '/realm/user_settings_defaults',
  auth: 'user',
  guard: requireAdmin,
  params,
  handler: async (ctx, v) => {
    checkSettingValues(v);
    const requested = REALM_USER_DEFAULT_SETTINGS.filter((k) => v[k] !== undefined).map((k) => [k, v[k] as SettingValue] as const);
    await transact(ctx.app, async (tx) => {
      for (const [name, value] of requested) await doSetRealmUserDefault(tx, ctx.user.realmId, name, value);
    });
    return {};
  },
});

import {
  DISPLAY_SETTINGS_LEGACY,
  EMOJISET_CHOICES,
  NOTIFICATION_SETTINGS_LEGACY,
  NOTIFICATION_SOUNDS,
  userSettings,
} from '../domain/rules/user-settings.js';
import type { StateModule } from './types.js';

/**
 * The caller's settings in /register: the `user_settings` object, and for
 * clients without the user_settings_object capability the legacy top-level
 * keys of update_display_settings / update_global_notifications (what
 * zulip-terminal and other older clients read).
 *
 * Events: user_settings update; the legacy update_display_settings and
 * update_global_notifications events, which queues with
 * user_settings_object never receive.
 */
export const userSettingsModule: StateModule = {
  fetchTypes: ['user_settings', 'update_display_settings', 'update_global_notifications'],
  eventTypes: ['user_settings', 'update_display_settings', 'update_global_notifications'],
  async fetch({ userRow, want, capabilities }) {
    const settings = userSettings(userRow.settings);
    const out: Record<string, unknown> = {};
    if (!capabilities.user_settings_object) {
      if (want('update_display_settings')) {
        for (const k of DISPLAY_SETTINGS_LEGACY) out[k] = settings[k];
        out.emojiset_choices = EMOJISET_CHOICES;
        out.timezone = userRow.timezone;
      }
      if (want('update_global_notifications')) {
        for (const k of NOTIFICATION_SETTINGS_LEGACY) out[k] = settings[k];
        out.available_notification_sounds = [...NOTIFICATION_SOUNDS];
      }
    }
    if (want('user_settings')) {
      out.user_settings = {
        ...settings,
        emojiset_choices: EMOJISET_CHOICES,
        timezone: userRow.timezone,
        available_notification_sounds: [...NOTIFICATION_SOUNDS],
      };
    }
    return out;
  },
  apply(state, event) {
    if (event.type === 'user_settings' && event.op === 'update' && typeof event.property === 'string') {
      const obj = state.user_settings as Record<string, unknown> | undefined;
      if (obj) state.user_settings = { ...obj, [event.property]: event.value };
    } else if (event.type === 'update_display_settings' && typeof event.setting_name === 'string') {
      if (event.setting_name in state) state[event.setting_name] = event.setting;
    } else if (event.type === 'update_global_notifications' && typeof event.notification_name === 'string') {
      if (event.notification_name in state) state[event.notification_name] = event.setting;
    }
  },
};

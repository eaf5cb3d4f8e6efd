import { EMOJISET_CHOICES, NOTIFICATION_SOUNDS, realmUserDefaults } from '../domain/rules/user-settings.js';
import { sharedRealm } from './shared.js';
import type { StateModule } from './types.js';

/**
 * realm_user_settings_defaults in /register (Zulip: the RealmUserDefault
 * settings plus emojiset_choices and available_notification_sounds), kept
 * current by realm_user_settings_defaults update events.
 */
export const realmUserDefaultsModule: StateModule = {
  fetchTypes: ['realm_user_settings_defaults'],
  eventTypes: ['realm_user_settings_defaults'],
  async fetch(ctx) {
    const realm = await sharedRealm(ctx);
    return {
      realm_user_settings_defaults: {
        ...realmUserDefaults(realm.user_settings_defaults),
        emojiset_choices: EMOJISET_CHOICES,
        available_notification_sounds: [...NOTIFICATION_SOUNDS],
      },
    };
  },
  apply(state, event) {
    const obj = state.realm_user_settings_defaults as Record<string, unknown> | undefined;
    if (obj && event.op === 'update' && typeof event.property === 'string') obj[event.property] = event.value;
  },
};

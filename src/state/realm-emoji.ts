import { allRealmEmoji } from '../domain/access/realm-emoji.js';
import { presentRealmEmojiDict } from '../presenters/realm-emoji.js';
import type { StateModule } from './types.js';

/**
 * `realm_emoji` in /register: every custom emoji keyed by id, deactivated
 * ones included. Event: realm_emoji update, which carries the whole set.
 */
export const realmEmojiModule: StateModule = {
  fetchTypes: ['realm_emoji'],
  eventTypes: ['realm_emoji'],
  async fetch({ app, user }) {
    return { realm_emoji: presentRealmEmojiDict(await allRealmEmoji(app.db, user.realmId)) };
  },
  apply(state, event) {
    if (event.op === 'update' && 'realm_emoji' in state) state.realm_emoji = event.realm_emoji;
  },
};

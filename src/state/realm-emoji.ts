import { allRealmEmoji } from '../domain/access/realm-emoji.js';
import { presentRealmEmojiDict } from '../presenters/realm-emoji.js';
import type { StateModule } from './types.js';

/**
 * `realm_emoji` in /register: every custom emoji keyed by id, deactivated
 * ones included. Events: realm_emoji update (the whole set), or for clients
 * with individual_emoji_changes add (one emoji) and update_one (changed fields).
 */
export const realmEmojiModule: StateModule = {
  fetchTypes: ['realm_emoji'],
  eventTypes: ['realm_emoji'],
  async fetch({ app, user }) {
    return { realm_emoji: presentRealmEmojiDict(await allRealmEmoji(app.db, user.realmId)) };
  },
  apply(state, event) {
    if (!('realm_emoji' in state)) return;
    const all = state.realm_emoji as Record<string, Record<string, unknown>>;
    if (event.op === 'update') state.realm_emoji = event.realm_emoji;
    else if (event.op === 'add') {
      const emoji = event.emoji as { id: string };
      state.realm_emoji = { ...all, [emoji.id]: emoji };
    } else if (event.op === 'update_one') {
      const id = String(event.emoji_id);
      if (all[id]) state.realm_emoji = { ...all, [id]: { ...all[id], ...(event.data as Record<string, unknown>) } };
    }
  },
};

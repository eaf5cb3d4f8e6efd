import { presentPlayground } from '../presenters/playground.js';
import { playgroundRows } from '../store/playgrounds.js';
import type { StateModule } from './types.js';

/**
 * `realm_playgrounds` in /register (every user, guests included, as Zulip's
 * fetch_initial_state_data) and the `realm_playgrounds` event, which carries
 * the whole list.
 */
export const playgroundsModule: StateModule = {
  fetchTypes: ['realm_playgrounds'],
  eventTypes: ['realm_playgrounds'],
  async fetch({ app, user, want }) {
    if (!want('realm_playgrounds')) return {};
    return { realm_playgrounds: (await playgroundRows(app.db, user.realmId)).map(presentPlayground) };
  },
  apply(state, event) {
    if ('realm_playgrounds' in state) state.realm_playgrounds = event.realm_playgrounds;
  },
};

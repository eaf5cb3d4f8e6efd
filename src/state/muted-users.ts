import { mutesOfUser } from '../store/muted-users.js';
import type { StateModule } from './types.js';

/** `muted_users` in /register ([{id, timestamp}]); muted_users events carry the whole new list. */
export const mutedUsersModule: StateModule = {
  fetchTypes: ['muted_users'],
  eventTypes: ['muted_users'],
  async fetch({ app, user }) {
    return { muted_users: await mutesOfUser(app.db, user.id) };
  },
  apply(state, event) {
    if (Array.isArray(event.muted_users)) state.muted_users = structuredClone(event.muted_users);
  },
};

import { alertWordsOfUser } from '../store/alert-words.js';
import type { StateModule } from './types.js';

/** `alert_words` in /register; alert_words events carry the whole new list. */
export const alertWordsModule: StateModule = {
  fetchTypes: ['alert_words'],
  eventTypes: ['alert_words'],
  async fetch({ app, user }) {
    return { alert_words: await alertWordsOfUser(app.db, user.id) };
  },
  apply(state, event) {
    if (Array.isArray(event.alert_words)) state.alert_words = [...(event.alert_words as string[])];
  },
};

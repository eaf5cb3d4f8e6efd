import type { StateModule } from './types.js';

/**
 * `attachment` events (issue 15) change no /register key: Zulip's initial
 * state has no uploads list (clients call GET /attachments), and its
 * apply_event passes over them. The module exists so every event type
 * has its branch, as the consistency tests require.
 */
export const attachmentsModule: StateModule = {
  fetchTypes: ['attachments'],
  async fetch() {
    return {};
  },
  eventTypes: ['attachment'],
  apply() {
    /* nothing in /register state follows uploads */
  },
};

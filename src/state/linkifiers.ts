import { realmLinkifierRows } from '../domain/access/linkifiers.js';
import { registerShaper } from '../events/delivery.js';
import { presentLinkifier } from '../presenters/linkifier.js';
import type { StateModule } from './types.js';

/**
 * `realm_linkifiers` in /register, for clients with the
 * linkifier_url_template capability (others get an empty list: they only
 * know the old URL format strings); the legacy `realm_filters` is always an
 * empty list now. Event: realm_linkifiers, only to clients with the
 * capability.
 */
export const linkifiersModule: StateModule = {
  fetchTypes: ['realm_linkifiers', 'realm_filters'],
  eventTypes: ['realm_linkifiers'],
  async fetch({ app, user, want, capabilities }) {
    const out: Record<string, unknown> = {};
    if (want('realm_linkifiers')) {
      out.realm_linkifiers = capabilities.linkifier_url_template ? (await realmLinkifierRows(app.db, user.realmId)).map(presentLinkifier) : [];
    }
    if (want('realm_filters')) out.realm_filters = [];
    return out;
  },
  apply(state, event, view) {
    if (view.capabilities.linkifier_url_template && 'realm_linkifiers' in state) state.realm_linkifiers = event.realm_linkifiers;
  },
};

registerShaper('realm_linkifiers', ({ clean, queue }) => (queue.capabilities.linkifier_url_template ? clean : null));

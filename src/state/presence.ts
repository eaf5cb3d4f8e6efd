import { sharedUserAccess } from './shared.js';
import { presenceResponse, restrictPresences } from '../domain/presence-views.js';
import { registerShaper } from '../events/delivery.js';
import type { ParleyEvent } from '../events/types.js';
import type { StateModule } from './types.js';

/**
 * Presence in /register: `presences` (modern and keyed by user id with
 * slim_presence, else legacy and keyed by API email), `server_timestamp`
 * and `presence_last_update_id`. The server_presence_* intervals come with
 * the realm module.
 *
 * Events: presence. Zulip's own apply re-reads the user's presence; a
 * client can only use the event, which has everything for the legacy form.
 * For the modern form a legacy-shaped event gives the timestamp of the
 * reported status (exact for users coming online, which is when events are
 * sent); simplified_presence_events clients get the modern data itself.
 */

interface LegacyWebsite {
  status: 'active' | 'idle';
  timestamp: number;
}
interface Modern {
  active_timestamp: number;
  idle_timestamp: number;
}

export const presenceModule: StateModule = {
  fetchTypes: ['presence'],
  eventTypes: ['presence'],
  async fetch(ctx) {
    const { app, user, slimPresence, presence } = ctx;
    // presence_last_update_id: only the changes after it (the client keeps what it had); presence_history_limit_days: the window.
    const [r, access] = await Promise.all([
      presenceResponse(app, user.realmId, { slim: slimPresence, lastUpdateId: presence?.lastUpdateId, historyDays: presence?.historyDays }),
      sharedUserAccess(ctx),
    ]);
    return { presences: await restrictPresences(app, user.realmId, r.presences, access), server_timestamp: r.server_timestamp, presence_last_update_id: r.presence_last_update_id };
  },
  apply(state, event, view) {
    const presences = state.presences as Record<string, unknown> | undefined;
    if (!presences) return;
    if (event.presences && typeof event.presences === 'object') {
      // Keyed by user id: only a modern state can take it.
      if (view.slimPresence) Object.assign(presences, event.presences as Record<string, Modern>);
      return;
    }
    const website = (event.presence as { website?: LegacyWebsite } | undefined)?.website;
    if (!website) return;
    if (!view.slimPresence) {
      if (typeof event.email !== 'string') return;
      presences[event.email] = {
        website: { client: 'website', status: website.status, timestamp: website.timestamp, pushable: false },
        aggregated: { client: 'website', status: website.status, timestamp: website.timestamp },
      };
      return;
    }
    const key = String(event.user_id);
    const prev = presences[key] as Modern | undefined;
    presences[key] =
      website.status === 'active'
        ? { active_timestamp: website.timestamp, idle_timestamp: Math.max(website.timestamp, prev?.idle_timestamp ?? 0) }
        : { active_timestamp: prev?.active_timestamp ?? website.timestamp, idle_timestamp: website.timestamp };
  },
};

/**
 * Per-queue forms of a presence event (Zulip's process_presence_event):
 * simplified_presence_events -> {presences: {<id>: modern}}; slim_presence
 * -> without email; others -> the legacy event as emitted.
 */
registerShaper('presence', ({ event, clean, queue, memo }) => {
  if (queue.capabilities.simplified_presence_events && event.__modern) {
    let modern = memo.get('modern') as ParleyEvent | undefined;
    if (!modern) memo.set('modern', (modern = { type: 'presence', presences: { [String(clean.user_id)]: event.__modern } }));
    return modern;
  }
  if (queue.slimPresence && 'email' in clean) {
    let slim = memo.get('slim') as ParleyEvent | undefined;
    if (!slim) {
      const { email: _email, ...rest } = clean;
      memo.set('slim', (slim = rest as ParleyEvent));
    }
    return slim;
  }
  return clean;
});

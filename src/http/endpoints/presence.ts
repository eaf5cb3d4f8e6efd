import { updateUserPresence } from '../../domain/actions/presence.js';
import { badRequest, notForBots } from '../../domain/errors.js';
import { presenceResponse, userPresence } from '../../domain/presence-views.js';
import { statusFromString } from '../../domain/rules/presence.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/**
 * Presence (Zulip's zerver/views/presence.py). Served from memory: no
 * request here reads the database (domain/presence-state.ts).
 */

export const updateOwnPresence = endpoint({
  method: 'POST',
  path: '/users/me/presence',
  auth: 'user',
  guard: ({ user }) => {
    if (user.isBot) throw notForBots();
  },
  params: {
    status: p.str(),
    ping_only: p.bool().default(false),
    new_user_input: p.bool().default(false),
    slim_presence: p.bool().default(false),
    last_update_id: p.int().optional(),
    history_limit_days: p.int().optional(),
  },
  handler: async (ctx, v) => {
    const status = statusFromString(v.status);
    if (status === null) throw badRequest(`Invalid status: ${v.status}`);
    await updateUserPresence(ctx.app, ctx.userRow, status);
    if (v.ping_only) return {};
    // Sending last_update_id is asking for the modern protocol.
    return presenceResponse(ctx.app, ctx.user.realmId, {
      slim: v.slim_presence || v.last_update_id !== undefined,
      lastUpdateId: v.last_update_id,
      historyDays: v.history_limit_days,
    });
  },
});

export const getUserPresence = endpoint({
  method: 'GET',
  path: '/users/:user_id_or_email/presence',
  auth: 'user',
  params: { user_id_or_email: p.pathStr(), slim_presence: p.bool().default(false) },
  handler: async (ctx, v) => ({ presence: await userPresence(ctx.app, ctx.user.realmId, v.user_id_or_email, v.slim_presence) }),
});

/** The legacy format, for bots and other API clients; no presence_last_update_id. */
export const getRealmPresence = endpoint({
  method: 'GET',
  path: '/realm/presence',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    const { presences, server_timestamp } = await presenceResponse(ctx.app, ctx.user.realmId, { slim: false });
    return { presences, server_timestamp };
  },
});

import { ALL, userAccessOf } from '../../domain/access/user-access.js';
import { updateUserPresence } from '../../domain/actions/presence.js';
import { badRequest, notForBots } from '../../domain/errors.js';
import { presenceResponse, presenceResponseJson, restrictPresences, userPresence } from '../../domain/presence-views.js';
import { sendSuccessJson } from '../json-reply.js';
import { statusFromString } from '../../domain/rules/presence.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/**
 * Presence (Zulip's zerver/views/presence.py). Served from memory: no
 * request here reads the database (domain/presence-state.ts).
 */

const PRESENCE_PARAMS = new Set(['status', 'ping_only', 'new_user_input', 'slim_presence', 'last_update_id', 'history_limit_days']);

/** Whether the request has only parameters this endpoint reads (so no ignored_parameters_unsupported to add). */
function onlyKnownParams(req: { body?: unknown; query?: unknown }): boolean {
  for (const src of [req.body, req.query]) {
    if (src && typeof src === 'object') for (const k of Object.keys(src)) if (!PRESENCE_PARAMS.has(k)) return false;
  }
  return true;
}

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
    const synced = await updateUserPresence(ctx.app, ctx.userRow, status);
    if (v.ping_only) return {};
    // Sending last_update_id is asking for the modern protocol.
    const access = await userAccessOf(ctx.app, ctx.user);
    const r = await presenceResponseJson(
      ctx.app,
      ctx.user.realmId,
      { slim: v.slim_presence || v.last_update_id !== undefined, lastUpdateId: v.last_update_id, historyDays: v.history_limit_days },
      // The presence the report was judged against, already up to date with the other processes' (no second look at Redis).
      synced,
    );
    // Everyone's presence is serialized once per change, not once per request.
    if (r.presencesJson !== undefined && access === ALL && onlyKnownParams(ctx.req)) {
      sendSuccessJson(ctx.reply, `"presences":${r.presencesJson},"server_timestamp":${JSON.stringify(r.server_timestamp)},"presence_last_update_id":${r.presence_last_update_id}`);
      return { raw: true };
    }
    return { presences: await restrictPresences(ctx.app, ctx.user.realmId, r.presences, access), server_timestamp: r.server_timestamp, presence_last_update_id: r.presence_last_update_id };
  },
});

export const getUserPresence = endpoint({
  method: 'GET',
  path: '/users/:user_id_or_email/presence',
  auth: 'user',
  params: { user_id_or_email: p.pathStr(), slim_presence: p.bool().default(false) },
  handler: async (ctx, v) => ({ presence: await userPresence(ctx.app, ctx.user.realmId, v.user_id_or_email, v.slim_presence, await userAccessOf(ctx.app, ctx.user)) }),
});

/** The legacy format, for bots and other API clients; no presence_last_update_id. */
export const getRealmPresence = endpoint({
  method: 'GET',
  path: '/realm/presence',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    const [{ presences, server_timestamp }, access] = await Promise.all([presenceResponse(ctx.app, ctx.user.realmId, { slim: false }), userAccessOf(ctx.app, ctx.user)]);
    return { presences: await restrictPresences(ctx.app, ctx.user.realmId, presences, access), server_timestamp };
  },
});

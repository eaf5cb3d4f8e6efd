import type { AppCtx } from './context.js';
import { badRequest } from './errors.js';
import { presenceOf } from './presence-state.js';
import { DEFAULT_PRESENCE_HISTORY_DAYS } from './rules/presence.js';
import { legacyPresence, modernPresence, singleUserLegacyPresence } from '../presenters/presence.js';

/**
 * Presence reads (Zulip's get_presence_response and get_presence_backend),
 * all from memory.
 */

export interface PresenceQuery {
  /** Modern format keyed by user id (slim_presence, or any last_update_id). */
  readonly slim: boolean;
  /** Only entries changed after this update id (the modern polling protocol). */
  readonly lastUpdateId?: number;
  /** Leave out users not connected in this many days (default 14; 0: nobody). */
  readonly historyDays?: number;
}

export interface PresenceResponse {
  presences: Record<string, unknown>;
  server_timestamp: number;
  presence_last_update_id: number;
}

export async function presenceResponse(app: AppCtx, realmId: number, q: PresenceQuery): Promise<PresenceResponse> {
  const state = presenceOf(app);
  await state.ready();
  const dir = await state.directory(realmId);
  const now = state.now();
  const presences: Record<string, unknown> = {};
  let max = -1;
  let found = false;
  if (q.historyDays !== 0) {
    // A client that already holds data gets every newer change, however old the user's last connection.
    const since = q.lastUpdateId !== undefined && q.lastUpdateId > 0 ? -Infinity : now - (q.historyDays ?? DEFAULT_PRESENCE_HISTORY_DAYS) * 86400;
    for (const [userId, e] of state.realm(realmId).entries) {
      if (q.lastUpdateId !== undefined && e.lastUpdateId <= q.lastUpdateId) continue;
      if (e.lastConnected < since) continue;
      const u = dir.byId.get(userId);
      if (!u || !u.isActive || u.isBot) continue;
      if (q.slim) presences[String(userId)] = modernPresence(e, u.dateJoined);
      else presences[u.email] = legacyPresence(e, u.dateJoined);
      if (e.lastUpdateId > max) max = e.lastUpdateId;
      found = true;
    }
  }
  // Nothing new: the client's own id back (-1 when it sent none).
  const last = found ? max : (q.lastUpdateId ?? -1);
  return { presences, server_timestamp: now, presence_last_update_id: last };
}

/** GET /users/{user_id_or_email}/presence. */
export async function userPresence(app: AppCtx, realmId: number, userIdOrEmail: string, slim: boolean): Promise<object> {
  const state = presenceOf(app);
  await state.ready();
  const dir = await state.directory(realmId);
  const target = /^\d{1,15}$/.test(userIdOrEmail) ? dir.byId.get(Number(userIdOrEmail)) : dir.byEmail.get(userIdOrEmail.trim().toLowerCase());
  if (!target || !target.isActive) throw badRequest('No such user');
  if (target.botType !== null) throw badRequest('Presence is not supported for bot users.');
  const entry = state.realm(realmId).entries.get(target.id);
  if (!entry) throw badRequest(`No presence data for ${userIdOrEmail}`);
  return slim ? modernPresence(entry, target.dateJoined) : singleUserLegacyPresence(entry, target.dateJoined, state.now());
}

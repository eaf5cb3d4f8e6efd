import { ALL, type AccessSet } from './access/user-access.js';
import type { AppCtx } from './context.js';
import { badRequest } from './errors.js';
import { presenceOf, type RealmPresence } from './presence-state.js';
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

/**
 * Everyone's presence, as the modern and the legacy clients ask for it when
 * they hold no data yet. Computed once per realm, format and history window
 * and reused, with its JSON, until presence or the users change (or an
 * entry ages out of the window): a realm of 1,000 users answers its
 * terminal clients from one serialization.
 */
interface FullPresence {
  readonly seq: number;
  /** The replica's entries (a process sharing presence through Redis may replace them whole). */
  readonly entries: object;
  readonly dir: object;
  /** The entry that leaves the window first does so at this time. */
  readonly validUntil: number;
  readonly presences: Record<string, unknown>;
  readonly json: string;
  /** Highest update id included (-1: nothing). */
  readonly max: number;
}

const fullCache = new WeakMap<object, Map<string, FullPresence>>();

async function fullPresence(app: AppCtx, realmId: number, realm: RealmPresence, slim: boolean, days: number): Promise<FullPresence> {
  const state = presenceOf(app);
  const dir = await state.directory(realmId);
  const now = state.now();
  let byKey = fullCache.get(state);
  if (!byKey) fullCache.set(state, (byKey = new Map()));
  const key = `${realmId}:${slim ? 'slim' : 'legacy'}:${days}`;
  const hit = byKey.get(key);
  if (hit && hit.seq === realm.seq && hit.entries === realm.entries && hit.dir === dir && now < hit.validUntil) return hit;
  const presences: Record<string, unknown> = {};
  let max = -1;
  let validUntil = Infinity;
  if (days !== 0) {
    const since = now - days * 86400;
    for (const [userId, e] of realm.entries) {
      if (e.lastConnected < since) continue;
      const u = dir.byId.get(userId);
      if (!u || !u.isActive || u.isBot) continue;
      if (slim) presences[String(userId)] = modernPresence(e, u.dateJoined);
      else presences[u.email] = legacyPresence(e, u.dateJoined);
      if (e.lastUpdateId > max) max = e.lastUpdateId;
      validUntil = Math.min(validUntil, e.lastConnected + days * 86400);
    }
  }
  const full: FullPresence = { seq: realm.seq, entries: realm.entries, dir, validUntil, presences, json: JSON.stringify(presences), max };
  byKey.set(key, full);
  return full;
}

export async function presenceResponse(app: AppCtx, realmId: number, q: PresenceQuery): Promise<PresenceResponse> {
  const r = await presenceResponseJson(app, realmId, q);
  // A copy: the computed object is shared with later requests.
  return { presences: { ...r.presences }, server_timestamp: r.server_timestamp, presence_last_update_id: r.presence_last_update_id };
}

/**
 * The same, with the presences' JSON when it was computed (callers may send it as is). `synced`:
 * the realm's presence as this request already brought it up to date (POST /users/me/presence,
 * after storing the report), so that a report costs one round trip to Redis, not two; a report
 * made elsewhere meanwhile is the next answer's, as if it had come a moment later.
 */
export async function presenceResponseJson(app: AppCtx, realmId: number, q: PresenceQuery, synced?: RealmPresence): Promise<PresenceResponse & { presencesJson?: string }> {
  const state = presenceOf(app);
  const realm = synced ?? (await state.current(realmId));
  // Never an id above those this process holds every entry up to (PresenceState.complete): the
  // entries above it are sent again with the next answer, the ones it lacks for the first time.
  const complete = state.complete(realmId);
  const days = q.historyDays ?? DEFAULT_PRESENCE_HISTORY_DAYS;
  // No data held by the client yet: everyone in the window (update ids start at 1).
  if (q.lastUpdateId === undefined || q.lastUpdateId <= 0) {
    const full = await fullPresence(app, realmId, realm, q.slim, days);
    const last = full.max >= 0 ? Math.min(full.max, complete) : (q.lastUpdateId ?? -1);
    return { presences: full.presences, presencesJson: full.json, server_timestamp: state.now(), presence_last_update_id: last };
  }
  // A client with data gets every newer change, however old the user's last connection.
  const dir = await state.directory(realmId);
  const presences: Record<string, unknown> = {};
  let max = -1;
  if (days !== 0) {
    for (const [userId, e] of realm.entries) {
      if (e.lastUpdateId <= q.lastUpdateId) continue;
      const u = dir.byId.get(userId);
      if (!u || !u.isActive || u.isBot) continue;
      if (q.slim) presences[String(userId)] = modernPresence(e, u.dateJoined);
      else presences[u.email] = legacyPresence(e, u.dateJoined);
      if (e.lastUpdateId > max) max = e.lastUpdateId;
    }
  }
  // Nothing new: the client's own id back (nor ever less).
  return { presences, server_timestamp: state.now(), presence_last_update_id: max >= 0 ? Math.max(q.lastUpdateId, Math.min(max, complete)) : q.lastUpdateId };
}

/** GET /users/{user_id_or_email}/presence. */
/**
 * Restricted guests see the presence of the users they can access only
 * (Zulip does this when CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE is on;
 * Parley always does, since presence names users). Keys are user ids
 * (modern form) or API emails (legacy form).
 */
export async function restrictPresences(app: AppCtx, realmId: number, presences: Record<string, unknown>, access: AccessSet): Promise<Record<string, unknown>> {
  if (access === ALL) return presences;
  const dir = await presenceOf(app).directory(realmId);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(presences)) {
    const id = /^\d+$/.test(k) ? Number(k) : dir.byEmail.get(k.toLowerCase())?.id;
    if (id !== undefined && access.has(id)) out[k] = v;
  }
  return out;
}

export async function userPresence(app: AppCtx, realmId: number, userIdOrEmail: string, slim: boolean, access: AccessSet = ALL): Promise<object> {
  const state = presenceOf(app);
  const realm = await state.current(realmId);
  const dir = await state.directory(realmId);
  const target = /^\d{1,15}$/.test(userIdOrEmail) ? dir.byId.get(Number(userIdOrEmail)) : dir.byEmail.get(userIdOrEmail.trim().toLowerCase());
  if (!target || !target.isActive) throw badRequest('No such user');
  // Zulip's get_presence_backend: a user the caller cannot access is "No such user".
  if (access !== ALL && target.botType === null && !access.has(target.id)) throw badRequest('No such user');
  if (target.botType !== null) throw badRequest('Presence is not supported for bot users.');
  const entry = realm.entries.get(target.id);
  if (!entry) throw badRequest(`No presence data for ${userIdOrEmail}`);
  return slim ? modernPresence(entry, target.dateJoined) : singleUserLegacyPresence(entry, target.dateJoined, state.now());
}

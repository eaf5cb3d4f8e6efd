import type { AppCtx } from '../context.js';
import { presenceOf, type PresenceState, type RealmPresence } from '../presence-state.js';
import {
  applyPresenceReport,
  PRESENCE_DISABLED_BACKDATE_SECS,
  USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS,
  type PresenceEntry,
  type PresenceStatus,
} from '../rules/presence.js';
import { userSettings } from '../rules/user-settings.js';
import { legacyClientPresence, modernPresence } from '../../presenters/presence.js';
import type { UserRow } from '../../store/users.js';

/**
 * Presence updates (Zulip's zerver/actions/presence.py). Presence lives in
 * memory (domain/presence-state.ts) and is written through in batches, so
 * an update is not a database transaction: the state changes, then the
 * event (if any) is published. Nothing here reads the database once the
 * state and the realm's user directory are loaded.
 *
 * Event, to every active user of the realm, only when the user is new to
 * presence or comes back online (and, unless forced, only in realms of at
 * most 100 active users, where the immediate update is worth its cost):
 *   {type: 'presence', user_id, email, server_timestamp,
 *    presence: {website: {client: 'website', status, timestamp, pushable: false}}}
 * It carries the modern form in the `__modern` hint; state/presence.ts
 * shapes it per queue (slim_presence drops email; simplified_presence_events
 * gets {type: 'presence', presences: {<user_id>: {active_timestamp, idle_timestamp}}}).
 */

async function sendPresenceChanged(app: AppCtx, state: PresenceState, realmId: number, userId: number, entry: PresenceEntry, force: boolean): Promise<void> {
  const dir = await state.directory(realmId);
  const user = dir.byId.get(userId);
  if (!user) return;
  if (dir.activeIds.length > USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS && !force) return;
  const event = {
    type: 'presence',
    user_id: userId,
    email: user.email,
    server_timestamp: state.now(),
    presence: { website: legacyClientPresence(entry, user.dateJoined) },
    __modern: modernPresence(entry, user.dateJoined),
  };
  await app.bus.publish([{ realmId, event, userIds: dir.activeIds }]);
}

/**
 * Zulip's do_update_user_presence: records a report and sends the event it calls for. Returns the
 * realm's presence as this process holds it after the report: with Redis, brought up to date
 * with the other processes' reports just before this one.
 */
export async function doUpdateUserPresence(
  app: AppCtx,
  realmId: number,
  userId: number,
  status: PresenceStatus,
  logTime: number,
  opts: { force?: boolean } = {},
): Promise<RealmPresence> {
  const state = presenceOf(app);
  const realm = await state.current(realmId);
  const change = applyPresenceReport(realm.entries.get(userId), status, logTime);
  if (change.changed) await state.put(realmId, userId, change.entry);
  if (opts.force || change.created || change.becameOnline) {
    await sendPresenceChanged(app, state, realmId, userId, change.entry, opts.force === true);
  }
  // Not `realm`: a put that found Redis emptied reseeds it, and the replica is then a new object.
  return state.realm(realmId);
}

/**
 * POST /users/me/presence: users who turned presence sharing off report nothing (undefined). The
 * realm's presence after the report otherwise, for the answer (presenceResponseJson's `synced`).
 */
export async function updateUserPresence(app: AppCtx, user: UserRow, status: PresenceStatus): Promise<RealmPresence | undefined> {
  if (userSettings(user.settings).presence_enabled === false) return undefined;
  const state = presenceOf(app);
  return doUpdateUserPresence(app, user.realm_id, user.id, status, Math.floor(state.now()));
}

/**
 * The presence_enabled setting changed (call after its transaction
 * commits): everyone sees the new state at once. Turning it on reports the
 * user active now; turning it off replaces their presence with one that
 * looks offline since a little before now.
 */
export async function presenceEnabledChanged(app: AppCtx, user: Pick<UserRow, 'id' | 'realm_id'>, enabled: boolean): Promise<void> {
  const state = presenceOf(app);
  const realm = await state.current(user.realm_id);
  const now = Math.floor(state.now());
  if (enabled) {
    await doUpdateUserPresence(app, user.realm_id, user.id, 'active', now, { force: true });
    return;
  }
  // As Zulip does (zerver/actions/user_settings.py, checked): drop the user's
  // presence and report them idle, backdated past the offline threshold. A user
  // with no earlier activity then shows active_timestamp = date_joined.
  realm.entries.delete(user.id);
  await doUpdateUserPresence(app, user.realm_id, user.id, 'idle', now - PRESENCE_DISABLED_BACKDATE_SECS, { force: true });
}

import { fakeEmailDomain } from '../../config.js';
import type { AppCtx, Tx } from '../context.js';
import { presentUser } from '../../presenters/user.js';
import { profileDataByUser } from '../../store/profile-fields.js';
import { accessSets, ALL, INACCESSIBLE_USER_NAME, realmRestrictionIn, restrictingGroupId, type AccessSet } from './user-access.js';
import { peekRealm } from '../realm-row-cache.js';
import type { ParleyEvent } from '../../events/types.js';
import { presenceOf } from '../presence-state.js';
import { presenceResponse } from '../presence-views.js';
import { legacyClientPresence, modernPresence } from '../../presenters/presence.js';
import { presentUserStatus } from '../../presenters/user-status.js';
import { userSettings } from '../rules/user-settings.js';

/**
 * Keeping restricted guests' user lists correct as access changes: when a
 * subscription, a direct message or can_access_all_users_group changes who a
 * guest can access, the guest gets (Zulip: send_user_creation_events_on_adding_subscriptions,
 * send_user_remove_events_on_removing_subscriptions, get_recipients_for_user_creation_events):
 *
 * - realm_user add with the full person for each user that became accessible
 *   (it replaces the "Unknown user" placeholder a client may hold);
 * - realm_user remove {user_id, full_name: "Unknown user"} for each user that
 *   became inaccessible (clients without user_list_incomplete then show the placeholder).
 *
 * Usage: snapshot = await accessBefore(tx, realmId) before the writes, then
 * await emitAccessChanges(app, tx, realmId, snapshot) after them. In realms
 * without the restriction both are a single cheap read of the realm's settings.
 */
export interface AccessSnapshot {
  readonly restricted: boolean;
  readonly sets: ReadonlyMap<number, AccessSet>;
  /** The action does not change can_access_all_users_group: an unrestricted realm stays so. */
  readonly settingFixed: boolean;
}

/**
 * The guests' access before an action's writes. With `app`, the action does
 * not touch the setting, and a current cached realm row that shows no
 * restriction answers without any statement (members' everyday writes pay nothing).
 */
export async function accessBefore(tx: Tx, realmId: number, app?: AppCtx): Promise<AccessSnapshot> {
  const cached = app ? peekRealm(app, realmId) : undefined;
  const groupId = cached ? restrictingGroupId(cached.settings) : await realmRestrictionIn(tx.db, realmId);
  if (groupId === null) return { restricted: false, sets: new Map(), settingFixed: app !== undefined };
  return { restricted: true, sets: await accessSets(tx.db, realmId, groupId, 'all'), settingFixed: app !== undefined };
}

/** Emits the add/remove events for every guest whose access set changed since `before`. */
export async function emitAccessChanges(app: AppCtx, tx: Tx, realmId: number, before: AccessSnapshot): Promise<void> {
  if (!before.restricted && before.settingFixed) return;
  const after = await accessBefore(tx, realmId);
  if (!before.restricted && !after.restricted) return;
  // The guests before or after the action (a role change to or from guest
  // moves a user between ALL and a set), active after it. Every active guest
  // has an entry in a restricted snapshot; no entry means "not a guest": ALL.
  const candidates = [...new Set([...before.sets.keys(), ...after.sets.keys()])];
  if (candidates.length === 0) return;
  const guests = await tx.db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', realmId).where('is_active', '=', 1).where('id', 'in', candidates).orderBy('id').execute();
  let everyone: number[] | undefined;
  const all = async (): Promise<number[]> => {
    everyone ??= (await tx.db.selectFrom('users').select('id').where('realm_id', '=', realmId).execute()).map((r) => r.id);
    return everyone;
  };
  const changes: { guest: number; role: number; added: number[]; removed: number[] }[] = [];
  for (const g of guests) {
    const b = before.restricted ? (before.sets.get(g.id) ?? ALL) : ALL;
    const a = after.restricted ? (after.sets.get(g.id) ?? ALL) : ALL;
    if (b === ALL && a === ALL) continue;
    const bIds = b === ALL ? await all() : [...b];
    const aIds = a === ALL ? await all() : [...a];
    const bSet = new Set(bIds);
    const aSet = new Set(aIds);
    const added = aIds.filter((id) => !bSet.has(id) && id !== g.id);
    const removed = bIds.filter((id) => !aSet.has(id) && id !== g.id);
    if (added.length || removed.length) changes.push({ guest: g.id, role: g.role, added, removed });
  }
  if (changes.length === 0) return;
  const addedIds = [...new Set(changes.flatMap((c) => c.added))];
  const [rows, profiles] = await Promise.all([
    addedIds.length ? tx.db.selectFrom('users').selectAll().where('id', 'in', addedIds).execute() : Promise.resolve([]),
    profileDataByUser(tx.db, realmId, addedIds),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const domain = fakeEmailDomain(app.config);
  const statuses = await statusEvents(tx, realmId, addedIds);
  for (const c of changes) {
    const view = { viewerId: c.guest, viewerRole: c.role, fakeEmailDomain: domain, clientGravatar: false, includeCustomProfileFields: true, profileData: profiles };
    for (const id of c.added.sort((x, y) => x - y)) {
      const row = byId.get(id);
      if (!row || row.realm_id !== realmId) continue;
      tx.emit(realmId, { type: 'realm_user', op: 'add', person: presentUser(row, view), __access_checked: true }, [c.guest]);
      for (const e of statuses.get(id) ?? []) tx.emit(realmId, e, [c.guest]);
    }
    for (const id of c.removed.sort((x, y) => x - y)) {
      tx.emit(realmId, { type: 'realm_user', op: 'remove', person: { user_id: id, full_name: INACCESSIBLE_USER_NAME } }, [c.guest]);
    }
  }
  // Presence is read from memory and the presence directory (a statement of its own, not
  // inside this transaction: SQLite has one connection), so after the commit; the events
  // still go out with this action's, after the adds.
  const gained = changes.filter((c) => c.added.length > 0);
  if (gained.length) tx.afterCommit(async () => {
    for (const ev of await presenceEvents(app, realmId, gained)) tx.emit(realmId, ev.event, [ev.to]);
  });
}

/**
 * Runs an action and sends the access changes it causes: deactivating a
 * user takes it from the guests who could access it only as a channel
 * co-subscriber (Zulip's send_events_for_user_deactivation sends them
 * realm_user remove); reactivating gives it back (a full add: Parley's
 * clients hold a placeholder, where Zulip sends only the is_active update).
 */
export async function withAccessChanges<T>(app: AppCtx, tx: Tx, realmId: number, action: () => Promise<T>): Promise<T> {
  const before = await accessBefore(tx, realmId, app);
  const result = await action();
  await emitAccessChanges(app, tx, realmId, before);
  return result;
}

/**
 * A restricted guest sees the presence and status of accessible users only
 * (state/presence.ts, state/profiles.ts), so a user who becomes accessible
 * comes with them: after its add, a user_status event with its whole status
 * (when it has one) and a presence event (when a fresh /register would list
 * the user's presence). Zulip limits presence only with
 * CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE and sends neither; Parley always
 * limits both, and these events keep a client's state equal to a fresh /register.
 * Cost: one statement (the statuses) when some user became accessible.
 */
async function statusEvents(tx: Tx, realmId: number, userIds: readonly number[]): Promise<Map<number, ParleyEvent[]>> {
  const out = new Map<number, ParleyEvent[]>();
  if (userIds.length === 0) return out;
  const rows = await tx.db
    .selectFrom('user_statuses as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.user_id', 's.status_text', 's.emoji_name', 's.emoji_code', 's.reaction_type', 'u.settings'])
    .where('s.realm_id', '=', realmId)
    .where('u.is_active', '=', 1)
    .where('s.user_id', 'in', [...userIds])
    .execute();
  for (const r of rows) {
    const status = presentUserStatus(r, userSettings(r.settings).presence_enabled !== false);
    if (Object.keys(status).length) out.set(r.user_id, [{ type: 'user_status', user_id: r.user_id, ...status, __access_checked: true }]);
  }
  return out;
}

async function presenceEvents(app: AppCtx, realmId: number, changes: readonly { guest: number; added: readonly number[] }[]): Promise<{ to: number; event: ParleyEvent }[]> {
  const state = presenceOf(app);
  await state.ready();
  const [dir, listed] = await Promise.all([state.directory(realmId), presenceResponse(app, realmId, { slim: true })]);
  const entries = state.realm(realmId).entries;
  const out: { to: number; event: ParleyEvent }[] = [];
  for (const c of changes) {
    for (const id of c.added) {
      const u = dir.byId.get(id);
      const entry = entries.get(id);
      if (!u || !entry || listed.presences[String(id)] === undefined) continue;
      out.push({
        to: c.guest,
        event: {
          type: 'presence',
          user_id: id,
          email: u.email,
          server_timestamp: state.now(),
          presence: { website: legacyClientPresence(entry, u.dateJoined) },
          __modern: modernPresence(entry, u.dateJoined),
          __access_checked: true,
        },
      });
    }
  }
  return out;
}

import { fakeEmailDomain } from '../../config.js';
import type { AppCtx, Tx } from '../context.js';
import { presentUser } from '../../presenters/user.js';
import { profileDataByUser } from '../../store/profile-fields.js';
import { accessSets, ALL, INACCESSIBLE_USER_NAME, realmRestrictionIn, restrictingGroupId, type AccessSet } from './user-access.js';
import { peekRealm } from '../realm-row-cache.js';

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
  for (const c of changes) {
    const view = { viewerId: c.guest, viewerRole: c.role, fakeEmailDomain: domain, clientGravatar: false, includeCustomProfileFields: true, profileData: profiles };
    for (const id of c.added.sort((x, y) => x - y)) {
      const row = byId.get(id);
      if (!row || row.realm_id !== realmId) continue;
      tx.emit(realmId, { type: 'realm_user', op: 'add', person: presentUser(row, view), __access_checked: true }, [c.guest]);
    }
    for (const id of c.removed.sort((x, y) => x - y)) {
      tx.emit(realmId, { type: 'realm_user', op: 'remove', person: { user_id: id, full_name: INACCESSIBLE_USER_NAME } }, [c.guest]);
    }
  }
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

import { fakeEmailDomain } from '../../config.js';
import type { EventBus } from '../../events/bus.js';
import type { EventDelivery, ParleyEvent } from '../../events/types.js';
import { dummyEmail, presentInaccessibleUser } from '../../presenters/user.js';
import type { AppCtx } from '../context.js';
import { accessSets, ALL, INACCESSIBLE_USER_AVATAR, INACCESSIBLE_USER_NAME, realmRestriction, type AccessSet } from './user-access.js';

/**
 * Restricted user access applied to events, in one place: every batch of
 * committed events passes through here on its way to the bus (app.ts wraps
 * the bus). An event is "about" a user when it is that user's realm_user
 * add/update, presence, user_status or typing, or a message that user sent.
 * Guests who cannot access that user (Zulip: get_user_ids_who_can_access_user,
 * the message event's sender placeholder, the inaccessible-user stub of
 * realm_user add in zerver/actions/create_user.py):
 *
 * - realm_user add: get the placeholder instead, with `inaccessible_user: true`
 *   (not delivered to clients with user_list_incomplete);
 * - realm_user update, presence, user_status, typing: get nothing;
 * - reaction: get it with the legacy `user` object as the placeholder
 *   (name "Unknown user", dummy email);
 * - message: get it with sender_full_name "Unknown user", the dummy
 *   sender_email and the placeholder avatar.
 *
 * Cost: nothing when no event is about a user or the realm is not restricted
 * (the realm row is cached); otherwise one statement for every guest's access set.
 * Events whose emitter already decided access carry `__access_checked`.
 */

function aboutUser(e: ParleyEvent): number | undefined {
  if (e.__access_checked === true) return undefined;
  switch (e.type) {
    case 'realm_user':
      return e.op === 'add' || e.op === 'update' ? ((e.person as { user_id?: number } | undefined)?.user_id ?? undefined) : undefined;
    case 'presence':
    case 'user_status':
      return typeof e.user_id === 'number' ? e.user_id : undefined;
    case 'typing':
      return (e.sender as { user_id?: number } | undefined)?.user_id;
    case 'message':
      return (e.message as { sender_id?: number } | undefined)?.sender_id;
    case 'reaction':
      return typeof e.user_id === 'number' ? e.user_id : undefined;
    default:
      return undefined;
  }
}

/** An event only for the guests who cannot access this user (`__blind_to`), e.g. group exits of a deactivated user. */
const blindTo = (e: ParleyEvent): number | undefined => (typeof e.__blind_to === 'number' ? e.__blind_to : undefined);

export async function restrictDeliveries(app: AppCtx, deliveries: readonly EventDelivery[]): Promise<readonly EventDelivery[]> {
  const realms = new Set<number>();
  for (const d of deliveries) if (aboutUser(d.event) !== undefined || blindTo(d.event) !== undefined) realms.add(d.realmId);
  if (realms.size === 0) return deliveries;
  const setsByRealm = new Map<number, Map<number, AccessSet>>();
  for (const realmId of realms) {
    const groupId = await realmRestriction(app, realmId);
    if (groupId !== null) setsByRealm.set(realmId, await accessSets(app.db, realmId, groupId, 'all'));
  }
  if (setsByRealm.size === 0) return deliveries.filter((d) => blindTo(d.event) === undefined);
  const domain = fakeEmailDomain(app.config);
  const out: EventDelivery[] = [];
  for (const d of deliveries) {
    const sets = setsByRealm.get(d.realmId);
    const only = blindTo(d.event);
    if (only !== undefined) {
      const blindOnes = sets ? d.userIds.filter((id) => {
        const s = sets.get(id);
        return s !== undefined && s !== ALL && !s.has(only);
      }) : [];
      if (blindOnes.length) out.push({ ...d, userIds: blindOnes });
      continue;
    }
    const about = aboutUser(d.event);
    if (about === undefined || !sets) {
      out.push(d);
      continue;
    }
    // Only guests have sets; theirs hold themselves and the realm's bots too.
    const blind = d.userIds.filter((id) => {
      const s = sets.get(id);
      return s !== undefined && s !== ALL && !s.has(about);
    });
    if (blind.length === 0) {
      out.push(d);
      continue;
    }
    const seeing = d.userIds.filter((id) => !blind.includes(id));
    if (seeing.length) out.push({ ...d, userIds: seeing });
    const e = d.event;
    if (e.type === 'realm_user' && e.op === 'add') {
      out.push({
        realmId: d.realmId,
        event: { type: 'realm_user', op: 'add', person: presentInaccessibleUser(about, domain), inaccessible_user: true, __inaccessible_user: true },
        userIds: blind,
      });
    } else if (e.type === 'reaction') {
      // The reaction itself (user ids only in the modern API) still counts; the legacy `user` object is the placeholder.
      out.push({ ...d, event: { ...e, user: { user_id: about, email: dummyEmail(about, domain), full_name: INACCESSIBLE_USER_NAME } }, userIds: blind });
    } else if (e.type === 'message') {
      out.push({
        ...d,
        event: { ...e, __unknown_sender: { sender_full_name: INACCESSIBLE_USER_NAME, sender_email: dummyEmail(about, domain), avatar_url: INACCESSIBLE_USER_AVATAR } },
        userIds: blind,
      });
    }
  }
  return out;
}

/** The bus with restrictDeliveries in front of publish (the composition root wraps the real bus). */
export function withUserAccess(bus: EventBus, app: () => AppCtx): EventBus {
  return {
    publish: async (deliveries) => bus.publish(await restrictDeliveries(app(), deliveries)),
    subscribe: (l) => bus.subscribe(l),
    close: () => bus.close(),
  };
}

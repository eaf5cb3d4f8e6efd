import { sql } from 'kysely';
import type { AppCtx, Caller, TxDb } from '../context.js';
import type { Db } from '../../store/db.js';
import { realmOf } from '../realm-row-cache.js';
import { FLAG_PRIVATE } from '../rules/message-flags.js';
import { ROLE_GUEST } from '../rules/users.js';

type AnyDb = Db | TxDb;

/**
 * Restricted user access: who a guest may see of the user directory when
 * the organization restricts it (the realm setting can_access_all_users_group,
 * "who can view all other users").
 *
 * THE RULE (read in Zulip's zerver/lib/users.py: user_access_restricted_in_realm,
 * check_user_can_access_all_users, check_can_access_user, get_inaccessible_user_ids,
 * get_accessible_user_ids, get_subscribers_of_target_user_subscriptions,
 * get_users_involved_in_dms_with_target_users; zerver/lib/user_groups.py for
 * the recursive group membership):
 *
 * - Nothing is restricted while can_access_all_users_group is the
 *   role:everyone system group (the default).
 * - Only guests are ever restricted: every other role can access everyone
 *   (check_user_can_access_all_users returns True for non-guests without
 *   looking at the group). A guest who is a member of the group, directly or
 *   through subgroups at any depth, can access everyone too.
 * - Bots are always accessible (user_access_restricted_in_realm is False for
 *   a bot target), and so is the guest's own account.
 * - Otherwise a guest can access exactly:
 *   * the active users subscribed (active subscription) to a channel the
 *     guest is actively subscribed to;
 *   * every participant of a direct-message conversation (one-on-one or group)
 *     the guest takes part in and that has a message, deactivated users included.
 *
 * Everything is computed by ONE statement (accessSets below) per request:
 * the recursive membership test of the setting's group and the union of the
 * co-subscribers and direct-message conversations, for one guest or for every
 * guest of the realm (event delivery). Members and admins, and guests of
 * realms without the restriction, cost no statement at all: the setting is
 * read from the cached realm row.
 */

/** The placeholder Zulip shows for a user one cannot access (UserProfile.INACCESSIBLE_USER_NAME). */
export const INACCESSIBLE_USER_NAME = 'Unknown user';
/** Zulip's get_avatar_for_inaccessible_user: a static placeholder image. */
export const INACCESSIBLE_USER_AVATAR = '/static/images/unknown-user-avatar.png';

/** Everyone is accessible. */
export const ALL = 'all' as const;
/** The users a guest can access: self, the realm's bots, co-subscribers and DM partners. */
export type AccessSet = typeof ALL | ReadonlySet<number>;

export const canAccessUser = (access: AccessSet, user: { id: number; is_bot: number | boolean }): boolean =>
  access === ALL || user.is_bot === 1 || user.is_bot === true || access.has(user.id);

/** The group id of can_access_all_users_group when it restricts anything, else null (settings JSON of the realm row). */
export function restrictingGroupId(settingsJson: string): number | null {
  // The setting is stored only once an admin changes it; absent means role:everyone.
  if (!settingsJson.includes('can_access_all_users_group')) return null;
  const v = (JSON.parse(settingsJson) as Record<string, unknown>).can_access_all_users_group;
  return typeof v === 'number' ? v : null;
}

/** The realm's restricting group (null: unrestricted), read from the cached realm row (no statement when warm). */
export async function realmRestriction(app: AppCtx, realmId: number): Promise<number | null> {
  return restrictingGroupId((await realmOf(app, realmId)).settings);
}

/** Same, read inside a transaction (the cached row may be older than the transaction's writes). */
export async function realmRestrictionIn(db: AnyDb, realmId: number): Promise<number | null> {
  const row = await db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirst();
  return row ? restrictingGroupId(row.settings) : null;
}

/** Participants of a direct-message conversation from its dm_key ("1,5,9"). */
const dmParticipants = (key: string): number[] => key.split(',').map(Number);

/**
 * The access sets of guests of a realm whose can_access_all_users_group is
 * groupId: for the given guest ids, or for every active guest when 'all'.
 * One statement, whatever the number of users, channels and conversations.
 * The everyone group needs no special case: every user is a member of it.
 */
export async function accessSets(db: AnyDb, realmId: number, groupId: number, guests: readonly number[] | 'all'): Promise<Map<number, AccessSet>> {
  if (guests !== 'all' && guests.length === 0) return new Map();
  const guestFilter =
    guests === 'all'
      ? sql`SELECT id FROM users WHERE realm_id = ${realmId} AND role = ${ROLE_GUEST} AND is_active = 1`
      : sql`SELECT id FROM users WHERE realm_id = ${realmId} AND role = ${ROLE_GUEST} AND id IN (${sql.join([...guests])})`;
  const rows = await sql<{ guest_id: number; kind: string; user_id: number | null; dm_key: string | null }>`
    WITH RECURSIVE reach(id) AS (
      SELECT CAST(${groupId} AS integer)
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    ), g(id) AS (${guestFilter})
    SELECT DISTINCT m.user_id AS guest_id, 'all' AS kind, CAST(NULL AS integer) AS user_id, CAST(NULL AS text) AS dm_key
      FROM user_group_members m WHERE m.user_id IN (SELECT id FROM g) AND m.group_id IN (SELECT id FROM reach)
    UNION ALL
    SELECT id AS guest_id, 'self' AS kind, id AS user_id, CAST(NULL AS text) AS dm_key FROM g
    UNION ALL
    SELECT 0 AS guest_id, 'bot' AS kind, id AS user_id, CAST(NULL AS text) AS dm_key FROM users WHERE realm_id = ${realmId} AND is_bot = 1
    UNION ALL
    SELECT DISTINCT s1.user_id AS guest_id, 'sub' AS kind, s2.user_id AS user_id, CAST(NULL AS text) AS dm_key
      FROM subscriptions s1
      JOIN subscriptions s2 ON s2.channel_id = s1.channel_id AND s2.active = 1
      JOIN users u ON u.id = s2.user_id AND u.is_active = 1 AND u.is_bot = 0
      WHERE s1.user_id IN (SELECT id FROM g) AND s1.active = 1
    UNION ALL
    SELECT DISTINCT um.user_id AS guest_id, 'dm' AS kind, CAST(NULL AS integer) AS user_id, msg.dm_key AS dm_key
      FROM user_messages um JOIN messages msg ON msg.id = um.message_id
      WHERE um.user_id IN (SELECT id FROM g) AND (um.flags & ${sql.lit(FLAG_PRIVATE)}) <> 0 AND msg.dm_key IS NOT NULL`.execute(db);
  const sets = new Map<number, Set<number> | typeof ALL>();
  const bots: number[] = [];
  for (const r of rows.rows) {
    const guest = Number(r.guest_id);
    if (r.kind === 'bot') {
      bots.push(Number(r.user_id));
      continue;
    }
    if (r.kind === 'all') {
      sets.set(guest, ALL);
      continue;
    }
    let s = sets.get(guest);
    if (s === ALL) continue;
    if (!s) sets.set(guest, (s = new Set()));
    if (r.kind === 'dm') for (const id of dmParticipants(r.dm_key!)) s.add(id);
    else s.add(Number(r.user_id));
  }
  // Bots are accessible to everyone: each set holds them, so a set answers for any user id.
  for (const s of sets.values()) if (s !== ALL) for (const b of bots) s.add(b);
  return sets;
}

/**
 * What the caller can access. Non-guests and guests of unrestricted realms:
 * ALL without any statement; a restricted guest: one statement. (Not memoized
 * on the Caller: the HTTP layer reuses Caller objects across requests. A
 * request computes it once: /register shares it between its modules, see
 * state/shared.ts sharedUserAccess.)
 */
export async function userAccessOf(app: AppCtx, caller: Caller): Promise<AccessSet> {
  if (caller.role !== ROLE_GUEST) return ALL;
  const groupId = await realmRestriction(app, caller.realmId);
  if (groupId === null) return ALL;
  return (await accessSets(app.db, caller.realmId, groupId, [caller.id])).get(caller.id) ?? new Set([caller.id]);
}

/** Same inside a transaction (reads the setting and the sets through it). */
export async function userAccessIn(db: AnyDb, caller: { id: number; realmId: number; role: number }): Promise<AccessSet> {
  if (caller.role !== ROLE_GUEST) return ALL;
  const groupId = await realmRestrictionIn(db, caller.realmId);
  if (groupId === null) return ALL;
  return (await accessSets(db, caller.realmId, groupId, [caller.id])).get(caller.id) ?? new Set([caller.id]);
}

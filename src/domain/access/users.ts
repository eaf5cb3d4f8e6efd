import type { AppCtx, Caller } from '../context.js';
import { badRequest, insufficientPermission } from '../errors.js';
import { fakeEmailDomain } from '../../config.js';
import { emailVisibility } from '../../presenters/user.js';
import { userByEmail, userById, type UserRow } from '../../store/users.js';
import { isAdminRole, visibilitiesSeenBy } from '../rules/users.js';
import { isPossibleId } from '../rules/ids.js';
import { canAccessUser, userAccessOf } from './user-access.js';

export interface AccessOpts {
  readonly allowDeactivated?: boolean;
  readonly allowBots?: boolean;
  /** The caller must be allowed to administer the target (admin, or the bot's owner). */
  readonly forAdmin?: boolean;
}

/** Zulip's can_admin_user: realm admins, and the owner of a bot for that bot. */
export const canAdminUser = (caller: Caller, target: UserRow): boolean =>
  target.bot_owner_id === caller.id || isAdminRole(caller.role);

function check(caller: Caller, target: UserRow | undefined, opts: AccessOpts): UserRow {
  if (!target || target.realm_id !== caller.realmId) throw badRequest('No such user');
  if (target.is_bot && !opts.allowBots) throw badRequest('No such user');
  if (!target.is_active && !opts.allowDeactivated) throw badRequest('User is deactivated');
  if (opts.forAdmin && !canAdminUser(caller, target)) throw insufficientPermission();
  return target;
}

/**
 * Zulip's access_user_common: reading a user (not administering it) also
 * needs access to it under can_access_all_users_group ("Insufficient
 * permission" for a restricted guest); free for everyone else.
 */
async function checkAccess(app: AppCtx, caller: Caller, target: UserRow, opts: AccessOpts): Promise<UserRow> {
  if (!opts.forAdmin && !canAccessUser(await userAccessOf(app, caller), target)) throw insufficientPermission();
  return target;
}

export async function accessUserById(app: AppCtx, caller: Caller, id: number, opts: AccessOpts = {}): Promise<UserRow> {
  if (!isPossibleId(id)) throw badRequest('No such user');
  return checkAccess(app, caller, check(caller, await userById(app.db, caller.realmId, id), opts), opts);
}

/**
 * Lookup by email as Zulip's access_user_by_email does it: the dummy
 * user{id}@{domain} form finds anyone; a real address finds only users whose
 * email_address_visibility lets this caller see it. Unknown and hidden give the same error.
 */
export async function accessUserByEmail(app: AppCtx, caller: Caller, email: string, opts: AccessOpts = {}): Promise<UserRow> {
  const domain = fakeEmailDomain(app.config).toLowerCase();
  const m = /^user(\d{1,15})@(.+)$/i.exec(email.trim());
  if (m && m[2]!.toLowerCase() === domain) {
    const id = Number(m[1]);
    if (!isPossibleId(id)) throw badRequest('No such user');
    return checkAccess(app, caller, check(caller, await userById(app.db, caller.realmId, id), opts), opts);
  }
  const target = await userByEmail(app.db, caller.realmId, email);
  // The visibility filter is by role only, as in Zulip (it applies to one's own address too).
  if (target && !target.is_bot && !visibilitiesSeenBy(caller.role).includes(emailVisibility(target))) {
    throw badRequest('No such user');
  }
  return checkAccess(app, caller, check(caller, target, opts), opts);
}

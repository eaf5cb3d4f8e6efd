import { isPossibleId } from '../../domain/rules/ids.js';
import { z } from 'zod';
import { fakeEmailDomain } from '../../config.js';
import { accessUserByEmail, accessUserById } from '../../domain/access/users.js';
import {
  doChangeFullName,
  doChangeRole,
  doCreateUser,
  doDeactivateUser,
  doReactivateUser,
  doRegenerateApiKey,
} from '../../domain/actions/users.js';
import { transact, type AppCtx } from '../../domain/context.js';
import { adminRequired, badRequest, JsonableError, notForBots, notForGuests, ownerRequired } from '../../domain/errors.js';
import { hashPassword, isStrongPassword } from '../../domain/rules/credentials.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import {
  checkFullName,
  emailDomain,
  isAdminRole,
  isDisposableEmailDomain,
  isValidEmail,
  ROLE_GUEST,
  ROLE_OWNER,
  ROLES,
} from '../../domain/rules/users.js';
import { presentInaccessibleUser, presentUser } from '../../presenters/user.js';
import { canAccessUser, userAccessOf } from '../../domain/access/user-access.js';
import { accessBefore, emitAccessChanges, withAccessChanges } from '../../domain/access/user-access-events.js';
import { realmById } from '../../store/realms.js';
import { countActiveHumanOwners, userByEmail, userById, usersInRealm, type UserRow } from '../../store/users.js';
import { endpoint, SerializedFields, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';
import { maxMessageIdForUser, maxMessageIdNow, realmDomains } from '../../state/user-extras.js';
import { profileDataByUser } from '../../store/profile-fields.js';
import { cachedOwnProfileData, ownProfileData } from '../../domain/access/profile-data.js';
import { adminProfileDataSchema, checkAdminProfileData } from './profile-fields.js';

export const requireAdmin = ({ user }: AuthedCtx): void => {
  if (!isAdminRole(user.role)) throw adminRequired();
};
/** Zulip's require_member_or_admin: guests, then bots, are refused. */
export const requireMemberOrAdmin = ({ user }: AuthedCtx): void => {
  if (user.role === ROLE_GUEST) throw notForGuests();
  if (user.isBot) throw notForBots();
};

async function view(ctx: AuthedCtx, clientGravatar: boolean, includeCustomProfileFields: boolean, userIds?: readonly number[]) {
  return {
    viewerId: ctx.user.id,
    viewerRole: ctx.user.role,
    fakeEmailDomain: fakeEmailDomain(ctx.app.config),
    clientGravatar,
    includeCustomProfileFields,
    profileData: includeCustomProfileFields ? await profileDataByUser(ctx.app.db, ctx.user.realmId, userIds) : undefined,
  };
}

const presentParams = {
  client_gravatar: p.bool().default(true),
  include_custom_profile_fields: p.bool().default(false),
};

export const listUsers = endpoint({
  method: 'GET',
  path: '/users',
  auth: 'user',
  params: { ...presentParams, user_ids: p.idList().optional() },
  handler: async (ctx, { client_gravatar, include_custom_profile_fields, user_ids }) => {
    // Ids no row can have are looked up as missing (Zulip's "Invalid user ID"), never by the database.
    const rows = await usersInRealm(ctx.app.db, ctx.user.realmId, user_ids?.filter(isPossibleId));
    if (user_ids) {
      const found = new Set(rows.map((r) => r.id));
      const missing = user_ids.find((id) => !found.has(id));
      if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
    }
    const [v, access] = await Promise.all([view(ctx, client_gravatar, include_custom_profile_fields, user_ids), userAccessOf(ctx.app, ctx.user)]);
    // Restricted guests get Zulip's placeholder for users they cannot access (GET /users has no user_list_incomplete).
    return { members: rows.map((r) => (canAccessUser(access, r) ? presentUser(r, v) : presentInaccessibleUser(r.id, v.fakeEmailDomain))) };
  },
});

export const getOwnUser = endpoint({
  method: 'GET',
  path: '/users/me',
  auth: 'user',
  params: {},
  handler: (ctx) => {
    // The row read (or cached) during authentication is current: the cache drops on any user write.
    const me = ctx.userRow;
    // Without a promise when the profile data and max_message_id are kept (P1): the answer's
    // JSON up to max_message_id is kept per user row and profile data (ownUserJson).
    const profile = me.is_bot ? undefined : cachedOwnProfileData(ctx.app, me.id);
    if (me.is_bot || profile !== undefined) {
      const maxId = maxMessageIdNow(ctx.app, me.id, ctx.sameBatch === true);
      if (maxId !== undefined) return new SerializedFields(ownUserJson(ctx.app, me, profile) + maxId);
    }
    return ownUser(ctx);
  },
});

async function ownUser(ctx: AuthedCtx): Promise<Record<string, unknown>> {
  const me = ctx.userRow;
  const out = presentOwnUser(ctx.app, me);
  // Zulip's GET /users/me includes the caller's own custom profile field values (cached: see ownProfileData).
  if (!me.is_bot) out.profile_data = cachedOwnProfileData(ctx.app, me.id) ?? (await ownProfileData(ctx.app, ctx.user.realmId, me.id));
  out.max_message_id = await maxMessageIdForUser(ctx.app, me.id);
  return out;
}

const presentOwnUser = (app: AppCtx, me: UserRow): Record<string, unknown> =>
  presentUser(me, { viewerId: me.id, viewerRole: me.role, fakeEmailDomain: fakeEmailDomain(app.config), clientGravatar: false, includeCustomProfileFields: false });

/**
 * GET /users/me's fields as JSON without braces, up to and including '"max_message_id":',
 * kept per user row object and profile data object: a row object is never changed (any
 * write to users replaces the cached rows, hence the caller's row, see AuthCache) and the
 * profile data cache replaces its objects on any profile change, so an entry is valid
 * exactly while both are the same objects. The presentation reads nothing else but the
 * configuration, fixed for a row's server.
 */
const ownUserJsonKept = new WeakMap<UserRow, { readonly profile: unknown; readonly json: string }>();
function ownUserJson(app: AppCtx, me: UserRow, profile: unknown): string {
  const kept = ownUserJsonKept.get(me);
  if (kept !== undefined && kept.profile === profile) return kept.json;
  const out = presentOwnUser(app, me);
  if (!me.is_bot) out.profile_data = profile;
  const json = JSON.stringify(out).slice(1, -1) + ',"max_message_id":';
  ownUserJsonKept.set(me, { profile, json });
  return json;
}

/** GET /users/{user_id} and GET /users/{email} share one path segment (named user_id for the router). */
export const getUser = endpoint({
  method: 'GET',
  path: '/users/:user_id',
  auth: 'user',
  params: { ...presentParams, user_id: p.pathStr() },
  handler: async (ctx, { client_gravatar, include_custom_profile_fields, user_id: idOrEmail }) => {
    const opts = { allowDeactivated: true, allowBots: true };
    const target = /^\d{1,15}$/.test(idOrEmail)
      ? await accessUserById(ctx.app, ctx.user, Number(idOrEmail), opts)
      : await accessUserByEmail(ctx.app, ctx.user, idOrEmail, opts);
    return { user: presentUser(target, await view(ctx, client_gravatar, include_custom_profile_fields, [target.id])) };
  },
});

async function isLastOwner(ctx: AuthedCtx, target: UserRow): Promise<boolean> {
  return target.role === ROLE_OWNER && !target.is_bot && (await countActiveHumanOwners(ctx.app.db, target.realm_id)) === 1;
}

export const updateUser = endpoint({
  method: 'PATCH',
  path: '/users/:user_id',
  auth: 'user',
  params: {
    user_id: p.pathId(),
    full_name: p.str().optional(),
    role: p.intIn(ROLES).optional(),
    profile_data: p.json(adminProfileDataSchema).optional(),
  },
  handler: async (ctx, { user_id, full_name, role, profile_data }) => {
    const target = await accessUserById(ctx.app, ctx.user, user_id, { allowDeactivated: true, allowBots: true, forAdmin: true });
    let newName: string | undefined;
    if (role !== undefined && role !== target.role) {
      if ((role === ROLE_OWNER || target.role === ROLE_OWNER) && ctx.user.role !== ROLE_OWNER) throw ownerRequired();
      if (!isAdminRole(ctx.user.role)) throw adminRequired();
      if (await isLastOwner(ctx, target)) throw badRequest('The owner permission cannot be removed from the only organization owner.');
    }
    if (full_name !== undefined && full_name !== target.full_name && full_name.trim() !== '') newName = checkFullName(full_name);
    const applyProfileData = profile_data === undefined ? undefined : await checkAdminProfileData(ctx.app, ctx.user, profile_data);
    await transact(ctx.app, async (tx) => {
      // A role change to or from guest changes whom that user can access (restricted realms).
      const access = role !== undefined && role !== target.role && !target.is_bot ? await accessBefore(tx, target.realm_id, ctx.app) : undefined;
      if (role !== undefined) await doChangeRole(tx, target, role);
      if (access) await emitAccessChanges(ctx.app, tx, target.realm_id, access);
      if (newName !== undefined) await doChangeFullName(tx, target, newName);
      if (applyProfileData) await applyProfileData(tx, target);
    });
    return {};
  },
});

export const deactivateUser = endpoint({
  method: 'DELETE',
  path: '/users/:user_id',
  auth: 'user',
  params: { user_id: p.pathId(), deactivation_notification_comment: p.str(z.string().max(2000)).optional() },
  handler: async (ctx, { user_id }) => {
    const target = await accessUserById(ctx.app, ctx.user, user_id, { forAdmin: true });
    if (target.role === ROLE_OWNER && ctx.user.role !== ROLE_OWNER) throw ownerRequired();
    if (await isLastOwner(ctx, target)) throw badRequest('Cannot deactivate the only organization owner');
    await transact(ctx.app, (tx) => withAccessChanges(ctx.app, tx, target.realm_id, () => doDeactivateUser(tx, target)));
    return {};
  },
});

export const deactivateOwnUser = endpoint({
  method: 'DELETE',
  path: '/users/me',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    const me = ctx.userRow;
    const active = await ctx.app.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('realm_id', '=', me.realm_id)
      .where('is_active', '=', 1)
      .executeTakeFirstOrThrow();
    const lastUser = Number(active.n) === 1;
    if (lastUser || (await isLastOwner(ctx, me))) {
      const entity = lastUser ? 'user' : 'organization owner';
      throw new JsonableError(`Cannot deactivate the only ${entity}.`, {
        code: 'CANNOT_DEACTIVATE_LAST_USER',
        data: { is_last_owner: !lastUser, entity },
      });
    }
    await transact(ctx.app, (tx) => withAccessChanges(ctx.app, tx, me.realm_id, () => doDeactivateUser(tx, me)));
    return {};
  },
});

export const reactivateUser = endpoint({
  method: 'POST',
  path: '/users/:user_id/reactivate',
  auth: 'user',
  params: { user_id: p.pathId() },
  handler: async (ctx, { user_id }) => {
    const target = await accessUserById(ctx.app, ctx.user, user_id, { allowDeactivated: true, allowBots: true, forAdmin: true });
    if (target.is_bot && target.bot_owner_id !== null) {
      const owner = await userById(ctx.app.db, target.realm_id, target.bot_owner_id);
      if (owner && !owner.is_active) throw badRequest('Cannot reactivate a bot whose owner is deactivated.');
    }
    await transact(ctx.app, (tx) => withAccessChanges(ctx.app, tx, target.realm_id, () => doReactivateUser(tx, target)));
    return {};
  },
});

async function checkNewUserEmail(ctx: AuthedCtx, email: string): Promise<void> {
  const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
  const settings = realmSettings(realm.settings);
  const domain = emailDomain(email);
  if (settings.emails_restricted_to_domains) {
    const allowed = await realmDomains(ctx.app, realm.id);
    const ok = allowed.some((d) => domain === d.domain || (d.allow_subdomains && domain.endsWith('.' + d.domain)));
    if (!ok) throw badRequest(`Email '${email}' not allowed in this organization`);
  }
  if (settings.disallow_disposable_email_addresses && isDisposableEmailDomain(domain)) {
    throw badRequest('Disposable email addresses are not allowed in this organization');
  }
  if (settings.emails_restricted_to_domains && email.slice(0, email.lastIndexOf('@')).includes('+')) {
    throw badRequest('Email addresses containing + are not allowed.');
  }
}


export const createUser = endpoint({
  method: 'POST',
  path: '/users',
  auth: 'user',
  guard: (ctx) => {
    requireAdmin(ctx);
    if (!ctx.userRow.can_create_users) throw badRequest('User not authorized to create users');
  },
  params: { email: p.str(), password: p.str(), full_name: p.str() },
  handler: async (ctx, { email, password, full_name }) => {
    const fullName = checkFullName(full_name);
    if (!isValidEmail(email)) throw badRequest('Bad name or username');
    await checkNewUserEmail(ctx, email);
    // api.md's wording; Zulip's current code says "Email '<email>' already in use".
    if (await userByEmail(ctx.app.db, ctx.user.realmId, email)) throw badRequest('Email is already in use.');
    if (!isStrongPassword(password)) throw badRequest('The password is too weak.');
    const hash = await hashPassword(password, ctx.app.config.passwordHashCost);
    const user = await transact(ctx.app, (tx) =>
      doCreateUser(ctx.app, tx, ctx.user.realmId, { email, fullName, passwordHash: hash, tosVersion: -1 }),
    );
    return { user_id: user.id };
  },
});

/** POST /users/me/api_key/regenerate: a new key for the caller (humans only, as in Zulip). */
export const regenerateOwnApiKey = endpoint({
  method: 'POST',
  path: '/users/me/api_key/regenerate',
  auth: 'user',
  guard: ({ user }) => {
    if (user.isBot) throw notForBots();
  },
  params: {},
  handler: async (ctx) => ({ api_key: await transact(ctx.app, (tx) => doRegenerateApiKey(tx, ctx.userRow)) }),
});

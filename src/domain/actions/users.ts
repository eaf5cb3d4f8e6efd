import type { AppCtx, Tx } from '../context.js';
import { fakeEmailDomain } from '../../config.js';
import { nowSeconds } from '../../store/db.js';
import * as groups from '../../store/groups.js';
import * as users from '../../store/users.js';
import type { UserRow } from '../../store/users.js';
import { canSeeDeliveryEmail, isoMinutes, presentUser } from '../../presenters/user.js';
import { generateApiKey } from '../rules/credentials.js';
import { realmSettings } from '../rules/realm-settings.js';
import { directSystemGroups, isFullMember } from '../rules/system-groups.js';
import { ROLE_MEMBER } from '../rules/users.js';

export interface NewUser {
  readonly email: string;
  readonly fullName: string;
  readonly passwordHash: string | null;
  readonly role?: number;
  readonly botType?: number | null;
  readonly botOwnerId?: number | null;
  readonly tosVersion?: number;
  readonly canCreateUsers?: boolean;
  readonly isImportedStub?: boolean;
  readonly timezone?: string;
}

async function activeViewers(tx: Tx, realmId: number): Promise<{ id: number; role: number }[]> {
  return tx.db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
}

async function waitingPeriodDays(tx: Tx, realmId: number): Promise<number> {
  const realm = await tx.db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  return Number(realmSettings(realm.settings).waiting_period_threshold);
}

/**
 * Sends realm_user add for a new user. The person object comes in two
 * variants: with the real delivery_email for viewers allowed to see it, null otherwise.
 */
function emitUserAdded(app: AppCtx, tx: Tx, user: UserRow, viewers: { id: number; role: number }[]): void {
  const domain = fakeEmailDomain(app.config);
  const seeing: number[] = [];
  const blind: number[] = [];
  for (const v of viewers) (canSeeDeliveryEmail(user, v.id, v.role) ? seeing : blind).push(v.id);
  const base = { viewerId: -1, fakeEmailDomain: domain, clientGravatar: false, includeCustomProfileFields: true };
  const withEmail = presentUser(user, { ...base, viewerRole: 100 });
  withEmail.delivery_email = user.delivery_email;
  tx.emit(user.realm_id, { type: 'realm_user', op: 'add', person: withEmail }, seeing);
  if (blind.length) tx.emit(user.realm_id, { type: 'realm_user', op: 'add', person: { ...withEmail, delivery_email: null } }, blind);
}

async function setSystemGroupMembership(
  tx: Tx,
  realmId: number,
  userId: number,
  oldNames: readonly string[],
  newNames: readonly string[],
  recipients: readonly number[],
): Promise<void> {
  const ids = await groups.systemGroupIds(tx.db, realmId);
  for (const name of oldNames) {
    if (newNames.includes(name)) continue;
    const gid = ids.get(name)!;
    await groups.removeMembers(tx.db, gid, [userId]);
    tx.emit(realmId, { type: 'user_group', op: 'remove_members', group_id: gid, user_ids: [userId] }, recipients);
  }
  for (const name of newNames) {
    if (oldNames.includes(name)) continue;
    const gid = ids.get(name)!;
    await groups.addMembers(tx.db, realmId, gid, [userId]);
    tx.emit(realmId, { type: 'user_group', op: 'add_members', group_id: gid, user_ids: [userId] }, recipients);
  }
}

/** Creates a user or bot with its system-group memberships; events go to every active user. */
export async function doCreateUser(app: AppCtx, tx: Tx, realmId: number, nu: NewUser): Promise<UserRow> {
  const now = nowSeconds();
  const role = nu.role ?? ROLE_MEMBER;
  const id = await users.insertUser(tx.db, {
    realm_id: realmId,
    delivery_email: nu.email,
    email_lower: nu.email.toLowerCase(),
    full_name: nu.fullName,
    password_hash: nu.passwordHash,
    api_key: generateApiKey(),
    role,
    is_active: 1,
    is_bot: nu.botType ? 1 : 0,
    bot_type: nu.botType ?? null,
    bot_owner_id: nu.botOwnerId ?? null,
    date_joined: now,
    timezone: nu.timezone ?? '',
    avatar_source: 'G',
    avatar_version: 1,
    is_imported_stub: nu.isImportedStub ? 1 : 0,
    can_create_users: nu.canCreateUsers ? 1 : 0,
    tos_version: nu.tosVersion ?? 0,
    settings: '{}',
  });
  const user = (await users.userById(tx.db, realmId, id))!;
  const viewers = await activeViewers(tx, realmId);
  emitUserAdded(app, tx, user, viewers);
  const full = isFullMember(now, await waitingPeriodDays(tx, realmId), now);
  await setSystemGroupMembership(tx, realmId, id, [], directSystemGroups(role, full), viewers.map((v) => v.id));
  return user;
}

async function emitPersonUpdate(tx: Tx, realmId: number, person: Record<string, unknown>): Promise<number[]> {
  const ids = await users.activeUserIds(tx.db, realmId);
  tx.emit(realmId, { type: 'realm_user', op: 'update', person }, ids);
  return ids;
}

export async function doChangeRole(tx: Tx, user: UserRow, role: number): Promise<void> {
  if (user.role === role) return;
  await users.updateUser(tx.db, user.id, { role });
  const recipients = await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, role });
  const days = await waitingPeriodDays(tx, user.realm_id);
  const full = isFullMember(user.date_joined, days, nowSeconds());
  await setSystemGroupMembership(tx, user.realm_id, user.id, directSystemGroups(user.role, full), directSystemGroups(role, full), recipients);
}

export async function doChangeFullName(tx: Tx, user: UserRow, fullName: string): Promise<void> {
  if (user.full_name === fullName) return;
  await users.updateUser(tx.db, user.id, { full_name: fullName });
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, full_name: fullName });
}

/** Deactivates a user and the bots they own (as Zulip does). */
export async function doDeactivateUser(tx: Tx, user: UserRow): Promise<void> {
  await users.updateUser(tx.db, user.id, { is_active: 0 });
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, is_active: false });
  if (!user.is_bot) {
    const bots = await tx.db
      .selectFrom('users')
      .selectAll()
      .where('bot_owner_id', '=', user.id)
      .where('is_active', '=', 1)
      .execute();
    for (const bot of bots) await doDeactivateUser(tx, bot);
  }
}

export async function doReactivateUser(tx: Tx, user: UserRow): Promise<void> {
  if (user.is_active) return;
  await users.updateUser(tx.db, user.id, { is_active: 1 });
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, is_active: true });
}

/**
 * First login of an imported stub or API-created user: clears the stub flag
 * and moves date_joined to now, each with its realm_user update event.
 */
export async function doFirstLogin(tx: Tx, user: UserRow): Promise<void> {
  if (!user.is_imported_stub && user.tos_version !== -1) return;
  const now = nowSeconds();
  await users.updateUser(tx.db, user.id, { is_imported_stub: 0, tos_version: 0, date_joined: now });
  if (user.is_imported_stub) await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, is_imported_stub: false });
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, date_joined: isoMinutes(now) });
}

export async function doRegenerateApiKey(tx: Tx, user: UserRow): Promise<string> {
  const key = generateApiKey();
  await users.updateUser(tx.db, user.id, { api_key: key });
  return key;
}

export async function doSetPasswordHash(tx: Tx, user: UserRow, passwordHash: string): Promise<void> {
  await users.updateUser(tx.db, user.id, { password_hash: passwordHash });
}

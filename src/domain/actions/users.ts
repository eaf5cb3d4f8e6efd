import type { AppCtx, Tx } from '../context.js';
import { fakeEmailDomain } from '../../config.js';
import { nowSeconds } from '../../store/db.js';
import * as groups from '../../store/groups.js';
import * as users from '../../store/users.js';
import type { UserRow } from '../../store/users.js';
import { apiEmail, avatarUrl, canSeeDeliveryEmail, emailVisibility, isoMinutes, presentUser } from '../../presenters/user.js';
import { botsInRealm } from '../../store/bots.js';
import { deleteWebSessionsOfUser } from '../../store/web-sessions.js';
import { botOwnerUserIds, emitRealmBotUpdate, realmBotAddEvent } from './bot-events.js';
import { insertBotService } from '../../store/bot-services.js';
import { emitDeliveryEmailsForRoleChange } from './email-visibility.js';
import { channelsVisibleTo, emitOwnChannelAccessChanges } from './channel-access.js';
import { emitPeerEventsForUserActivity } from './subscriptions.js';
import { emitAnonymousSettingUpdates } from './group-setting-events.js';
import { realmRestrictionIn } from '../access/user-access.js';
import { generateApiKey } from '../rules/credentials.js';
import { realmSettings } from '../rules/realm-settings.js';
import { directSystemGroups, isFullMember } from '../rules/system-groups.js';
import { EMAIL_VISIBLE_EVERYONE, isAdminRole, ROLE_MEMBER } from '../rules/users.js';

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
  /** A staged uploaded avatar (avatar_source 'U'); gravatar otherwise. */
  readonly avatarFile?: string | null;
  readonly defaultSendingStreamId?: number | null;
  readonly defaultEventsRegisterStreamId?: number | null;
  readonly defaultAllPublicStreams?: boolean;
  /** An outgoing-webhook bot's service (Zulip's add_service), stored before the realm_bot add event. */
  readonly service?: { readonly name: string; readonly baseUrl: string; readonly interface: number; readonly token: string };
}

async function activeViewers(tx: Tx, realmId: number): Promise<{ id: number; role: number }[]> {
  return tx.db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', realmId).where('is_active', '=', 1).orderBy('id').execute();
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

/**
 * A new user's stored settings: the organization's defaults (PATCH
 * /realm/user_settings_defaults; Zulip's copy_default_settings), as the
 * settings that differ from the built-in defaults. Bots start with the built-in ones.
 */
async function realmDefaultsForNewUser(tx: Tx, realmId: number): Promise<string> {
  const row = await tx.db.selectFrom('realms').select('user_settings_defaults').where('id', '=', realmId).executeTakeFirst();
  return row?.user_settings_defaults ?? '{}';
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
    avatar_source: nu.avatarFile ? 'U' : 'G',
    avatar_file: nu.avatarFile ?? null,
    avatar_version: 1,
    default_sending_stream_id: nu.defaultSendingStreamId ?? null,
    default_events_register_stream_id: nu.defaultEventsRegisterStreamId ?? null,
    default_all_public_streams: nu.defaultAllPublicStreams ? 1 : 0,
    is_imported_stub: nu.isImportedStub ? 1 : 0,
    can_create_users: nu.canCreateUsers ? 1 : 0,
    tos_version: nu.tosVersion ?? 0,
    settings: nu.botType ? '{}' : await realmDefaultsForNewUser(tx, realmId),
  });
  const user = (await users.userById(tx.db, realmId, id))!;
  const viewers = await activeViewers(tx, realmId);
  emitUserAdded(app, tx, user, viewers);
  const full = isFullMember(now, await waitingPeriodDays(tx, realmId), now);
  await setSystemGroupMembership(tx, realmId, id, [], directSystemGroups(role, full), viewers.map((v) => v.id));
  if (nu.service) await insertBotService(tx.db, { user_id: id, name: nu.service.name, base_url: nu.service.baseUrl, token: nu.service.token, interface: nu.service.interface });
  if (user.is_bot) tx.emit(realmId, await realmBotAddEvent(tx.db, user), await botOwnerUserIds(tx.db, user));
  return user;
}


async function emitPersonUpdate(tx: Tx, realmId: number, person: Record<string, unknown>): Promise<number[]> {
  const ids = await users.activeUserIds(tx.db, realmId);
  tx.emit(realmId, { type: 'realm_user', op: 'update', person }, ids);
  return ids;
}

export async function doChangeRole(tx: Tx, user: UserRow, role: number): Promise<void> {
  if (user.role === role) return;
  const visibleBefore = user.is_active ? await channelsVisibleTo(tx, user) : null;
  await users.updateUser(tx.db, user.id, { role });
  const recipients = await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, role });
  const days = await waitingPeriodDays(tx, user.realm_id);
  const full = isFullMember(user.date_joined, days, nowSeconds());
  await setSystemGroupMembership(tx, user.realm_id, user.id, directSystemGroups(user.role, full), directSystemGroups(role, full), recipients);
  if (!user.is_bot && isAdminRole(user.role) !== isAdminRole(role)) await syncAdminRealmBots(tx, user, isAdminRole(role));
  if (user.is_active) await emitDeliveryEmailsForRoleChange(tx, user, user.role, role);
  // Guests see fewer channels, administrators more (Zulip's send_stream_events_for_role_update).
  if (visibleBefore) await emitOwnChannelAccessChanges(tx, { ...user, role }, visibleBefore, user.role);
}

/**
 * Administrators see every bot in realm_bots, others only their own. When a
 * user gains or loses administrator rights, Zulip's clients refetch; Parley
 * instead sends that user realm_bot add (or delete) events for the bots they
 * do not own, so a client's realm_bots stays equal to a fresh /register.
 */
async function syncAdminRealmBots(tx: Tx, user: UserRow, nowAdmin: boolean): Promise<void> {
  const others = (await botsInRealm(tx.db, user.realm_id)).filter((b) => b.bot_owner_id !== user.id);
  for (const bot of others) {
    const event = nowAdmin ? await realmBotAddEvent(tx.db, bot) : ({ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } } as const);
    tx.emit(user.realm_id, event, [user.id]);
  }
}

export async function doChangeFullName(tx: Tx, user: UserRow, fullName: string): Promise<void> {
  if (user.full_name === fullName) return;
  await users.updateUser(tx.db, user.id, { full_name: fullName });
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, full_name: fullName });
  if (user.is_bot) await emitRealmBotUpdate(tx, user, { full_name: fullName });
}

/**
 * Deactivates a user and the bots they own (as Zulip does). Subscribers
 * hear peer_remove for the user's channels first; then everyone gets
 * realm_user update {is_active: false}, on which clients also drop the user
 * from every group and group-setting value (state/user-groups.ts, realm.ts, channels.ts).
 * The user's web sessions end.
 */
export async function doDeactivateUser(tx: Tx, user: UserRow): Promise<void> {
  await users.updateUser(tx.db, user.id, { is_active: 0 });
  // Signed-in browsers are signed out (Zulip's delete_user_sessions on deactivation).
  await deleteWebSessionsOfUser(tx.db, user.id);
  await emitPeerEventsForUserActivity(tx, user, 'peer_remove');
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, is_active: false });
  if (!user.is_bot) await emitGroupExitsForBlindGuests(tx, user);
  if (user.is_bot) await emitRealmBotUpdate(tx, user, { is_active: false });
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

/** The groups a user is a direct member of (named and anonymous), by id. */
function directGroupsOf(tx: Tx, userId: number): Promise<{ id: number; name: string | null }[]> {
  return tx.db
    .selectFrom('user_group_members')
    .innerJoin('user_groups', 'user_groups.id', 'user_group_members.group_id')
    .select(['user_groups.id', 'user_groups.name'])
    .where('user_group_members.user_id', '=', userId)
    .orderBy('user_groups.id')
    .execute();
}

/**
 * Restricted guests who cannot access a deactivated user do not get its
 * realm_user update (the event delivery leaves them out), so, as Zulip's
 * send_events_for_user_deactivation, they are told the user left its groups:
 * user_group remove_members for each named group it is a direct member of and
 * the new values of the anonymous group settings that listed it. The events
 * carry `__blind_to`: the delivery (access/user-access-delivery.ts) sends them
 * only to the guests who cannot access that user, to nobody in other realms.
 * (Bots are accessible to everyone: nothing to send. Realms without the
 * restriction: one statement, reading the setting.)
 */
async function emitGroupExitsForBlindGuests(tx: Tx, user: UserRow): Promise<void> {
  if ((await realmRestrictionIn(tx.db, user.realm_id)) === null) return;
  const direct = await directGroupsOf(tx, user.id);
  const everyone = await users.activeUserIds(tx.db, user.realm_id);
  const mark = { __blind_to: user.id };
  for (const g of direct) {
    if (g.name !== null) tx.emit(user.realm_id, { type: 'user_group', op: 'remove_members', group_id: g.id, user_ids: [user.id], ...mark }, everyone);
  }
  await emitAnonymousSettingUpdates(tx, user.realm_id, direct.filter((g) => g.name === null).map((g) => g.id), mark);
}

/**
 * Reactivates a user. Clients dropped the user from subscriber lists, groups
 * and group settings on deactivation, so, as Zulip's do_reactivate_user:
 * peer_add for the user's channels, user_group add_members for every named
 * group the user is a direct member of (system groups included), and the
 * new value of every anonymous group setting that lists the user.
 */
export async function doReactivateUser(tx: Tx, user: UserRow): Promise<void> {
  if (user.is_active) return;
  await users.updateUser(tx.db, user.id, { is_active: 1 });
  const recipients = await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, is_active: true });
  if (user.is_bot) await emitRealmBotUpdate(tx, user, { is_active: true });
  await emitPeerEventsForUserActivity(tx, user, 'peer_add');
  const direct = await directGroupsOf(tx, user.id);
  for (const g of direct) {
    if (g.name !== null) tx.emit(user.realm_id, { type: 'user_group', op: 'add_members', group_id: g.id, user_ids: [user.id] }, recipients);
  }
  await emitAnonymousSettingUpdates(tx, user.realm_id, direct.filter((g) => g.name === null).map((g) => g.id));
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

/** A new API key; a bot's owner and the admins get a realm_bot update carrying it. */
export async function doRegenerateApiKey(tx: Tx, user: UserRow): Promise<string> {
  const key = generateApiKey();
  await users.updateUser(tx.db, user.id, { api_key: key });
  if (user.is_bot) await emitRealmBotUpdate(tx, user, { api_key: key });
  return key;
}

/**
 * The realm_user avatar update (and realm_bot update for bots) for a user row
 * that already holds the new avatar fields. URLs are full (never nulled by
 * client_gravatar: the event carries no email to compute them from).
 */
export async function notifyAvatarChange(tx: Tx, user: UserRow): Promise<void> {
  if (user.is_bot) await emitRealmBotUpdate(tx, user, { avatar_url: avatarUrl(user) });
  await emitPersonUpdate(tx, user.realm_id, {
    user_id: user.id,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrl(user, true),
    avatar_version: user.avatar_version,
  });
}

/**
 * Changes a user's email_address_visibility setting (stored in the settings
 * JSON) and sends what Zulip sends besides the user_settings event, which the
 * caller (PATCH /settings) emits: realm_user {delivery_email} updates to
 * exactly the active users whose view of the address changed (the address to
 * those who may now see it, null to those who no longer may), and, when the
 * change is to or from "everyone", the new API email ({new_email}) and the
 * avatar URLs (clients compute gravatars only for public emails) to everyone.
 */
export async function doChangeEmailAddressVisibility(app: AppCtx, tx: Tx, user: UserRow, value: number): Promise<void> {
  const oldValue = emailVisibility(user);
  const stored = JSON.parse(user.settings) as Record<string, unknown>;
  stored.email_address_visibility = value;
  const settings = JSON.stringify(stored);
  await users.updateUser(tx.db, user.id, { settings });
  if (oldValue === value || user.is_bot) return;
  const updated: UserRow = { ...user, settings };
  const nowVisible: number[] = [];
  const nowHidden: number[] = [];
  for (const viewer of await activeViewers(tx, user.realm_id)) {
    const before = canSeeDeliveryEmail(user, viewer.id, viewer.role);
    const after = canSeeDeliveryEmail(updated, viewer.id, viewer.role);
    if (before !== after) (after ? nowVisible : nowHidden).push(viewer.id);
  }
  const update = (person: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person }) as const;
  tx.emit(user.realm_id, update({ user_id: user.id, delivery_email: user.delivery_email }), nowVisible);
  tx.emit(user.realm_id, update({ user_id: user.id, delivery_email: null }), nowHidden);
  if (oldValue !== EMAIL_VISIBLE_EVERYONE && value !== EMAIL_VISIBLE_EVERYONE) return;
  const domain = fakeEmailDomain(app.config);
  await emitPersonUpdate(tx, user.realm_id, { user_id: user.id, new_email: apiEmail(updated, domain) });
  await notifyAvatarChange(tx, updated);
}

export async function doSetPasswordHash(tx: Tx, user: UserRow, passwordHash: string): Promise<void> {
  await users.updateUser(tx.db, user.id, { password_hash: passwordHash });
}

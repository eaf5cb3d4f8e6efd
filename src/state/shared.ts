import { userAccessOf, type AccessSet } from '../domain/access/user-access.js';
import { groupIdsContainingUser, presentGroupSettings, type GroupSettingValue } from '../domain/rules/group-settings.js';
import type { ChannelViewer } from '../domain/access/channels.js';
import { loadChannelPresentation, presentChannel, type ChannelPresentation } from '../presenters/channel.js';
import { CHANNEL_PERMISSION_NAMES, settingColumn, weeklyTrafficStableUntil } from '../domain/rules/channels.js';
import { channelsInRealm, subscriptionRowsOfUser, type ChannelRow, type SubscriptionRow } from '../store/channels.js';
import { realmById, type RealmRow } from '../store/realms.js';
import { groupsOfRealm, membershipOfGroups, type UserGroupRow } from '../store/user-groups.js';
import { nowSeconds } from '../store/db.js';
import { usersInRealm, type UserRow } from '../store/users.js';
import { userTopicsOfUser, type UserTopicRow } from '../store/channel-extras.js';
import { sql } from 'kysely';
import type { RegisterContext } from './types.js';
import { forgetRealmCache, realmCached } from './realm-cache.js';

/**
 * Reads that several state modules need, done once per POST /register
 * (performance.md P3: a constant and small number of statements). Modules
 * run concurrently, so each read is memoized as a promise on the context;
 * a context without a memo (module tests) reads every time.
 */

export function once<T>(ctx: RegisterContext, key: string, read: () => Promise<T>): Promise<T> {
  const memo = ctx.shared;
  if (!memo) return read();
  let p = memo.get(key) as Promise<T> | undefined;
  if (!p) memo.set(key, (p = read()));
  return p;
}

/** What the caller can access (restricted guests): one statement per registration, shared by the users, presence and status modules. */
export const sharedUserAccess = (ctx: RegisterContext): Promise<AccessSet> => once(ctx, 'userAccess', () => userAccessOf(ctx.app, ctx.user));

export const sharedRealm = (ctx: RegisterContext): Promise<RealmRow> =>
  realmCached(ctx, 'realm', async () => (await realmById(ctx.app.db, ctx.user.realmId))!);

/** Every user row of the realm (active or not, bots included), by id. */
export const sharedRealmUsers = (ctx: RegisterContext): Promise<UserRow[]> => realmCached(ctx, 'users', () => usersInRealm(ctx.app.db, ctx.user.realmId));

/** Every subscription row of the user (active or not), by channel id. */
export const sharedSubscriptionRows = (ctx: RegisterContext): Promise<SubscriptionRow[]> =>
  once(ctx, 'subscriptionRows', () => subscriptionRowsOfUser(ctx.app.db, ctx.user.id));

/** The user's topic visibility policies (user_topics and the unread counts both read them). */
export const sharedUserTopics = (ctx: RegisterContext): Promise<UserTopicRow[]> => once(ctx, 'userTopics', () => userTopicsOfUser(ctx.app.db, ctx.user.id));

/** The channel viewer (as loadViewer), its subscriptions taken from the shared rows. */
export const sharedViewer = (ctx: RegisterContext): Promise<ChannelViewer> =>
  once(ctx, 'viewer', async () => {
    const u = ctx.userRow;
    const [groupIds, rows] = await Promise.all([groupIdsContainingUser(ctx.app.db, u.id), sharedSubscriptionRows(ctx)]);
    const subscribed = new Set(rows.filter((r) => r.active).map((r) => r.channel_id));
    return { id: u.id, realmId: u.realm_id, role: u.role, isBot: u.is_bot === 1, botOwnerId: u.bot_owner_id, groupIds, subscribed };
  });

/** The realm's channels, archived ones only for clients with archived_channels. */
export const sharedChannels = (ctx: RegisterContext): Promise<ChannelRow[]> =>
  realmCached(ctx, ctx.capabilities.archived_channels ? 'channels' : 'channels:active', () =>
    channelsInRealm(ctx.app.db, ctx.user.realmId, { excludeArchived: !ctx.capabilities.archived_channels }),
  );

export interface RealmGroups {
  readonly rows: UserGroupRow[];
  readonly membership: { members: Map<number, number[]>; subgroups: Map<number, number[]> };
}

/** Every group of the realm with its direct members and subgroups: three statements. */
export const sharedGroups = (ctx: RegisterContext): Promise<RealmGroups> =>
  realmCached(ctx, 'groups', async () => {
    const [rows, membership] = await Promise.all([groupsOfRealm(ctx.app.db, ctx.user.realmId), membershipOfGroups(ctx.app.db, ctx.user.realmId)]);
    return { rows, membership };
  });

/**
 * Whether the realm's groups and memberships are read anyway (the user
 * groups module is in this registration): then group-setting values and
 * system group ids come from them instead of queries of their own.
 */
const groupsRead = (ctx: RegisterContext): boolean => ctx.shared !== undefined && ctx.want('realm_user_groups');

/** Group-setting values as presentGroupSettings gives them (named: the id; anonymous: members and subgroups). */
export async function groupSettingValues(ctx: RegisterContext, ids: readonly number[]): Promise<Map<number, GroupSettingValue>> {
  if (!groupsRead(ctx)) return presentGroupSettings(ctx.app.db, ids);
  const { rows, membership } = await sharedGroups(ctx);
  const wanted = new Set(ids);
  const out = new Map<number, GroupSettingValue>();
  for (const g of rows) {
    if (!wanted.has(g.id)) continue;
    out.set(g.id, g.name !== null ? g.id : { direct_members: [...(membership.members.get(g.id) ?? [])], direct_subgroups: [...(membership.subgroups.get(g.id) ?? [])] });
  }
  return out;
}

/** The realm's system groups by name (as store/groups.ts systemGroupIds). */
export async function systemGroupIdsFor(ctx: RegisterContext, read: () => Promise<Map<string, number>>): Promise<Map<string, number>> {
  if (!groupsRead(ctx)) return read();
  const { rows } = await sharedGroups(ctx);
  return new Map(rows.filter((g) => g.is_system_group && g.name !== null).map((g) => [g.name!, g.id]));
}

/**
 * loadChannelPresentation for every shared channel (streams is a subset),
 * with group values and names from the shared groups when they are read:
 * then one statement, the subscriber counts.
 */
export const sharedChannelPresentation = (ctx: RegisterContext): Promise<ChannelPresentation> =>
  once(ctx, 'channelPresentation', async () => {
    const channels = await sharedChannels(ctx);
    if (!groupsRead(ctx) || channels.length === 0) return loadChannelPresentation(ctx.app.db, channels);
    const groupIds = channels.flatMap((c) => CHANNEL_PERMISSION_NAMES.map((n) => c[settingColumn(n)]));
    const [groupValues, { rows }, subscriberCounts] = await Promise.all([groupSettingValues(ctx, groupIds), sharedGroups(ctx), sharedSubscriberCounts(ctx)]);
    const sendIds = new Set(channels.map((c) => c.can_send_message_group_id));
    const groupNames = new Map<number, string>();
    for (const g of rows) if (sendIds.has(g.id) && g.is_system_group && g.name !== null) groupNames.set(g.id, g.name);
    return { groupValues, groupNames, subscriberCounts, now: nowSeconds() };
  });

/** The JSON text of each shared channel as presentChannel gives it, by channel id. */
export interface ChannelJson {
  readonly texts: ReadonlyMap<number, string>;
  /** Until when (seconds) the texts' stream_weekly_traffic stays what it was when they were presented. */
  readonly stableUntil: number;
}

async function presentChannelJson(ctx: RegisterContext): Promise<ChannelJson> {
  const [channels, pres] = await Promise.all([sharedChannels(ctx), sharedChannelPresentation(ctx)]);
  const texts = new Map<number, string>();
  let stableUntil = Infinity;
  for (const ch of channels) {
    texts.set(ch.id, JSON.stringify(presentChannel(ch, pres)));
    stableUntil = Math.min(stableUntil, weeklyTrafficStableUntil(ch.date_created, pres.now));
  }
  return { texts, stableUntil };
}

/**
 * The shared channels presented and serialized (streams, subscriptions and
 * never_subscribed splice them: performance.md P3), kept per realm
 * generation like the rows they come from; the presentation depends on the
 * time only through stream_weekly_traffic, so a kept value is used only
 * before the first moment that could change it.
 */
export const sharedChannelJson = (ctx: RegisterContext): Promise<ChannelJson> =>
  once(ctx, 'channelJson', async () => {
    const key = ctx.capabilities.archived_channels ? 'channelJson' : 'channelJson:active';
    const kept = await realmCached(ctx, key, () => presentChannelJson(ctx));
    if (nowSeconds() < kept.stableUntil) return kept;
    forgetRealmCache(ctx, key);
    return presentChannelJson(ctx);
  });

/** Active subscribers (active users) per channel of the realm. */
const sharedSubscriberCounts = (ctx: RegisterContext): Promise<Map<number, number>> =>
  realmCached(ctx, 'subscriberCounts', async () => {
    const counted = await ctx.app.db
      .selectFrom('subscriptions')
      .innerJoin('users', 'users.id', 'subscriptions.user_id')
      .select(['subscriptions.channel_id', sql<number>`count(*)`.as('n')])
      .where('subscriptions.realm_id', '=', ctx.user.realmId)
      .where('subscriptions.active', '=', 1)
      .where('users.is_active', '=', 1)
      .groupBy('subscriptions.channel_id')
      .execute();
    return new Map<number, number>(counted.map((r) => [r.channel_id, Number(r.n)]));
  });

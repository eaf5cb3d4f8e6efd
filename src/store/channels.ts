import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from './db.js';
import { prepared, readCompiled } from './prepared.js';
import type { TxDb } from '../domain/context.js';
import type { ChannelTable, SubscriptionTable } from './channels-schema.js';

type AnyDb = Db | TxDb;
export type ChannelRow = Selectable<ChannelTable>;
export type SubscriptionRow = Selectable<SubscriptionTable>;

/** Queries for channels, their recipients, subscriptions and default channels. No rules here. */

/** Ids beyond a 32-bit column can match nothing (and PostgreSQL would refuse the comparison). */
export const isStorableId = (id: number): boolean => Number.isSafeInteger(id) && id > 0 && id <= 2147483647;

// Every channel send and channel narrow reads one: compiled once (store/prepared.ts), straight on the connection on SQLite.
const channelByIdQuery = prepared(2, (db, realmId: number, id: number) => db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where('id', '=', id));
const channelByNameQuery = prepared(['number', 'string'], (db, realmId: number, lower: string) =>
  db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where('name_lower', '=', lower),
);

export function channelById(db: AnyDb, realmId: number, id: number): Promise<ChannelRow | undefined> {
  if (!isStorableId(id)) return Promise.resolve(undefined);
  return channelByIdQuery(db, realmId, id).then((rows) => rows[0]);
}

/** Case-insensitive, as Zulip's get_stream (names are unique per realm regardless of case). */
export function channelByName(db: AnyDb, realmId: number, name: string): Promise<ChannelRow | undefined> {
  return channelByNameQuery(db, realmId, name.toLowerCase()).then((rows) => rows[0]);
}

export async function channelsByNames(db: AnyDb, realmId: number, names: readonly string[]): Promise<Map<string, ChannelRow>> {
  const lower = [...new Set(names.map((n) => n.toLowerCase()))];
  if (lower.length === 0) return new Map();
  const rows = await db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where('name_lower', 'in', lower).execute();
  return new Map(rows.map((r) => [r.name_lower, r]));
}

export function channelsInRealm(db: AnyDb, realmId: number, opts: { excludeArchived?: boolean } = {}): Promise<ChannelRow[]> {
  let q = db.selectFrom('channels').selectAll().where('realm_id', '=', realmId);
  if (opts.excludeArchived) q = q.where('deactivated', '=', 0);
  return q.orderBy('id').execute();
}

export function channelsByIds(db: AnyDb, realmId: number, ids: readonly number[]): Promise<ChannelRow[]> {
  const ok = ids.filter(isStorableId);
  if (ok.length === 0) return Promise.resolve([]);
  return db.selectFrom('channels').selectAll().where('realm_id', '=', realmId).where('id', 'in', ok).orderBy('id').execute();
}

export async function insertChannel(db: AnyDb, row: Insertable<ChannelTable>): Promise<number> {
  const r = await db.insertInto('channels').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function updateChannel(db: AnyDb, id: number, patch: Updateable<ChannelTable>): Promise<void> {
  await db.updateTable('channels').set(patch).where('id', '=', id).execute();
}

export async function insertRecipient(db: AnyDb, realmId: number, type: number, typeId: number): Promise<number> {
  const r = await db.insertInto('recipients').values({ realm_id: realmId, type, type_id: typeId }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

/** The user's subscription row to a channel (active or not). */
export function subscriptionRow(db: AnyDb, userId: number, channelId: number): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).where('channel_id', '=', channelId).executeTakeFirst();
}

const subscriptionRowsQuery = prepared(1, (db, userId: number) => db.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).orderBy('channel_id'));
export function subscriptionRowsOfUser(db: AnyDb, userId: number): Promise<SubscriptionRow[]> {
  return subscriptionRowsQuery(db, userId);
}

/** Rows for these users and channels (active or not). */
export function subscriptionRowsFor(db: AnyDb, userIds: readonly number[], channelIds: readonly number[]): Promise<SubscriptionRow[]> {
  if (userIds.length === 0 || channelIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', 'in', [...userIds])
    .where('channel_id', 'in', [...channelIds])
    .execute();
}

export async function activeSubscribedChannelIds(db: AnyDb, userId: number): Promise<Set<number>> {
  const rows = await db.selectFrom('subscriptions').select('channel_id').where('user_id', '=', userId).where('active', '=', 1).execute();
  return new Set(rows.map((r) => r.channel_id));
}

/** Active subscribers (active users only) of each channel, sorted; one query. */
export async function subscriberIdsByChannel(db: AnyDb, channelIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(channelIds.map((id) => [id, []]));
  if (channelIds.length === 0) return out;
  const rows = await db
    .selectFrom('subscriptions')
    .innerJoin('users', 'users.id', 'subscriptions.user_id')
    .select(['subscriptions.channel_id', 'subscriptions.user_id'])
    .where('subscriptions.channel_id', 'in', [...channelIds])
    .where('subscriptions.active', '=', 1)
    .where('users.is_active', '=', 1)
    .orderBy('subscriptions.channel_id')
    .orderBy('subscriptions.user_id')
    .execute();
  for (const r of rows) out.get(r.channel_id)!.push(r.user_id);
  return out;
}

export async function subscriberIds(db: AnyDb, channelId: number): Promise<number[]> {
  return (await subscriberIdsByChannel(db, [channelId])).get(channelId)!;
}

/** Active subscribers of every channel of the realm, keyed by channel; one query. */
export async function subscriberIdsInRealm(db: AnyDb, realmId: number): Promise<Map<number, number[]>> {
  const rows = await db
    .selectFrom('subscriptions')
    .innerJoin('users', 'users.id', 'subscriptions.user_id')
    .select(['subscriptions.channel_id', 'subscriptions.user_id'])
    .where('subscriptions.realm_id', '=', realmId)
    .where('subscriptions.active', '=', 1)
    .where('users.is_active', '=', 1)
    .orderBy('subscriptions.channel_id')
    .orderBy('subscriptions.user_id')
    .execute();
  const out = new Map<number, number[]>();
  for (const r of rows) {
    if (!out.has(r.channel_id)) out.set(r.channel_id, []);
    out.get(r.channel_id)!.push(r.user_id);
  }
  return out;
}

export async function usedColorsByUser(db: AnyDb, userIds: readonly number[]): Promise<Map<number, Set<string>>> {
  const out = new Map<number, Set<string>>(userIds.map((id) => [id, new Set()]));
  if (userIds.length === 0) return out;
  const rows = await db.selectFrom('subscriptions').select(['user_id', 'color']).where('user_id', 'in', [...userIds]).execute();
  for (const r of rows) out.get(r.user_id)!.add(r.color);
  return out;
}

export async function insertSubscriptions(db: AnyDb, rows: Insertable<SubscriptionTable>[]): Promise<void> {
  if (rows.length) await db.insertInto('subscriptions').values(rows).execute();
}

export async function setSubscriptionsActive(db: AnyDb, ids: readonly number[], active: boolean): Promise<void> {
  if (ids.length) await db.updateTable('subscriptions').set({ active: active ? 1 : 0 }).where('id', 'in', [...ids]).execute();
}

export async function updateSubscription(db: AnyDb, id: number, patch: Updateable<SubscriptionTable>): Promise<void> {
  await db.updateTable('subscriptions').set(patch).where('id', '=', id).execute();
}

export interface ActiveUserBrief {
  readonly id: number;
  readonly role: number;
  readonly is_bot: number;
  readonly bot_owner_id: number | null;
}

export function activeUsersBrief(db: AnyDb, realmId: number): Promise<ActiveUserBrief[]> {
  return db.selectFrom('users').select(['id', 'role', 'is_bot', 'bot_owner_id']).where('realm_id', '=', realmId).where('is_active', '=', 1).orderBy('id').execute();
}

/** Active members of each group, through any depth of subgroups; one query for all roots. */
export async function recursiveMembersByGroup(db: AnyDb, groupIds: readonly number[]): Promise<Map<number, Set<number>>> {
  const roots = [...new Set(groupIds)];
  const out = new Map<number, Set<number>>(roots.map((id) => [id, new Set()]));
  if (roots.length === 0) return out;
  const rows = await sql<{ root: number; user_id: number }>`
    WITH RECURSIVE reach(root, id) AS (
      SELECT g.id, g.id FROM user_groups g WHERE g.id IN (${sql.join(roots)})
      UNION
      SELECT r.root, s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    )
    SELECT DISTINCT r.root AS root, m.user_id AS user_id
    FROM reach r
    JOIN user_group_members m ON m.group_id = r.id
    JOIN users u ON u.id = m.user_id
    WHERE u.is_active = 1`.execute(db);
  for (const r of rows.rows) out.get(Number(r.root))!.add(Number(r.user_id));
  return out;
}

const defaultChannelsQuery = prepared(1, (db, realmId: number) => db.selectFrom('default_channels').select('channel_id').where('realm_id', '=', realmId).orderBy('channel_id'));
export async function defaultChannelIds(db: AnyDb, realmId: number): Promise<number[]> {
  const rows = await defaultChannelsQuery(db, realmId);
  return rows.map((r) => r.channel_id);
}

export async function addDefaultChannel(db: AnyDb, realmId: number, channelId: number): Promise<void> {
  await db.insertInto('default_channels').values({ realm_id: realmId, channel_id: channelId }).execute();
}

export async function removeDefaultChannel(db: AnyDb, realmId: number, channelId: number): Promise<void> {
  await db.deleteFrom('default_channels').where('realm_id', '=', realmId).where('channel_id', '=', channelId).execute();
}

/** Names and ids of the system groups and named groups (for stream_post_policy and presenting). */
export async function namedGroups(db: AnyDb, realmId: number): Promise<Map<number, { name: string; is_system_group: number }>> {
  const rows = await db.selectFrom('user_groups').select(['id', 'name', 'is_system_group']).where('realm_id', '=', realmId).where('name', 'is not', null).execute();
  return new Map(rows.map((r) => [r.id, { name: r.name!, is_system_group: r.is_system_group }]));
}

import type { AppCtx } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';
import { groupIdsContainingUser } from '../rules/group-settings.js';
import { realmGroupSettingId, type RealmGroupSetting } from '../rules/realm-group-settings.js';
import { isAdminRole, ROLE_GUEST } from '../rules/users.js';
import {
  activeSubscribedChannelIds,
  activeUsersBrief,
  channelById,
  channelByName,
  recursiveMembersByGroup,
  subscriberIdsByChannel,
  type ChannelRow,
} from '../../store/channels.js';

type AnyDb = Db | TxDb;

/**
 * Channel permissions, checked in one place. Zulip's model: content access
 * (reading messages, subscribing oneself) and metadata access (knowing the
 * channel exists). Every "not visible" answer is the same error as "does not
 * exist", so no endpoint reveals a private channel.
 */

/** The acting user with what channel checks need: recursive group ids and active subscriptions. */
export interface ChannelViewer {
  readonly id: number;
  readonly realmId: number;
  readonly role: number;
  readonly isBot: boolean;
  readonly botOwnerId: number | null;
  readonly groupIds: ReadonlySet<number>;
  readonly subscribed: ReadonlySet<number>;
}

export interface ViewerSource {
  readonly id: number;
  readonly realm_id: number;
  readonly role: number;
  readonly is_bot: number;
  readonly bot_owner_id: number | null;
}

/** Two queries: the user's groups (recursively) and active subscriptions. */
export async function loadViewer(db: AnyDb, u: ViewerSource): Promise<ChannelViewer> {
  const [groupIds, subscribed] = await Promise.all([groupIdsContainingUser(db, u.id), activeSubscribedChannelIds(db, u.id)]);
  return { id: u.id, realmId: u.realm_id, role: u.role, isBot: u.is_bot === 1, botOwnerId: u.bot_owner_id, groupIds, subscribed };
}

/**
 * Does the user hold a realm permission? (Through the user's recursive
 * groups: one query for the setting, one for the groups; avoids a
 * parameter-typed recursive query PostgreSQL cannot plan.)
 */
export async function holdsRealmPermission(db: AnyDb, realmId: number, userId: number, setting: RealmGroupSetting): Promise<boolean> {
  const [groupId, groups] = await Promise.all([realmGroupSettingId(db, realmId, setting), groupIdsContainingUser(db, userId)]);
  return groups.has(groupId);
}

export const isGuest = (v: { role: number }): boolean => v.role === ROLE_GUEST;
export const isAdmin = (v: { role: number }): boolean => isAdminRole(v.role);

/** Membership in a setting that guests can never hold (allow_everyone_group=False). */
const inNonGuestGroup = (v: ChannelViewer, groupId: number): boolean => !isGuest(v) && v.groupIds.has(groupId);

type ChannelAccessFields = Pick<
  ChannelRow,
  'id' | 'invite_only' | 'is_web_public' | 'can_subscribe_group_id' | 'can_add_subscribers_group_id' | 'can_administer_channel_group_id'
>;

/** Zulip's user_has_content_access: read messages and subscribe oneself. */
export function hasContentAccess(v: ChannelViewer, ch: ChannelAccessFields): boolean {
  if (ch.is_web_public) return true;
  if (v.subscribed.has(ch.id)) return true;
  if (isGuest(v)) return false;
  if (!ch.invite_only) return true;
  return inNonGuestGroup(v, ch.can_subscribe_group_id) || inNonGuestGroup(v, ch.can_add_subscribers_group_id);
}

/** Metadata access through the group settings alone (not subscription, not admin). */
export function hasMetadataAccessViaGroups(v: ChannelViewer, ch: ChannelAccessFields): boolean {
  return (
    inNonGuestGroup(v, ch.can_administer_channel_group_id) ||
    inNonGuestGroup(v, ch.can_add_subscribers_group_id) ||
    inNonGuestGroup(v, ch.can_subscribe_group_id)
  );
}

/** Zulip's user_has_metadata_access: may know the channel exists and see its settings. */
export function hasMetadataAccess(v: ChannelViewer, ch: ChannelAccessFields): boolean {
  if (ch.is_web_public) return true;
  if (v.subscribed.has(ch.id)) return true;
  if (isGuest(v)) return false;
  if (!ch.invite_only) return true;
  if (isAdmin(v)) return true;
  return hasMetadataAccessViaGroups(v, ch);
}

/** Organization administrators administer every channel; others through can_administer_channel_group. */
export const canAdministerChannel = (v: ChannelViewer, ch: ChannelAccessFields): boolean =>
  isAdmin(v) || inNonGuestGroup(v, ch.can_administer_channel_group_id);

export interface AccessOpts {
  /** Default true: archived channels are refused. */
  readonly requireActive?: boolean;
  /** Default true: metadata access is not enough. */
  readonly requireContentAccess?: boolean;
}

function allowed(v: ChannelViewer, ch: ChannelRow, opts: AccessOpts): boolean {
  if ((opts.requireActive ?? true) && ch.deactivated) return false;
  if (hasContentAccess(v, ch)) return true;
  return !(opts.requireContentAccess ?? true) && hasMetadataAccess(v, ch);
}

export const invalidChannelId = (): JsonableError => badRequest('Invalid channel ID');

/** Zulip's access_stream_by_id: "Invalid channel ID" for missing and inaccessible alike. */
export async function accessChannelById(db: AnyDb, v: ChannelViewer, id: number, opts: AccessOpts = {}): Promise<ChannelRow> {
  const ch = await channelById(db, v.realmId, id);
  if (!ch || !allowed(v, ch, opts)) throw invalidChannelId();
  return ch;
}

/** Zulip's access_stream_by_name. */
export async function accessChannelByName(db: AnyDb, v: ChannelViewer, name: string, opts: AccessOpts = {}): Promise<ChannelRow> {
  const ch = await channelByName(db, v.realmId, name);
  if (!ch || !allowed(v, ch, opts)) throw badRequest(`Invalid channel name '${name}'`);
  return ch;
}

export const cannotAdministerChannel = (): JsonableError =>
  new JsonableError('You do not have permission to administer this channel.', { code: 'CANNOT_ADMINISTER_CHANNEL' });

/**
 * For PATCH and DELETE /streams/{id}: administrators and channel
 * administrators pass (archived channels included); a user who can see the
 * channel's content but not administer it gets CANNOT_ADMINISTER_CHANNEL;
 * anyone else "Invalid channel ID".
 */
export async function accessChannelForUpdate(db: AnyDb, v: ChannelViewer, id: number): Promise<ChannelRow> {
  const ch = await channelById(db, v.realmId, id);
  if (!ch) throw invalidChannelId();
  if (canAdministerChannel(v, ch)) return ch;
  if (hasContentAccess(v, ch)) throw cannotAdministerChannel();
  throw invalidChannelId();
}

/** Whether removing other users' subscriptions is allowed (Zulip's bulk_can_remove_subscribers_from_streams). */
export function canRemoveSubscribers(v: ChannelViewer, channels: readonly ChannelRow[]): boolean {
  if (isAdmin(v)) return true;
  if (isGuest(v)) return false;
  for (const ch of channels) {
    if (inNonGuestGroup(v, ch.can_administer_channel_group_id)) continue;
    if (!hasMetadataAccess(v, ch)) return false;
    if (!inNonGuestGroup(v, ch.can_remove_subscribers_group_id)) return false;
  }
  return true;
}

/** Whether the viewer may subscribe other users to this (content-accessible) channel. */
export function canAddSubscribers(v: ChannelViewer, ch: ChannelRow, realmCanAddSubscribers: boolean): boolean {
  if (realmCanAddSubscribers || isAdmin(v)) return true;
  if (isGuest(v)) return false;
  return v.groupIds.has(ch.can_administer_channel_group_id) || v.groupIds.has(ch.can_add_subscribers_group_id);
}

/** Who is around a set of channels: active users, subscribers, metadata-granting group members. Three queries. */
export interface ChannelAudience {
  readonly allActive: number[];
  readonly nonGuests: number[];
  readonly admins: number[];
  readonly guests: ReadonlySet<number>;
  readonly subscribers: Map<number, number[]>;
  /** Non-guest members of each private channel's metadata-granting groups. */
  readonly groupMeta: Map<number, Set<number>>;
}

export async function loadAudience(db: AnyDb, realmId: number, channels: readonly ChannelRow[]): Promise<ChannelAudience> {
  const users = await activeUsersBrief(db, realmId);
  const subscribers = await subscriberIdsByChannel(db, channels.map((c) => c.id));
  const groupIds = channels.flatMap((c) => [c.can_administer_channel_group_id, c.can_add_subscribers_group_id, c.can_subscribe_group_id]);
  const members = groupIds.length ? await recursiveMembersByGroup(db, groupIds) : new Map<number, Set<number>>();
  const guests = new Set(users.filter((u) => u.role === ROLE_GUEST).map((u) => u.id));
  const groupMeta = new Map<number, Set<number>>();
  for (const ch of channels) {
    const set = new Set<number>();
    for (const gid of [ch.can_administer_channel_group_id, ch.can_add_subscribers_group_id, ch.can_subscribe_group_id]) {
      for (const id of members.get(gid) ?? []) if (!guests.has(id)) set.add(id);
    }
    groupMeta.set(ch.id, set);
  }
  return {
    allActive: users.map((u) => u.id),
    nonGuests: users.filter((u) => u.role !== ROLE_GUEST).map((u) => u.id),
    admins: users.filter((u) => isAdminRole(u.role)).map((u) => u.id),
    guests,
    subscribers,
    groupMeta,
  };
}

/**
 * Who may see a channel's metadata, for event fan-out (Zulip's
 * can_access_stream_metadata_user_ids): public channels — every active
 * non-guest plus subscribed guests (web-public ones: every active user, since
 * guests see those too); private ones — subscribers, administrators and
 * non-guest members of the metadata-granting groups.
 */
export function metadataAudience(a: ChannelAudience, ch: ChannelRow): Set<number> {
  const set = new Set<number>(a.subscribers.get(ch.id) ?? []);
  if (ch.is_web_public) for (const id of a.allActive) set.add(id);
  else if (!ch.invite_only) for (const id of a.nonGuests) set.add(id);
  else {
    for (const id of a.admins) set.add(id);
    for (const id of a.groupMeta.get(ch.id) ?? []) set.add(id);
  }
  return set;
}

export async function metadataUserIds(db: AnyDb, realmId: number, channels: readonly ChannelRow[]): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>();
  if (channels.length === 0) return out;
  const a = await loadAudience(db, realmId, channels);
  for (const ch of channels) out.set(ch.id, metadataAudience(a, ch));
  return out;
}

export async function metadataUserIdsOf(db: AnyDb, ch: ChannelRow): Promise<number[]> {
  return [...(await metadataUserIds(db, ch.realm_id, [ch])).get(ch.id)!].sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------
// For the messages work: sending, topic creation and the topics policy.

export interface Sender {
  readonly id: number;
  readonly realm_id: number;
  readonly role: number;
  readonly is_bot: number;
  readonly bot_owner_id: number | null;
}

async function holdsSetting(db: AnyDb, user: Sender, groupId: number): Promise<boolean> {
  const ids = await groupIdsContainingUser(db, user.id);
  return ids.has(groupId);
}

/**
 * Zulip's access_stream_for_send_message: can_send_message_group (a bot may
 * use its owner's permission), archived channels refused, then visibility:
 * web-public, public for non-guests, subscribed, a bot whose owner is
 * subscribed, or content access through the group settings.
 * Errors: "You do not have permission to post in this channel." and
 * "Not authorized to send to channel '<name>'".
 */
export async function checkChannelSend(app: AppCtx | { db: AnyDb }, sender: Sender, ch: ChannelRow, senderHoldsSendGroup?: boolean): Promise<void> {
  const db = app.db;
  // senderHoldsSendGroup: already read with the channel (the PostgreSQL send path reads them in one statement).
  const senderOk = senderHoldsSendGroup ?? (await holdsSetting(db, sender, ch.can_send_message_group_id));
  if (!senderOk) {
    const owner = sender.is_bot && sender.bot_owner_id !== null ? sender.bot_owner_id : null;
    const ownerOk = owner !== null && (await db.selectFrom('users').select('id').where('id', '=', owner).executeTakeFirst())
      ? (await groupIdsContainingUser(db, owner)).has(ch.can_send_message_group_id)
      : false;
    if (!ownerOk) throw badRequest('You do not have permission to post in this channel.');
  }
  const refuse = (): JsonableError => badRequest(`Not authorized to send to channel '${ch.name}'`);
  if (ch.deactivated) throw refuse();
  if (ch.is_web_public) return;
  if (!ch.invite_only && sender.role !== ROLE_GUEST) return;
  const v = await loadViewer(db, sender);
  if (v.subscribed.has(ch.id)) return;
  if (sender.is_bot && sender.bot_owner_id !== null) {
    const ownerSub = await db
      .selectFrom('subscriptions')
      .select('id')
      .where('user_id', '=', sender.bot_owner_id)
      .where('channel_id', '=', ch.id)
      .where('active', '=', 1)
      .executeTakeFirst();
    if (ownerSub) return;
  }
  if (ch.history_public_to_subscribers && !isGuest(v) && (v.groupIds.has(ch.can_subscribe_group_id) || v.groupIds.has(ch.can_add_subscribers_group_id))) {
    return;
  }
  throw refuse();
}

/** Zulip's check_user_can_create_new_topics, for a topic with no messages yet (bots fall back to their owner). */
export async function checkCanCreateTopic(db: AnyDb, sender: Sender, ch: ChannelRow, senderGroups?: ReadonlySet<number>): Promise<void> {
  // senderGroups: already read (the SQLite send path keeps them, domain/send-read-cache.ts).
  if (senderGroups ? senderGroups.has(ch.can_create_topic_group_id) : await holdsSetting(db, sender, ch.can_create_topic_group_id)) return;
  if (sender.is_bot && sender.bot_owner_id !== null && (await groupIdsContainingUser(db, sender.bot_owner_id)).has(ch.can_create_topic_group_id)) return;
  throw badRequest('You do not have permission to create new topics in this channel.');
}

import { accessBefore, emitAccessChanges } from '../access/user-access-events.js';
import type { AppCtx, Tx } from '../context.js';
import { badRequest } from '../errors.js';
import {
  activeSubscribedChannelIds,
  channelsByIds,
  insertSubscriptions,
  setSubscriptionsActive,
  subscriptionRowsFor,
  updateSubscription,
  usedColorsByUser,
  type ChannelRow,
  type SubscriptionRow,
} from '../../store/channels.js';
import { loadAudience, metadataAudience, type ChannelAudience } from '../access/channels.js';
import { loadChannelPresentation, presentSubscription } from '../../presenters/channel.js';
import { pickColor } from '../rules/channels.js';
import { isAdminRole, ROLE_GUEST } from '../rules/users.js';
import { userSettings } from '../rules/user-settings.js';
import { emitStreamCreate, emitStreamDelete } from './channels.js';
import { presentChannel } from '../../presenters/channel.js';

/**
 * Subscribing and unsubscribing, with Zulip's event fan-out
 * (zerver/actions/streams.py bulk_add_subscriptions / bulk_remove_subscriptions).
 */

export interface SubscriberUser {
  readonly id: number;
  readonly role: number;
  readonly is_active: number;
  /** The user's settings JSON (for the stream notification defaults clients without notification_settings_null get). */
  readonly settings?: string;
}

/** The user-level defaults that replace null per-channel notification settings for older clients. */
export function streamNotificationDefaults(settingsJson: string | undefined): Record<string, boolean> {
  const s = settingsJson ? userSettings(settingsJson) : {};
  const out: Record<string, boolean> = {};
  for (const key of ['desktop', 'audible', 'push', 'email']) out[`enable_stream_${key}_notifications`] = Boolean(s[`enable_stream_${key}_notifications`] ?? false);
  return out;
}

export interface SubPair {
  readonly userId: number;
  readonly channel: ChannelRow;
}

const sorted = (ids: Iterable<number>): number[] => [...ids].sort((a, b) => a - b);

/**
 * Who hears about subscriber changes (peer_add / peer_remove), grouped as
 * Zulip groups them: one event per private channel; for public channels with
 * the same changed users, one event for the web-public ones, one for those
 * without guest subscribers, and one per remaining channel.
 */
function emitPeerEvents(tx: Tx, realmId: number, op: 'peer_add' | 'peer_remove', altered: Map<number, Set<number>>, channels: Map<number, ChannelRow>, a: ChannelAudience): void {
  const nonGuests = new Set(a.nonGuests);
  const byUsers = new Map<string, number[]>();
  for (const [channelId, users] of altered) {
    const ch = channels.get(channelId)!;
    if (users.size === 0) continue;
    if (ch.invite_only) {
      const peers = new Set<number>([...(a.subscribers.get(channelId) ?? []), ...a.admins, ...(a.groupMeta.get(channelId) ?? [])]);
      for (const id of users) peers.delete(id);
      if (peers.size) tx.emit(realmId, { type: 'subscription', op, stream_ids: [channelId], user_ids: sorted(users) }, sorted(peers));
      continue;
    }
    const key = sorted(users).join(',');
    if (!byUsers.has(key)) byUsers.set(key, []);
    byUsers.get(key)!.push(channelId);
  }
  for (const [key, channelIds] of byUsers) {
    const users = key.split(',').map(Number);
    const webPublic: number[] = [];
    const plain: number[] = [];
    for (const id of sorted(channelIds)) {
      const ch = channels.get(id)!;
      const subs = a.subscribers.get(id) ?? [];
      if (ch.is_web_public) webPublic.push(id);
      else if (subs.every((s) => nonGuests.has(s))) plain.push(id);
      else {
        const peers = new Set([...a.nonGuests, ...subs]);
        for (const u of users) peers.delete(u);
        if (peers.size) tx.emit(realmId, { type: 'subscription', op, stream_ids: [id], user_ids: users }, sorted(peers));
      }
    }
    if (webPublic.length) {
      const peers = a.allActive.filter((id) => !users.includes(id));
      if (peers.length) tx.emit(realmId, { type: 'subscription', op, stream_ids: webPublic, user_ids: users }, peers);
    }
    if (plain.length) {
      const peers = a.nonGuests.filter((id) => !users.includes(id));
      if (peers.length) tx.emit(realmId, { type: 'subscription', op, stream_ids: plain, user_ids: users }, peers);
    }
  }
}

/**
 * peer_remove (deactivation) or peer_add (reactivation) for every channel
 * the user is subscribed to, archived ones included, to everyone else who
 * sees the channel's subscribers (Zulip's send_events_for_user_deactivation
 * and do_reactivate_user). Subscriber lists and subscriber_count only count
 * active users, so both change although the subscriptions themselves stay.
 */
export async function emitPeerEventsForUserActivity(tx: Tx, user: { id: number; realm_id: number }, op: 'peer_add' | 'peer_remove'): Promise<void> {
  const ids = [...(await activeSubscribedChannelIds(tx.db, user.id))];
  if (ids.length === 0) return;
  const channels = await channelsByIds(tx.db, user.realm_id, ids);
  const a = await loadAudience(tx.db, user.realm_id, channels);
  const altered = new Map(channels.map((c) => [c.id, new Set([user.id])]));
  emitPeerEvents(tx, user.realm_id, op, altered, new Map(channels.map((c) => [c.id, c])), a);
}

/**
 * Clients without notification_settings_null see a subscription's null
 * ("inherit") desktop/audible/push/email notification setting as the user's
 * enable_stream_<x>_notifications default. When that default changes, such
 * clients get a subscription update for every inheriting subscription
 * (active or not: both lists show the value); delivery drops these events
 * for clients with the capability, which keep null. Zulip sends nothing here
 * and its older clients' values go stale.
 */
export async function emitInheritedNotificationUpdates(tx: Tx, user: { id: number; realm_id: number }, setting: string, value: unknown): Promise<void> {
  const m = /^enable_stream_(desktop|audible|push|email)_notifications$/.exec(setting);
  if (!m) return;
  const property = `${m[1]}_notifications` as 'desktop_notifications' | 'audible_notifications' | 'push_notifications' | 'email_notifications';
  const rows = await tx.db.selectFrom('subscriptions').select('channel_id').where('user_id', '=', user.id).where(property, 'is', null).orderBy('channel_id').execute();
  for (const r of rows) {
    tx.emit(user.realm_id, { type: 'subscription', op: 'update', property, value: Boolean(value), stream_id: r.channel_id, __inherited_default: true }, [user.id]);
  }
}

/**
 * Subscribes users to channels. Existing active subscriptions are reported
 * as already subscribed; inactive ones are reactivated with their settings;
 * new ones get a colour from the palette (or the requested one).
 * Events: a stream create to new subscribers who could not see the channel
 * before, a subscription add (full objects with subscribers) to each
 * subscriber, then peer_add to everyone else who sees the channel.
 */
export async function doSubscribe(
  tx: Tx,
  realmId: number,
  channels: readonly ChannelRow[],
  users: readonly SubscriberUser[],
  colors: ReadonlyMap<number, string>,
  app: AppCtx,
): Promise<{ subscribed: SubPair[]; already: SubPair[] }> {
  const userIds = users.map((u) => u.id);
  const access = await accessBefore(tx, realmId, app);
  const existing = await subscriptionRowsFor(tx.db, userIds, channels.map((c) => c.id));
  const byKey = new Map(existing.map((r) => [`${r.user_id}:${r.channel_id}`, r]));
  const used = await usedColorsByUser(tx.db, userIds);
  const subscribed: SubPair[] = [];
  const already: SubPair[] = [];
  const toActivate: number[] = [];
  const toAdd: Parameters<typeof insertSubscriptions>[1] = [];
  for (const u of users) {
    for (const ch of channels) {
      const row = byKey.get(`${u.id}:${ch.id}`);
      if (row?.active) {
        already.push({ userId: u.id, channel: ch });
        continue;
      }
      subscribed.push({ userId: u.id, channel: ch });
      if (row) toActivate.push(row.id);
      else {
        const color = colors.get(ch.id) ?? pickColor(used.get(u.id)!, ch.recipient_id ?? ch.id);
        used.get(u.id)!.add(color);
        toAdd.push({ realm_id: realmId, user_id: u.id, channel_id: ch.id, recipient_id: ch.recipient_id!, active: 1, color, is_muted: 0, pin_to_top: 0 });
      }
    }
  }
  if (subscribed.length === 0) return { subscribed, already };
  await insertSubscriptions(tx.db, toAdd);
  await setSubscriptionsActive(tx.db, toActivate, true);

  const channelMap = new Map(channels.map((c) => [c.id, c]));
  const alteredChannels = [...new Set(subscribed.map((s) => s.channel.id))].map((id) => channelMap.get(id)!);
  const a = await loadAudience(tx.db, realmId, alteredChannels);
  const altered = new Map<number, Set<number>>();
  for (const s of subscribed) {
    if (!altered.has(s.channel.id)) altered.set(s.channel.id, new Set());
    altered.get(s.channel.id)!.add(s.userId);
  }
  const roleOf = new Map(users.map((u) => [u.id, u.role]));
  const p = await loadChannelPresentation(tx.db, alteredChannels);

  // Channels the new subscribers could not see before need a create event first.
  for (const ch of alteredChannels) {
    const newSubs = [...altered.get(ch.id)!];
    let notify: number[] = [];
    if (ch.invite_only) {
      const meta = new Set([...a.admins, ...(a.groupMeta.get(ch.id) ?? [])]);
      notify = newSubs.filter((id) => !meta.has(id));
    } else if (!ch.is_web_public) notify = newSubs.filter((id) => roleOf.get(id) === ROLE_GUEST);
    if (notify.length) emitStreamCreate(tx, ch, presentChannel(ch, p), notify);
  }

  const rows = await subscriptionRowsFor(tx.db, [...new Set(subscribed.map((s) => s.userId))], alteredChannels.map((c) => c.id));
  const rowByKey = new Map(rows.map((r) => [`${r.user_id}:${r.channel_id}`, r]));
  const perUser = new Map<number, Record<string, unknown>[]>();
  for (const s of subscribed) {
    const row = rowByKey.get(`${s.userId}:${s.channel.id}`)!;
    if (!perUser.has(s.userId)) perUser.set(s.userId, []);
    perUser.get(s.userId)!.push(presentSubscription(s.channel, row, p, a.subscribers.get(s.channel.id) ?? []));
  }
  const settingsOf = new Map(users.map((u) => [u.id, u.settings]));
  for (const [userId, subs] of perUser) {
    tx.emit(realmId, { type: 'subscription', op: 'add', subscriptions: subs, __notification_defaults: streamNotificationDefaults(settingsOf.get(userId)) }, [userId]);
  }

  emitPeerEvents(tx, realmId, 'peer_add', altered, channelMap, a);
  await emitAccessChanges(app, tx, realmId, access);
  return { subscribed, already };
}

/**
 * Unsubscribes users. Events: peer_remove to those who still see the
 * channel, a subscription remove to each user, and a stream delete to users
 * who can no longer see the channel at all (private, or public for guests).
 */
export async function doUnsubscribe(
  tx: Tx,
  realmId: number,
  channels: readonly ChannelRow[],
  users: readonly SubscriberUser[],
  app: AppCtx,
): Promise<{ removed: SubPair[]; notSubscribed: SubPair[] }> {
  const existing = await subscriptionRowsFor(tx.db, users.map((u) => u.id), channels.map((c) => c.id));
  const active = new Map(existing.filter((r) => r.active).map((r) => [`${r.user_id}:${r.channel_id}`, r]));
  const removed: SubPair[] = [];
  const notSubscribed: SubPair[] = [];
  const rowIds: number[] = [];
  for (const u of users) {
    for (const ch of channels) {
      const row = active.get(`${u.id}:${ch.id}`);
      if (row) {
        removed.push({ userId: u.id, channel: ch });
        rowIds.push(row.id);
      } else notSubscribed.push({ userId: u.id, channel: ch });
    }
  }
  if (removed.length === 0) return { removed, notSubscribed };
  const access = await accessBefore(tx, realmId, app);
  await setSubscriptionsActive(tx.db, rowIds, false);

  const channelMap = new Map(channels.map((c) => [c.id, c]));
  const alteredChannels = [...new Set(removed.map((s) => s.channel.id))].map((id) => channelMap.get(id)!);
  const a = await loadAudience(tx.db, realmId, alteredChannels);
  const altered = new Map<number, Set<number>>();
  for (const s of removed) {
    if (!altered.has(s.channel.id)) altered.set(s.channel.id, new Set());
    altered.get(s.channel.id)!.add(s.userId);
  }
  emitPeerEvents(tx, realmId, 'peer_remove', altered, channelMap, a);

  const userMap = new Map(users.map((u) => [u.id, u]));
  for (const u of users) {
    const mine = removed.filter((s) => s.userId === u.id).map((s) => s.channel);
    if (mine.length === 0) continue;
    tx.emit(realmId, { type: 'subscription', op: 'remove', subscriptions: mine.map((c) => ({ name: c.name, stream_id: c.id })) }, [u.id]);
    if (isAdminRole(userMap.get(u.id)!.role)) continue;
    const lost = mine.filter((ch) => !metadataAudience(a, ch).has(u.id)).map((c) => c.id);
    if (lost.length) emitStreamDelete(tx, realmId, lost, [u.id]);
  }
  await emitAccessChanges(app, tx, realmId, access);
  return { removed, notSubscribed };
}

export const BOOLEAN_SUBSCRIPTION_PROPERTIES = [
  'in_home_view',
  'is_muted',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'pin_to_top',
  'wildcard_mentions_notify',
] as const;

/**
 * Changes one personal subscription setting. is_muted and its deprecated
 * inverse in_home_view are one column; both send the legacy in_home_view
 * event first, then the is_muted one, as Zulip does.
 */
export async function doChangeSubscriptionProperty(tx: Tx, sub: SubscriptionRow, property: string, value: boolean | string): Promise<void> {
  const realmId = sub.realm_id;
  const to = [sub.user_id];
  if (property === 'color') {
    if (typeof value !== 'string') throw badRequest('color is not a string');
    await updateSubscription(tx.db, sub.id, { color: value });
    tx.emit(realmId, { type: 'subscription', op: 'update', property: 'color', value, stream_id: sub.channel_id }, to);
    return;
  }
  const bool = value === true;
  if (property === 'in_home_view' || property === 'is_muted') {
    const muted = property === 'in_home_view' ? !bool : bool;
    await updateSubscription(tx.db, sub.id, { is_muted: muted ? 1 : 0 });
    tx.emit(realmId, { type: 'subscription', op: 'update', property: 'in_home_view', value: !muted, stream_id: sub.channel_id }, to);
    tx.emit(realmId, { type: 'subscription', op: 'update', property: 'is_muted', value: muted, stream_id: sub.channel_id }, to);
    return;
  }
  await updateSubscription(tx.db, sub.id, { [property]: bool ? 1 : 0 } as never);
  tx.emit(realmId, { type: 'subscription', op: 'update', property, value: bool, stream_id: sub.channel_id }, to);
}

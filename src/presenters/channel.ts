import { sql } from 'kysely';
import type { Db } from '../store/db.js';
import type { TxDb } from '../domain/context.js';
import { presentGroupSettings, type GroupSettingValue } from '../domain/rules/group-settings.js';
import { CHANNEL_PERMISSION_NAMES, settingColumn, streamPostPolicy, weeklyTraffic } from '../domain/rules/channels.js';
import { nowSeconds } from '../store/db.js';
import type { ChannelRow, SubscriptionRow } from '../store/channels.js';

type AnyDb = Db | TxDb;

/** What presenting channels needs besides their rows; loaded once for a whole list. */
export interface ChannelPresentation {
  readonly groupValues: ReadonlyMap<number, GroupSettingValue>;
  /** Names of the named groups used by can_send_message_group (for stream_post_policy). */
  readonly groupNames: ReadonlyMap<number, string>;
  readonly subscriberCounts: ReadonlyMap<number, number>;
  readonly now: number;
}

/** Group-setting values, send-group names and subscriber counts for these channels: four queries. */
export async function loadChannelPresentation(db: AnyDb, channels: readonly ChannelRow[]): Promise<ChannelPresentation> {
  const groupIds = channels.flatMap((c) => CHANNEL_PERMISSION_NAMES.map((n) => c[settingColumn(n)]));
  const groupValues = await presentGroupSettings(db, groupIds);
  const sendIds = [...new Set(channels.map((c) => c.can_send_message_group_id))];
  const groupNames = new Map<number, string>();
  const counts = new Map<number, number>();
  if (channels.length) {
    const named = await db.selectFrom('user_groups').select(['id', 'name']).where('id', 'in', sendIds).where('is_system_group', '=', 1).execute();
    for (const g of named) groupNames.set(g.id, g.name!);
    const rows = await db
      .selectFrom('subscriptions')
      .innerJoin('users', 'users.id', 'subscriptions.user_id')
      .select(['subscriptions.channel_id', sql<number>`count(*)`.as('n')])
      .where('subscriptions.channel_id', 'in', channels.map((c) => c.id))
      .where('subscriptions.active', '=', 1)
      .where('users.is_active', '=', 1)
      .groupBy('subscriptions.channel_id')
      .execute();
    for (const r of rows) counts.set(r.channel_id, Number(r.n));
  }
  return { groupValues, groupNames, subscriberCounts: counts, now: nowSeconds() };
}

function groupValue(p: ChannelPresentation, id: number): GroupSettingValue {
  const v = p.groupValues.get(id);
  if (v === undefined) throw new Error(`group ${id} not loaded`);
  return typeof v === 'number' ? v : { direct_members: [...v.direct_members], direct_subgroups: [...v.direct_subgroups] };
}

/**
 * A channel as GET /streams, /register (streams, never_subscribed) and
 * stream events present it, in Zulip's stream_to_dict order.
 * `traffic: false` gives stream_weekly_traffic null, as in creation events.
 */
export function presentChannel(ch: ChannelRow, p: ChannelPresentation, opts: { traffic?: boolean } = {}): Record<string, unknown> {
  const postPolicy = streamPostPolicy(p.groupNames.get(ch.can_send_message_group_id) ?? null);
  const out: Record<string, unknown> = { is_archived: ch.deactivated === 1 };
  for (const name of CHANNEL_PERMISSION_NAMES) out[name] = groupValue(p, ch[settingColumn(name)]);
  Object.assign(out, {
    creator_id: ch.creator_id,
    date_created: ch.date_created,
    description: ch.description,
    first_message_id: ch.first_message_id,
    folder_id: ch.folder_id,
    is_recently_active: ch.is_recently_active === 1,
    history_public_to_subscribers: ch.history_public_to_subscribers === 1,
    invite_only: ch.invite_only === 1,
    is_web_public: ch.is_web_public === 1,
    message_retention_days: ch.message_retention_days,
    name: ch.name,
    rendered_description: ch.rendered_description,
    stream_id: ch.id,
    stream_post_policy: postPolicy,
    is_announcement_only: postPolicy === 2,
    stream_weekly_traffic: opts.traffic === false ? null : weeklyTraffic(ch.date_created, p.now),
    subscriber_count: p.subscriberCounts.get(ch.id) ?? 0,
    topics_policy: ch.topics_policy,
  });
  return out;
}

const nullableBool = (v: number | null): boolean | null => (v === null ? null : v === 1);

/** The personal part of a subscription (Zulip's Subscription.API_FIELDS plus in_home_view). */
export function presentSubscriptionFields(sub: SubscriptionRow): Record<string, unknown> {
  return {
    audible_notifications: nullableBool(sub.audible_notifications),
    color: sub.color,
    desktop_notifications: nullableBool(sub.desktop_notifications),
    email_notifications: nullableBool(sub.email_notifications),
    in_home_view: sub.is_muted !== 1,
    is_muted: sub.is_muted === 1,
    pin_to_top: sub.pin_to_top === 1,
    push_notifications: nullableBool(sub.push_notifications),
    wildcard_mentions_notify: nullableBool(sub.wildcard_mentions_notify),
  };
}

/** A subscription as /register (subscriptions, unsubscribed), GET /users/me/subscriptions and subscription add events present it. */
export function presentSubscription(ch: ChannelRow, sub: SubscriptionRow, p: ChannelPresentation, subscribers?: readonly number[]): Record<string, unknown> {
  // Filled in place (same key order as spreading both into a new object, one object fewer).
  const out = Object.assign(presentChannel(ch, p), presentSubscriptionFields(sub));
  if (subscribers) out.subscribers = [...subscribers];
  return out;
}

/** Per-channel notification settings for clients without notification_settings_null: nulls become the user's defaults. */
export function fillNotificationDefaults(sub: Record<string, unknown>, userDefaults: Readonly<Record<string, unknown>>): void {
  for (const key of ['desktop_notifications', 'audible_notifications', 'push_notifications', 'email_notifications']) {
    if (sub[key] === null) sub[key] = Boolean(userDefaults[`enable_stream_${key}`] ?? false);
  }
}

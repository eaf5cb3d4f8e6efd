import type { ClientView, ParleyEvent, RegisterContext, StateModule } from './types.js';
import { hasMetadataAccess, isAdmin, isGuest, type ChannelViewer } from '../domain/access/channels.js';
import { fillNotificationDefaults, presentChannel, presentSubscriptionFields } from '../presenters/channel.js';
import { defaultChannelIds, subscriberIdsInRealm, type ChannelRow, type SubscriptionRow } from '../store/channels.js';
import { streamNotificationDefaults } from '../domain/actions/subscriptions.js';
import { shapeStreamEvent, withNotificationDefaults } from '../events/channel-shapers.js';
import { CHANNEL_PERMISSION_NAMES } from '../domain/rules/channels.js';
import { sharedChannelJson, sharedChannelPresentation, sharedChannels, sharedSubscriptionRows, sharedViewer } from './shared.js';
import { fragmentOr } from './json-fragment.js';

/**
 * /register state of channels: `subscriptions`, `unsubscribed`,
 * `never_subscribed` (fetch type "subscription"), `streams` ("stream") and
 * `realm_default_streams` ("default_streams"), with their events. Lists are
 * sorted by name, as Zulip's are.
 */

type Dict = Record<string, any>;
const byName = (a: Dict, b: Dict): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Zulip's validate_user_access_to_subscribers_helper, for one channel. */
function canSeeSubscribers(v: ChannelViewer, ch: ChannelRow): boolean {
  if (ch.is_web_public) return true;
  if (isGuest(v)) return v.subscribed.has(ch.id);
  if (!ch.invite_only || isAdmin(v)) return true;
  return v.subscribed.has(ch.id) || hasMetadataAccess(v, ch);
}

/** A presented channel's JSON text (from the shared texts; presented here only if they lack it). */
async function channelTextOf(ctx: RegisterContext, texts: ReadonlyMap<number, string>): Promise<(ch: ChannelRow) => string> {
  const channels = await sharedChannels(ctx);
  const pres = channels.every((c) => texts.has(c.id)) ? undefined : await sharedChannelPresentation(ctx);
  return (ch) => texts.get(ch.id) ?? JSON.stringify(presentChannel(ch, pres!));
}

interface Listed {
  readonly name: string;
  readonly text: string;
}

/** The JSON array of entries sorted by name (stable, as sorting the objects). */
function jsonList(entries: Listed[]): string {
  return '[' + entries.sort(byName).map((e) => e.text).join(',') + ']';
}

/** The text of an object whose JSON is `base` with the members of `extra` (a non-empty object) appended. */
const extend = (base: string, extra: Record<string, unknown>): string => base.slice(0, -1) + ',' + JSON.stringify(extra).slice(1);

async function fetchSubscriptions(ctx: RegisterContext): Promise<Record<string, unknown>> {
  // Independent reads (shared with the streams and messages modules), concurrent on PostgreSQL.
  const [v, channels, rows, json, subscribers] = await Promise.all([
    sharedViewer(ctx),
    sharedChannels(ctx),
    sharedSubscriptionRows(ctx),
    sharedChannelJson(ctx),
    ctx.includeSubscribers ? subscriberIdsInRealm(ctx.app.db, ctx.user.realmId) : null,
  ]);
  const channelText = await channelTextOf(ctx, json.texts);
  const rowByChannel = new Map(rows.map((r) => [r.channel_id, r]));
  const subsFor = (ch: ChannelRow): number[] | undefined =>
    subscribers ? (canSeeSubscribers(v, ch) ? (subscribers.get(ch.id) ?? []) : []) : undefined;
  const defaults = ctx.capabilities.notification_settings_null ? undefined : streamNotificationDefaults(ctx.userRow.settings);
  // presentSubscription's key order: the channel's, the personal fields (nulls filled for clients
  // without notification_settings_null), then subscribers.
  const subscription = (ch: ChannelRow, row: SubscriptionRow): Listed => {
    const personal = presentSubscriptionFields(row);
    if (defaults) fillNotificationDefaults(personal, defaults);
    const s = subsFor(ch);
    if (s) personal.subscribers = [...s];
    return { name: ch.name, text: extend(channelText(ch), personal) };
  };
  const subscriptions: Listed[] = [];
  const unsubscribed: Listed[] = [];
  const neverSubscribed: Listed[] = [];
  for (const ch of channels) {
    const row = rowByChannel.get(ch.id);
    if (row?.active) subscriptions.push(subscription(ch, row));
    else if (row) {
      // Previously subscribed: listed only while the user can still see the channel.
      if (ch.is_web_public || (!isGuest(v) && (!ch.invite_only || hasMetadataAccess(v, ch)))) unsubscribed.push(subscription(ch, row));
    } else if (hasMetadataAccess(v, ch)) {
      const s = subsFor(ch);
      neverSubscribed.push({ name: ch.name, text: s ? extend(channelText(ch), { subscribers: s }) : channelText(ch) });
    }
  }
  const f = ctx.jsonFragments;
  return {
    subscriptions: fragmentOr(f, jsonList(subscriptions)),
    unsubscribed: fragmentOr(f, jsonList(unsubscribed)),
    never_subscribed: fragmentOr(f, jsonList(neverSubscribed)),
  };
}

const LISTS = ['subscriptions', 'unsubscribed', 'never_subscribed'] as const;

/**
 * realm_user update {is_active: false}: anonymous channel permission
 * settings list active users only, so clients drop the user from them (as
 * they do for realm and user-group settings; reactivation sends stream
 * update events with the restored values).
 */
function dropFromChannelSettings(entries: Dict[], userId: number): void {
  for (const entry of entries) {
    for (const name of CHANNEL_PERMISSION_NAMES) {
      const v = entry[name];
      if (v && typeof v === 'object' && Array.isArray(v.direct_members) && v.direct_members.includes(userId)) {
        entry[name] = { ...v, direct_members: v.direct_members.filter((id: number) => id !== userId) };
      }
    }
  }
}

const deactivatedUserId = (e: ParleyEvent): number | undefined => {
  const person = e.person as Dict | undefined;
  return e.op === 'update' && person && person.is_active === false ? (person.user_id as number) : undefined;
};

function allEntries(state: Record<string, unknown>): Dict[] {
  return LISTS.flatMap((k) => (state[k] as Dict[] | undefined) ?? []);
}

function setCount(entry: Dict, delta: number): void {
  if ('subscribers' in entry) entry.subscriber_count = entry.subscribers.length;
  else entry.subscriber_count += delta;
}

/** Applies a stream update to a channel dict (Zulip's apply_event for stream/update). */
function applyStreamUpdate(entry: Dict, e: ParleyEvent, onlyKnown: boolean): void {
  const prop = e.property as string;
  if (onlyKnown && !(prop in entry)) return;
  entry[prop] = e.value;
  if (prop === 'description') entry.rendered_description = e.rendered_description;
  if (e.history_public_to_subscribers !== undefined) entry.history_public_to_subscribers = e.history_public_to_subscribers;
  if (e.is_web_public !== undefined) entry.is_web_public = e.is_web_public;
}

function applyPeers(entries: Dict[], e: ParleyEvent, tracked: boolean, add: boolean): void {
  const streamIds = new Set(e.stream_ids as number[]);
  const users = e.user_ids as number[];
  for (const entry of entries) {
    if (!streamIds.has(entry.stream_id)) continue;
    if (tracked && 'subscribers' in entry) {
      const set = new Set<number>(entry.subscribers);
      for (const u of users) add ? set.add(u) : set.delete(u);
      entry.subscribers = [...set].sort((a, b) => a - b);
    }
    setCount(entry, add ? users.length : -users.length);
  }
}

function applySubscriptions(state: Record<string, unknown>, raw: ParleyEvent, view: ClientView): void {
  const tracked = view.includeSubscribers !== false;
  if (raw.type === 'stream') {
    const e = shapeStreamEvent(raw, view.capabilities.archived_channels);
    if (!e) return;
    if (e.op === 'create') {
      const known = new Set(allEntries(state).map((x) => x.stream_id));
      for (const s of e.streams as Dict[]) {
        if (known.has(s.stream_id)) continue;
        const d = structuredClone(s);
        if (tracked) d.subscribers = d.subscribers ?? [];
        else delete d.subscribers;
        (state.never_subscribed as Dict[]).push(d);
      }
      (state.never_subscribed as Dict[]).sort(byName);
    } else if (e.op === 'delete') {
      const ids = new Set(e.stream_ids as number[]);
      for (const k of LISTS) state[k] = (state[k] as Dict[]).filter((x) => !ids.has(x.stream_id));
    } else if (e.op === 'update') {
      for (const k of LISTS) {
        for (const entry of state[k] as Dict[]) if (entry.stream_id === e.stream_id) applyStreamUpdate(entry, e, false);
        if (e.property === 'name') (state[k] as Dict[]).sort(byName);
      }
    }
    return;
  }
  if (raw.type === 'realm_user') {
    // peer_remove events came first and did the subscriber lists and counts.
    const userId = deactivatedUserId(raw);
    if (userId !== undefined) dropFromChannelSettings(allEntries(state), userId);
    return;
  }
  if (raw.type !== 'subscription') return;
  if (raw.__without_archived_channels === true && view.capabilities.archived_channels) return;
  if (raw.__inherited_default === true && view.capabilities.notification_settings_null) return;
  const e = view.capabilities.notification_settings_null ? raw : withNotificationDefaults(raw, raw.__notification_defaults as Dict | undefined);
  const subs = state.subscriptions as Dict[];
  switch (e.op) {
    case 'add': {
      const added = new Set((e.subscriptions as Dict[]).map((s) => s.stream_id));
      const existing = new Set(subs.map((s) => s.stream_id));
      for (const s of e.subscriptions as Dict[]) {
        if (existing.has(s.stream_id)) continue;
        const copy = structuredClone(s);
        if (!tracked) delete copy.subscribers;
        subs.push(copy);
      }
      subs.sort(byName);
      state.unsubscribed = (state.unsubscribed as Dict[]).filter((s) => !added.has(s.stream_id));
      state.never_subscribed = (state.never_subscribed as Dict[]).filter((s) => !added.has(s.stream_id));
      break;
    }
    case 'remove': {
      const removed = new Set((e.subscriptions as Dict[]).map((s) => s.stream_id));
      const moving = subs.filter((s) => removed.has(s.stream_id));
      for (const s of moving) {
        if ('subscribers' in s) s.subscribers = s.subscribers.filter((id: number) => id !== view.user.id);
        setCount(s, -1);
      }
      state.subscriptions = subs.filter((s) => !removed.has(s.stream_id));
      state.unsubscribed = [...(state.unsubscribed as Dict[]), ...moving].sort(byName);
      break;
    }
    case 'update':
      // Personal settings; unsubscribed entries keep theirs too (and show inherited defaults).
      for (const s of [...subs, ...(state.unsubscribed as Dict[])]) if (s.stream_id === e.stream_id) s[e.property as string] = e.value;
      break;
    case 'peer_add':
    case 'peer_remove':
      applyPeers(allEntries(state), e, tracked, e.op === 'peer_add');
      break;
    default:
      break;
  }
}

export const subscriptionsModule: StateModule = {
  fetchTypes: ['subscription'],
  fetch: fetchSubscriptions,
  eventTypes: ['subscription', 'stream', 'realm_user'],
  apply: applySubscriptions,
};

/** `streams`: every channel the user has metadata access to (Zulip's do_get_streams with include_all). */
async function fetchStreams(ctx: RegisterContext): Promise<Record<string, unknown>> {
  const [v, all, json] = await Promise.all([sharedViewer(ctx), sharedChannels(ctx), sharedChannelJson(ctx)]);
  const channelText = await channelTextOf(ctx, json.texts);
  const listed = all.filter((c) => hasMetadataAccess(v, c)).map((c) => ({ name: c.name, text: channelText(c) }));
  return { streams: fragmentOr(ctx.jsonFragments, jsonList(listed)) };
}

function applyStreams(state: Record<string, unknown>, raw: ParleyEvent, view: ClientView): void {
  const streams = state.streams as Dict[];
  if (raw.type === 'realm_user') {
    const userId = deactivatedUserId(raw);
    if (userId !== undefined) dropFromChannelSettings(streams, userId);
    return;
  }
  if (raw.type === 'stream') {
    const e = shapeStreamEvent(raw, view.capabilities.archived_channels);
    if (!e) return;
    if (e.op === 'create') {
      const known = new Set(streams.map((s) => s.stream_id));
      for (const s of e.streams as Dict[]) {
        if (known.has(s.stream_id)) continue;
        const d = structuredClone(s);
        delete d.subscribers;
        streams.push(d);
      }
      streams.sort(byName);
    } else if (e.op === 'delete') {
      const ids = new Set(e.stream_ids as number[]);
      state.streams = streams.filter((s) => !ids.has(s.stream_id));
    } else if (e.op === 'update') {
      for (const s of streams) if (s.stream_id === e.stream_id) applyStreamUpdate(s, e, true);
      if (e.property === 'name') streams.sort(byName);
    }
    return;
  }
  if (raw.type !== 'subscription') return;
  if (raw.__without_archived_channels === true && view.capabilities.archived_channels) return;
  if (raw.op === 'add') {
    for (const sub of raw.subscriptions as Dict[]) {
      const s = streams.find((x) => x.stream_id === sub.stream_id);
      if (s) s.subscriber_count = sub.subscriber_count;
    }
  } else if (raw.op === 'remove') {
    for (const sub of raw.subscriptions as Dict[]) {
      const s = streams.find((x) => x.stream_id === sub.stream_id);
      if (s) s.subscriber_count -= 1;
    }
  } else if (raw.op === 'peer_add' || raw.op === 'peer_remove') {
    const ids = new Set(raw.stream_ids as number[]);
    const n = (raw.user_ids as number[]).length;
    for (const s of streams) if (ids.has(s.stream_id)) s.subscriber_count += raw.op === 'peer_add' ? n : -n;
  }
}

export const streamsModule: StateModule = {
  fetchTypes: ['stream'],
  fetch: fetchStreams,
  eventTypes: ['stream', 'subscription', 'realm_user'],
  apply: applyStreams,
};

/** `realm_default_streams`: ids of the default channels (guests see none). */
export const defaultStreamsModule: StateModule = {
  fetchTypes: ['default_streams'],
  async fetch(ctx) {
    return { realm_default_streams: isGuest(ctx.user) ? [] : await defaultChannelIds(ctx.app.db, ctx.user.realmId) };
  },
  eventTypes: ['default_streams'],
  apply(state, e) {
    state.realm_default_streams = [...(e.default_streams as number[])];
  },
};

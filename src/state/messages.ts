import { FLAG_MENTIONED, FLAG_STARRED, FLAG_STREAM_WILDCARD, FLAG_TOPIC_WILDCARD } from '../domain/rules/message-flags.js';
import { realmSettings } from '../domain/rules/realm-settings.js';
import { maxMessageIdForUser } from '../store/messages.js';
import { recentConversations, starredIds, unreadRows } from '../store/message-search.js';
import type { ClientView, ParleyEvent, RegisterContext, StateModule } from './types.js';
import { sharedRealm, sharedSubscriptionRows, sharedUserTopics } from './shared.js';
import { topicKey } from '../domain/rules/topics.js';
import { VISIBILITY_FOLLOWED, VISIBILITY_MUTED, VISIBILITY_UNMUTED } from '../domain/rules/channels.js';

const VISIBILITY_INHERIT = 0;

/**
 * The messages part of /register: max_message_id (fetch type "message"),
 * unread_msgs ("message" and "update_message_flags" together, as in Zulip),
 * starred_messages and recent_private_conversations, kept current by
 * message, update_message_flags, update_message and delete_message events.
 *
 * Muting, as Zulip's extract_unread_data_from_um_rows / aggregate_unread_data:
 * every unread message stays listed, but `count` leaves out channel messages
 * that are muted (a muted channel, unless the topic is unmuted or followed;
 * a muted topic in an unmuted channel), and `mentions` leaves out wildcard
 * mentions there (direct mentions always count). What that needs (muted
 * channels, topic policies, each unread message's mention kind) rides along
 * as a non-enumerable property of unread_msgs, so that subscription
 * is_muted, user_topic and message events can recount a stale state.
 */
export const MAX_UNREAD_MESSAGES = 50000;
const MAX_STARRED = 10000;
const RECENT_CONVERSATIONS_SCAN = 1000;

interface UnreadStream {
  stream_id: number;
  topic: string;
  unread_message_ids: number[];
}
interface UnreadPm {
  other_user_id: number;
  sender_id: number;
  unread_message_ids: number[];
}
interface UnreadHuddle {
  user_ids_string: string;
  unread_message_ids: number[];
}
export interface UnreadMsgs {
  pms: UnreadPm[];
  streams: UnreadStream[];
  huddles: UnreadHuddle[];
  mentions: number[];
  count: number;
  old_unreads_missing: boolean;
}
/** What count and mentions are derived from (never sent: a non-enumerable property of unread_msgs). */
interface Muting {
  readonly channels: Set<number>;
  /** Topic visibility policy by `${stream_id}:${topic_key}`. */
  readonly policies: Map<string, number>;
  /** `${stream_id}:${topic_key}` of each unread channel message. */
  readonly topicOf: Map<number, string>;
  readonly direct: Set<number>;
  readonly wildcard: Set<number>;
}
const MUTING = Symbol('muting');

/**
 * The muting facts of a state. A state that went through JSON (a client's,
 * or the register+events tests') lost them: they are rebuilt from its
 * `subscriptions` and `user_topics` when present, and its mentions are
 * taken as direct ones.
 */
function mutingOf(u: UnreadMsgs, state?: Record<string, unknown>): Muting {
  const holder = u as unknown as { [MUTING]?: Muting };
  let m = holder[MUTING];
  if (!m) {
    m = { channels: new Set(), policies: new Map(), topicOf: new Map(), direct: new Set(u.mentions), wildcard: new Set() };
    for (const sub of (state?.subscriptions as { stream_id: number; is_muted?: boolean }[] | undefined) ?? []) if (sub.is_muted) m.channels.add(sub.stream_id);
    for (const t of (state?.user_topics as { stream_id: number; topic_name: string; visibility_policy: number }[] | undefined) ?? []) m.policies.set(topicRef(t.stream_id, t.topic_name), t.visibility_policy);
    for (const b of u.streams) for (const id of b.unread_message_ids) m.topicOf.set(id, topicRef(b.stream_id, b.topic));
    Object.defineProperty(u, MUTING, { value: m, enumerable: false, writable: false });
  }
  return m;
}

const topicRef = (streamId: number, topic: string): string => `${streamId}:${topicKey(topic)}`;

/** Zulip's is_row_muted. */
function isMutedTopic(m: Muting, ref: string): boolean {
  const policy = m.policies.get(ref) ?? VISIBILITY_INHERIT;
  const channelId = Number(ref.slice(0, ref.indexOf(':')));
  if (m.channels.has(channelId)) return policy !== VISIBILITY_UNMUTED && policy !== VISIBILITY_FOLLOWED;
  return policy === VISIBILITY_MUTED;
}

/** count and mentions from the lists and the muting facts (Zulip's aggregate_unread_data). */
function recount(u: UnreadMsgs): void {
  const m = mutingOf(u);
  let count = 0;
  const mentions: number[] = [];
  for (const b of [...u.pms, ...u.huddles]) {
    count += b.unread_message_ids.length;
    for (const id of b.unread_message_ids) if (m.direct.has(id) || m.wildcard.has(id)) mentions.push(id);
  }
  for (const b of u.streams) {
    for (const id of b.unread_message_ids) {
      const ref = m.topicOf.get(id);
      const muted = ref !== undefined && isMutedTopic(m, ref);
      if (!muted) count++;
      if (m.direct.has(id) || (m.wildcard.has(id) && !muted)) mentions.push(id);
    }
  }
  u.count = count;
  u.mentions = mentions.sort(byNumber);
}

/** The mention kinds of an unread message, from its flags. */
interface MentionKind {
  readonly direct: boolean;
  readonly wildcard: boolean;
}
const NO_MENTION: MentionKind = { direct: false, wildcard: false };
const kindOfFlags = (flags: readonly string[]): MentionKind => ({
  direct: flags.includes('mentioned'),
  wildcard: flags.includes('stream_wildcard_mentioned') || flags.includes('topic_wildcard_mentioned'),
});

interface Conversation {
  max_message_id: number;
  user_ids: number[];
}

/** Where one unread message belongs. */
type Bucket = { kind: 'stream'; streamId: number; topic: string } | { kind: 'pm'; other: number } | { kind: 'huddle'; key: string };

const byNumber = (a: number, b: number): number => a - b;

function insertSorted(list: number[], id: number): void {
  if (list.includes(id)) return;
  list.push(id);
  list.sort(byNumber);
}

function bucketFor(me: number, streamId: number | null, topic: string, dmKey: string | null): Bucket {
  if (streamId !== null) return { kind: 'stream', streamId, topic };
  const ids = (dmKey ?? String(me)).split(',').map(Number);
  const others = ids.filter((id) => id !== me);
  if (others.length <= 1) return { kind: 'pm', other: others[0] ?? me };
  return { kind: 'huddle', key: ids.join(',') };
}

/**
 * Adds one unread message; `realTopic` is the stored topic (the bucket may show the empty topic's display name).
 * `recountNow` false leaves count and mentions to one recount after a batch (they depend only on the lists and muting).
 */
function addUnread(u: UnreadMsgs, id: number, b: Bucket, kind: MentionKind, realTopic?: string, recountNow = true): void {
  const m = mutingOf(u);
  if (kind.direct) m.direct.add(id);
  else m.direct.delete(id);
  if (kind.wildcard) m.wildcard.add(id);
  else m.wildcard.delete(id);
  if (b.kind === 'stream') {
    m.topicOf.set(id, topicRef(b.streamId, realTopic ?? b.topic));
    const lower = b.topic.toLowerCase();
    let s = u.streams.find((x) => x.stream_id === b.streamId && x.topic.toLowerCase() === lower);
    if (!s) {
      s = { stream_id: b.streamId, topic: b.topic, unread_message_ids: [] };
      u.streams.push(s);
      u.streams.sort((x, y) => x.stream_id - y.stream_id || (x.topic.toLowerCase() < y.topic.toLowerCase() ? -1 : x.topic.toLowerCase() > y.topic.toLowerCase() ? 1 : 0));
    }
    insertSorted(s.unread_message_ids, id);
  } else if (b.kind === 'pm') {
    let p = u.pms.find((x) => x.other_user_id === b.other);
    if (!p) {
      p = { other_user_id: b.other, sender_id: b.other, unread_message_ids: [] };
      u.pms.push(p);
      u.pms.sort((x, y) => x.other_user_id - y.other_user_id);
    }
    insertSorted(p.unread_message_ids, id);
  } else {
    let h = u.huddles.find((x) => x.user_ids_string === b.key);
    if (!h) {
      h = { user_ids_string: b.key, unread_message_ids: [] };
      u.huddles.push(h);
      u.huddles.sort((x, y) => (x.user_ids_string < y.user_ids_string ? -1 : x.user_ids_string > y.user_ids_string ? 1 : 0));
    }
    insertSorted(h.unread_message_ids, id);
  }
  if (recountNow) recount(u);
}

function removeUnread(u: UnreadMsgs, ids: ReadonlySet<number>): void {
  const prune = <T extends { unread_message_ids: number[] }>(list: T[]): T[] =>
    list.filter((b) => (b.unread_message_ids = b.unread_message_ids.filter((id) => !ids.has(id))).length > 0);
  u.pms = prune(u.pms);
  u.streams = prune(u.streams);
  u.huddles = prune(u.huddles);
  const m = mutingOf(u);
  for (const id of ids) {
    m.topicOf.delete(id);
    m.direct.delete(id);
    m.wildcard.delete(id);
  }
  recount(u);
}

const shownTopic = (topic: string, view: ClientView, displayName: string): string =>
  topic === '' && !view.capabilities.empty_topic_name ? displayName : topic;

/** The flags this event gives the viewer: shaped events carry them, emitted ones hold them in a hint. */
function eventFlags(event: ParleyEvent, view: ClientView): string[] {
  const hint = event.__flags as Record<string, string[]> | undefined;
  if (hint) return hint[String(view.user.id)] ?? (event.type === 'update_message' ? ['read'] : []);
  return Array.isArray(event.flags) ? (event.flags as string[]) : [];
}

function eventMessageIds(event: ParleyEvent): number[] {
  if (Array.isArray(event.message_ids)) return event.message_ids as number[];
  if (typeof event.message_id === 'number') return [event.message_id];
  return [];
}

/** unread_msgs: the unread rows (newest first, capped), leaving out channels the user left. */
async function unreadMsgs(ctx: RegisterContext): Promise<UnreadMsgs> {
  const { app, user, capabilities } = ctx;
  const [realm, rows, subscriptionRows, topics] = await Promise.all([sharedRealm(ctx), unreadRows(app.db, user.id, MAX_UNREAD_MESSAGES), sharedSubscriptionRows(ctx), sharedUserTopics(ctx)]);
  const display = realmSettings(realm.settings).realm_empty_topic_display_name;
  const left = new Set(subscriptionRows.filter((r) => !r.active).map((r) => r.channel_id));
  const u: UnreadMsgs = { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: rows.length === MAX_UNREAD_MESSAGES };
  const m = mutingOf(u);
  for (const r of subscriptionRows) if (r.active && r.is_muted) m.channels.add(r.channel_id);
  for (const t of topics) m.policies.set(`${t.channel_id}:${t.topic_lower}`, t.visibility_policy);
  for (const r of rows.reverse()) {
    if (r.stream_id !== null && left.has(r.stream_id)) continue;
    const topic = r.topic === '' && !capabilities.empty_topic_name ? display : r.topic;
    const kind = { direct: (r.flags & FLAG_MENTIONED) !== 0, wildcard: (r.flags & (FLAG_STREAM_WILDCARD | FLAG_TOPIC_WILDCARD)) !== 0 };
    addUnread(u, r.message_id, bucketFor(user.id, r.stream_id, topic, r.dm_key), kind, r.topic, false);
  }
  recount(u);
  return u;
}

export const messagesModule: StateModule = {
  fetchTypes: ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'],
  eventTypes: ['message', 'update_message_flags', 'update_message', 'delete_message', 'subscription', 'user_topic'],
  async fetch(ctx) {
    const { app, user, want } = ctx;
    const db = app.db;
    const out: Record<string, unknown> = {};
    // Independent reads, concurrent on PostgreSQL (SQLite runs them one after the other anyway).
    const withUnreads = want('message') && want('update_message_flags');
    const [maxId, unread, starred, convs] = await Promise.all([
      want('message') ? maxMessageIdForUser(db, user.id) : undefined,
      withUnreads ? unreadMsgs(ctx) : undefined,
      want('starred_messages') ? starredIds(db, user.id, FLAG_STARRED, MAX_STARRED) : undefined,
      want('recent_private_conversations') ? recentConversations(db, user.id, RECENT_CONVERSATIONS_SCAN) : undefined,
    ]);
    if (maxId !== undefined) out.max_message_id = maxId;
    if (unread) out.unread_msgs = unread;
    if (starred) out.starred_messages = starred;
    if (convs) {
      out.recent_private_conversations = convs
        .map((c) => ({ max_message_id: c.max_id, user_ids: c.dm_key.split(',').map(Number).filter((id) => id !== user.id) }))
        .sort((a, b) => b.max_message_id - a.max_message_id);
    }
    return out;
  },
  apply(state, event, view) {
    const me = view.user.id;
    const unread = state.unread_msgs as UnreadMsgs | undefined;
    if (unread) mutingOf(unread, state);
    const starred = state.starred_messages as number[] | undefined;
    const recent = state.recent_private_conversations as Conversation[] | undefined;
    switch (event.type) {
      case 'message': {
        const m = event.message as Record<string, any>;
        const flags = eventFlags(event, view);
        if (typeof state.max_message_id === 'number') state.max_message_id = Math.max(state.max_message_id, m.id as number);
        const isStream = m.type === 'stream';
        const dmKey = isStream ? null : (m.display_recipient as { id: number }[]).map((r) => r.id).sort(byNumber).join(',');
        if (unread && !flags.includes('read')) {
          const topic = isStream ? shownTopic(m.subject as string, view, (event.__empty_topic_name as string | undefined) ?? 'general chat') : '';
          addUnread(unread, m.id as number, bucketFor(me, isStream ? (m.stream_id as number) : null, topic, dmKey), kindOfFlags(flags), isStream ? (m.subject as string) : undefined);
        }
        if (starred && flags.includes('starred')) insertSorted(starred, m.id as number);
        if (recent && dmKey !== null) {
          const others = dmKey.split(',').map(Number).filter((id) => id !== me);
          const c = recent.find((x) => x.user_ids.join(',') === others.join(','));
          if (c) c.max_message_id = Math.max(c.max_message_id, m.id as number);
          else recent.push({ max_message_id: m.id as number, user_ids: others });
          recent.sort((a, b) => b.max_message_id - a.max_message_id);
        }
        break;
      }
      case 'update_message_flags': {
        const ids = (event.messages as number[] | undefined) ?? [];
        const add = event.op === 'add';
        if (event.flag === 'read' && unread) {
          if (add && event.all === true) {
            unread.pms = [];
            unread.streams = [];
            unread.huddles = [];
            unread.mentions = [];
            unread.count = 0;
            const mu = mutingOf(unread);
            mu.topicOf.clear();
            mu.direct.clear();
            mu.wildcard.clear();
          } else if (add) removeUnread(unread, new Set(ids));
          else {
            const details = (event.message_details ?? {}) as Record<string, Record<string, any>>;
            for (const id of ids) {
              const d = details[String(id)];
              if (!d) continue;
              let b: Bucket;
              let realTopic: string | undefined;
              // message_details says only "mentioned" (direct, or a wildcard where not muted): kept as direct.
              const kind = d.mentioned === true ? { direct: true, wildcard: false } : NO_MENTION;
              if (d.type === 'stream') {
                realTopic = d.topic as string;
                b = { kind: 'stream', streamId: d.stream_id as number, topic: shownTopic(realTopic, view, (event.__empty_topic_name as string | undefined) ?? 'general chat') };
              }
              else {
                const others = (d.user_ids as number[]).filter((x) => x !== me);
                b = others.length <= 1 ? { kind: 'pm', other: others[0] ?? me } : { kind: 'huddle', key: [...others, me].sort(byNumber).join(',') };
              }
              addUnread(unread, id, b, kind, realTopic);
            }
          }
        }
        if (event.flag === 'starred' && starred) {
          if (add) for (const id of ids) insertSorted(starred, id);
          else state.starred_messages = starred.filter((id) => !ids.includes(id));
        }
        break;
      }
      case 'delete_message': {
        const ids = new Set(eventMessageIds(event));
        if (unread) removeUnread(unread, ids);
        if (starred) state.starred_messages = starred.filter((id) => !ids.has(id));
        if (recent) {
          // A conversation whose newest message went is recomputed by a fresh fetch; drop it here.
          state.recent_private_conversations = recent.filter((c) => !ids.has(c.max_message_id));
        }
        break;
      }
      case 'update_message': {
        if (!unread) break;
        const ids = eventMessageIds(event);
        const moved = new Set(ids);
        if (typeof event.new_stream_id === 'number' || typeof event.subject === 'string') {
          const newStream = typeof event.new_stream_id === 'number' ? event.new_stream_id : undefined;
          const newTopic = typeof event.subject === 'string' ? event.subject : undefined;
          const mu = mutingOf(unread);
          const hit: { id: number; b: Bucket; kind: MentionKind; realTopic: string }[] = [];
          for (const s of unread.streams) {
            for (const id of s.unread_message_ids) {
              if (!moved.has(id)) continue;
              const topic = newTopic === undefined ? s.topic : shownTopic(newTopic, view, (event.__empty_topic_name as string | undefined) ?? 'general chat');
              const oldRef = mu.topicOf.get(id) ?? topicRef(s.stream_id, s.topic);
              const realTopic = newTopic ?? oldRef.slice(oldRef.indexOf(':') + 1);
              hit.push({ id, b: { kind: 'stream', streamId: newStream ?? s.stream_id, topic }, kind: { direct: mu.direct.has(id), wildcard: mu.wildcard.has(id) }, realTopic });
            }
          }
          if (hit.length) {
            removeUnread(unread, new Set(hit.map((h) => h.id)));
            for (const h of hit) addUnread(unread, h.id, h.b, h.kind, h.realTopic);
          }
        }
        if (typeof event.rendered_content === 'string' && typeof event.message_id === 'number') {
          const id = event.message_id;
          const isUnread = [...unread.pms, ...unread.streams, ...unread.huddles].some((b) => b.unread_message_ids.includes(id));
          if (isUnread) {
            const kind = kindOfFlags(eventFlags(event, view));
            const mu = mutingOf(unread);
            if (kind.direct) mu.direct.add(id);
            else mu.direct.delete(id);
            if (kind.wildcard) mu.wildcard.add(id);
            else mu.wildcard.delete(id);
            recount(unread);
          }
        }
        break;
      }
      case 'user_topic': {
        if (!unread) break;
        const mu = mutingOf(unread);
        const ref = topicRef(event.stream_id as number, event.topic_name as string);
        if (event.visibility_policy === VISIBILITY_INHERIT) mu.policies.delete(ref);
        else mu.policies.set(ref, event.visibility_policy as number);
        recount(unread);
        break;
      }
      case 'subscription': {
        if (!unread) break;
        const mu = mutingOf(unread);
        if (event.op === 'update' && (event.property === 'is_muted' || event.property === 'in_home_view')) {
          // Both events come for one change; in_home_view is the inverse.
          const muted = event.property === 'is_muted' ? event.value === true : event.value === false;
          if (muted) mu.channels.add(event.stream_id as number);
          else mu.channels.delete(event.stream_id as number);
          recount(unread);
          break;
        }
        if (event.op === 'add') {
          for (const sub of (event.subscriptions as { stream_id: number; is_muted?: boolean }[] | undefined) ?? []) {
            if (sub.is_muted) mu.channels.add(sub.stream_id);
            else mu.channels.delete(sub.stream_id);
          }
          recount(unread);
          break;
        }
        if (event.op !== 'remove') break;
        for (const sub of (event.subscriptions as { stream_id: number }[] | undefined) ?? []) mu.channels.delete(sub.stream_id);
        const gone = new Set(((event.subscriptions as { stream_id: number }[] | undefined) ?? []).map((s) => s.stream_id));
        const ids = new Set(unread.streams.filter((s) => gone.has(s.stream_id)).flatMap((s) => s.unread_message_ids));
        removeUnread(unread, ids);
        break;
      }
    }
  },
};

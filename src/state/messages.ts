import { FLAG_MENTIONED, FLAG_STARRED, FLAG_STREAM_WILDCARD, FLAG_TOPIC_WILDCARD } from '../domain/rules/message-flags.js';
import { realmSettings } from '../domain/rules/realm-settings.js';
import { maxMessageIdForUser } from '../store/messages.js';
import { recentConversations, starredIds, unreadRows } from '../store/message-search.js';
import type { ClientView, ParleyEvent, RegisterContext, StateModule } from './types.js';
import { sharedRealm, sharedSubscriptionRows } from './shared.js';

/**
 * The messages part of /register: max_message_id (fetch type "message"),
 * unread_msgs ("message" and "update_message_flags" together, as in Zulip),
 * starred_messages and recent_private_conversations, kept current by
 * message, update_message_flags, update_message and delete_message events.
 *
 * Simplification: `count` and `mentions` do not leave out muted channels and
 * topics (the events carry no muting, so a stale state could not follow a
 * mute change); every unread message counts.
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

function addUnread(u: UnreadMsgs, id: number, b: Bucket, mentioned: boolean): void {
  if (b.kind === 'stream') {
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
  if (mentioned) insertSorted(u.mentions, id);
  u.count = countOf(u);
}

const countOf = (u: UnreadMsgs): number =>
  [...u.pms, ...u.streams, ...u.huddles].reduce((n, b) => n + b.unread_message_ids.length, 0);

function removeUnread(u: UnreadMsgs, ids: ReadonlySet<number>): void {
  const prune = <T extends { unread_message_ids: number[] }>(list: T[]): T[] =>
    list.filter((b) => (b.unread_message_ids = b.unread_message_ids.filter((id) => !ids.has(id))).length > 0);
  u.pms = prune(u.pms);
  u.streams = prune(u.streams);
  u.huddles = prune(u.huddles);
  u.mentions = u.mentions.filter((id) => !ids.has(id));
  u.count = countOf(u);
}

const isMentionFlags = (flags: readonly string[]): boolean =>
  flags.includes('mentioned') || flags.includes('stream_wildcard_mentioned') || flags.includes('topic_wildcard_mentioned');

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
  const [realm, rows, subscriptionRows] = await Promise.all([sharedRealm(ctx), unreadRows(app.db, user.id, MAX_UNREAD_MESSAGES), sharedSubscriptionRows(ctx)]);
  const display = realmSettings(realm.settings).realm_empty_topic_display_name;
  const left = new Set(subscriptionRows.filter((r) => !r.active).map((r) => r.channel_id));
  const u: UnreadMsgs = { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: rows.length === MAX_UNREAD_MESSAGES };
  for (const r of rows.reverse()) {
    if (r.stream_id !== null && left.has(r.stream_id)) continue;
    const topic = r.topic === '' && !capabilities.empty_topic_name ? display : r.topic;
    const mentioned = (r.flags & (FLAG_MENTIONED | FLAG_STREAM_WILDCARD | FLAG_TOPIC_WILDCARD)) !== 0;
    addUnread(u, r.message_id, bucketFor(user.id, r.stream_id, topic, r.dm_key), mentioned);
  }
  u.count = countOf(u);
  return u;
}

export const messagesModule: StateModule = {
  fetchTypes: ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'],
  eventTypes: ['message', 'update_message_flags', 'update_message', 'delete_message', 'subscription'],
  async fetch(ctx) {
    const { app, user, want, capabilities } = ctx;
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
          addUnread(unread, m.id as number, bucketFor(me, isStream ? (m.stream_id as number) : null, topic, dmKey), isMentionFlags(flags));
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
          } else if (add) removeUnread(unread, new Set(ids));
          else {
            const details = (event.message_details ?? {}) as Record<string, Record<string, any>>;
            for (const id of ids) {
              const d = details[String(id)];
              if (!d) continue;
              let b: Bucket;
              if (d.type === 'stream') b = { kind: 'stream', streamId: d.stream_id as number, topic: d.topic as string };
              else {
                const others = (d.user_ids as number[]).filter((x) => x !== me);
                b = others.length <= 1 ? { kind: 'pm', other: others[0] ?? me } : { kind: 'huddle', key: [...others, me].sort(byNumber).join(',') };
              }
              addUnread(unread, id, b, d.mentioned === true);
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
          const hit: { id: number; b: Bucket; mentioned: boolean }[] = [];
          for (const s of unread.streams) {
            for (const id of s.unread_message_ids) {
              if (!moved.has(id)) continue;
              const topic = newTopic === undefined ? s.topic : shownTopic(newTopic, view, (event.__empty_topic_name as string | undefined) ?? 'general chat');
              hit.push({ id, b: { kind: 'stream', streamId: newStream ?? s.stream_id, topic }, mentioned: unread.mentions.includes(id) });
            }
          }
          if (hit.length) {
            removeUnread(unread, new Set(hit.map((h) => h.id)));
            for (const h of hit) addUnread(unread, h.id, h.b, h.mentioned);
          }
        }
        if (typeof event.rendered_content === 'string' && typeof event.message_id === 'number') {
          const id = event.message_id;
          const isUnread = [...unread.pms, ...unread.streams, ...unread.huddles].some((b) => b.unread_message_ids.includes(id));
          if (isUnread) {
            if (isMentionFlags(eventFlags(event, view))) insertSorted(unread.mentions, id);
            else unread.mentions = unread.mentions.filter((x) => x !== id);
          }
        }
        break;
      }
      case 'subscription': {
        if (event.op !== 'remove' || !unread) break;
        const gone = new Set(((event.subscriptions as { stream_id: number }[] | undefined) ?? []).map((s) => s.stream_id));
        const ids = new Set(unread.streams.filter((s) => gone.has(s.stream_id)).flatMap((s) => s.unread_message_ids));
        if (ids.size) removeUnread(unread, ids);
        break;
      }
    }
  },
};

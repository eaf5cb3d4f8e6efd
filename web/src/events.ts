// POST /register, then the GET /events long-poll loop. A lost queue
// (BAD_EVENT_QUEUE_ID, e.g. after a server restart) is re-registered and the state
// rebuilt while the route (narrow) stays; network errors are retried with backoff.
import { ApiError, call } from './api';
import { applyEvent } from './apply';
import { feedBox, messages, refreshFeed } from './feed-data';
import { changed, dmKey, pendingToasts, store } from './store';
import type { State, UnreadInfo } from './store';
import type { Route } from './narrow';
import type { ChannelFolder, Presence, RealmEmoji, Subscription, User, UserSettings, UserStatus, UserTopic } from './types';

type Reg = Record<string, unknown> & { queue_id: string; last_event_id: number };

let queueId = '';
let lastEventId = -1;
let generation = 0;
let pollAbort: AbortController | null = null;

async function register(): Promise<Reg> {
  return call<Reg>('POST', 'register', {
    apply_markdown: true,
    client_gravatar: false,
    slim_presence: true,
    include_subscribers: false,
    client_capabilities: {
      notification_settings_null: true,
      bulk_message_deletion: true,
      user_avatar_url_field_optional: false,
      stream_typing_notifications: true,
      user_settings_object: true,
      empty_topic_name: true,
      simplified_presence_events: true,
      archived_channels: false,
    },
  });
}

function buildState(r: Reg, route: Route, prev: State | null): State {
  const myId = r.user_id as number;
  const users = new Map<number, User>();
  for (const u of [...((r.realm_users as User[]) ?? []), ...((r.cross_realm_bots as User[]) ?? [])]) users.set(u.user_id, u);
  for (const u of (r.realm_non_active_users as User[]) ?? []) users.set(u.user_id, { ...u, is_active: false });
  const subs = new Map<number, Subscription>();
  for (const s of r.subscriptions as Subscription[]) subs.set(s.stream_id, s);
  const otherChannels = new Map<number, { stream_id: number; name: string }>();
  for (const s of [...((r.unsubscribed as Subscription[]) ?? []), ...((r.never_subscribed as Subscription[]) ?? [])])
    otherChannels.set(s.stream_id, { stream_id: s.stream_id, name: s.name });
  const userTopics = new Map<string, UserTopic>();
  for (const t of (r.user_topics as UserTopic[]) ?? []) userTopics.set(`${t.stream_id}:${t.topic_name.toLowerCase()}`, t);
  const userStatus = new Map<number, UserStatus>();
  for (const [id, v] of Object.entries((r.user_status as Record<string, UserStatus>) ?? {})) userStatus.set(Number(id), v);
  const presence = new Map<number, Presence>();
  for (const [id, v] of Object.entries((r.presences as Record<string, Presence>) ?? {})) presence.set(Number(id), v);
  const realmEmoji = new Map<string, RealmEmoji>();
  for (const [id, v] of Object.entries((r.realm_emoji as Record<string, RealmEmoji>) ?? {})) realmEmoji.set(id, v);

  const unread = new Map<number, UnreadInfo>();
  const um = r.unread_msgs as {
    streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
    pms: { other_user_id?: number; sender_id?: number; unread_message_ids: number[] }[];
    huddles: { user_ids_string: string; unread_message_ids: number[] }[];
    mentions: number[];
  };
  for (const t of um.streams) for (const id of t.unread_message_ids) unread.set(id, { kind: 'stream', stream_id: t.stream_id, topic: t.topic });
  for (const p of um.pms) {
    const key = String(p.other_user_id ?? p.sender_id);
    for (const id of p.unread_message_ids) unread.set(id, { kind: 'dm', key });
  }
  for (const h of um.huddles) {
    const ids = h.user_ids_string.split(',').map(Number).filter((id) => id !== myId);
    const key = dmKey(ids);
    for (const id of h.unread_message_ids) unread.set(id, { kind: 'dm', key });
  }
  const recentDms = new Map<string, number>();
  for (const c of (r.recent_private_conversations as { user_ids: number[]; max_message_id: number }[]) ?? [])
    recentDms.set(c.user_ids.length ? dmKey(c.user_ids) : String(myId), c.max_message_id);

  return {
    myId,
    myEmail: r.email as string,
    realm: r,
    settings: r.user_settings as UserSettings,
    users,
    subs,
    otherChannels,
    folders: ((r.channel_folders as ChannelFolder[]) ?? []).filter((f) => !f.is_archived),
    userTopics,
    userStatus,
    presence,
    realmEmoji,
    unread,
    mentions: new Set(um.mentions),
    starred: new Set((r.starred_messages as number[]) ?? []),
    recentDms,
    topics: prev?.topics ?? new Map(),
    typing: [],
    route,
    toasts: prev?.toasts ?? [...pendingToasts.splice(0)],
    reconnecting: false,
    serverTimeOffset: typeof r.server_timestamp === 'number' ? r.server_timestamp - Date.now() / 1000 : 0,
  };
}

/** Registers and starts the event loop; rejects (e.g. 401) when that is impossible. */
export async function start(route: Route): Promise<void> {
  const r = await register();
  store.s = buildState(r, route, null);
  queueId = r.queue_id;
  lastEventId = r.last_event_id;
  changed();
  void pollLoop(++generation);
}

export function stop(): void {
  generation++;
  pollAbort?.abort();
  if (queueId) void call('DELETE', 'events', { queue_id: queueId }, { quiet401: true }).catch(() => {});
  queueId = '';
  // Nothing of this account may remain for the next one to sign in on this page.
  messages.clear();
  feedBox.f = null;
}

/** Waits before a retry; the browser coming back online or the tab regaining focus cuts the wait short. */
function backoff(ms: number): Promise<void> {
  return new Promise((res) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener('online', done);
      window.removeEventListener('focus', done);
      res();
    };
    const timer = setTimeout(done, ms);
    window.addEventListener('online', done);
    window.addEventListener('focus', done);
  });
}

async function reRegister(gen: number): Promise<void> {
  let delay = 250;
  for (;;) {
    if (gen !== generation) return;
    try {
      const r = await register();
      if (gen !== generation) return;
      const prev = store.s;
      store.s = buildState(r, prev?.route ?? { view: 'inbox' }, prev);
      queueId = r.queue_id;
      lastEventId = r.last_event_id;
      changed();
      refreshFeed();
      return;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      if (store.s) {
        store.s.reconnecting = true;
        changed();
      }
      await backoff(delay);
      delay = Math.min(delay * 2, 4000);
    }
  }
}

async function pollLoop(gen: number): Promise<void> {
  let delay = 250;
  // After a failure the next poll does not block, so that a recovered connection is
  // seen (and the "Reconnecting…" notice cleared) at once, not at the next event.
  let recovering = false;
  while (gen === generation) {
    pollAbort = new AbortController();
    try {
      const r = await call<{ events: ({ id: number; type: string } & Record<string, unknown>)[] }>(
        'GET',
        'events',
        { queue_id: queueId, last_event_id: lastEventId, dont_block: recovering },
        { signal: pollAbort.signal },
      );
      if (gen !== generation) return;
      delay = 250;
      recovering = false;
      const s = store.s;
      if (s?.reconnecting) s.reconnecting = false;
      for (const ev of r.events) {
        lastEventId = Math.max(lastEventId, ev.id);
        try {
          applyEvent(ev);
        } catch (err) {
          console.error('event not applied', ev, err);
        }
      }
      changed();
    } catch (e) {
      if (gen !== generation || (e as Error).name === 'AbortError') return;
      if (e instanceof ApiError && e.code === 'BAD_EVENT_QUEUE_ID') {
        await reRegister(gen);
        continue;
      }
      if (e instanceof ApiError && e.status === 401) return;
      if (store.s) {
        store.s.reconnecting = true;
        changed();
      }
      recovering = true;
      await backoff(delay + Math.random() * 250);
      // Capped low: a restarting server is back within seconds and the user is waiting.
      delay = Math.min(delay * 2, 4000);
    }
  }
}

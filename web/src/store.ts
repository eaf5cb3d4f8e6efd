// The client's copy of the server state: filled from POST /register, kept current
// by the event loop (events.ts), read by every component. One module-level store
// with a change counter: any change re-renders the app (Preact diffing keeps that
// cheap at chat scale), which keeps the data flow obvious.
import { useEffect, useState } from 'preact/hooks';
import type {
  ChannelFolder, Message, Presence, RealmEmoji, Subscription, User, UserSettings, UserStatus, UserTopic,
} from './types';
import type { Route } from './narrow';

export type UnreadInfo = { kind: 'stream'; stream_id: number; topic: string } | { kind: 'dm'; key: string };

export interface Toast {
  id: number;
  text: string;
  kind: 'error' | 'info';
}

export interface TypingEntry {
  /** "s:<stream_id>:<topic lower>" or "d:<sorted ids of everyone>" */
  key: string;
  userId: number;
  expires: number;
}

export interface State {
  myId: number;
  myEmail: string;
  realm: Record<string, unknown>;
  settings: UserSettings;
  users: Map<number, User>;
  subs: Map<number, Subscription>;
  /** Channels the user can see but is not subscribed to (for names of messages in search results). */
  otherChannels: Map<number, { stream_id: number; name: string }>;
  folders: ChannelFolder[];
  userTopics: Map<string, UserTopic>;
  userStatus: Map<number, UserStatus>;
  presence: Map<number, Presence>;
  realmEmoji: Map<string, RealmEmoji>;
  unread: Map<number, UnreadInfo>;
  mentions: Set<number>;
  starred: Set<number>;
  /** DM conversations by key (sorted ids of the other users) with their newest message id. */
  recentDms: Map<string, number>;
  /** Topics of a channel as fetched from GET /users/me/{id}/topics. */
  topics: Map<number, { name: string; max_id: number }[]>;
  typing: TypingEntry[];
  route: Route;
  toasts: Toast[];
  /** True while the event queue is broken and being re-established. */
  reconnecting: boolean;
  serverTimeOffset: number;
}

export const store: { s: State | null } = { s: null };
let version = 0;
const listeners = new Set<() => void>();

/** Marks the state as changed; every subscribed component re-renders once per frame. */
let scheduled = false;
export function changed(): void {
  version++;
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    for (const l of listeners) l();
  });
}

export function subscribe(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Re-renders the calling component whenever the store changes. */
export function useStoreVersion(): number {
  const [, set] = useState(0);
  useEffect(() => subscribe(() => set(version)), []);
  return version;
}

export function st(): State {
  if (!store.s) throw new Error('state not loaded');
  return store.s;
}

let toastId = 0;
export function toast(text: string, kind: Toast['kind'] = 'error'): void {
  const s = store.s;
  const t = { id: ++toastId, text, kind };
  if (!s) {
    pendingToasts.push(t);
    changed();
    return;
  }
  s.toasts = [...s.toasts.slice(-3), t];
  changed();
  setTimeout(() => dismissToast(t.id), kind === 'error' ? 8000 : 4000);
}
export const pendingToasts: Toast[] = [];

export function dismissToast(id: number): void {
  const s = store.s;
  if (!s) return;
  s.toasts = s.toasts.filter((t) => t.id !== id);
  changed();
}

/** Shows an error in words; for use in `.catch(showError)`. */
export function showError(e: unknown): void {
  if ((e as Error)?.name === 'AbortError') return;
  toast((e as { msg?: string }).msg ?? (e as Error).message ?? String(e));
}

export function userTopicKey(streamId: number, topic: string): string {
  return `${streamId}:${topic.toLowerCase()}`;
}

/** visibility_policy of a topic: 0 inherit, 1 muted, 2 unmuted, 3 followed. */
export function topicPolicy(s: State, streamId: number, topic: string): number {
  return s.userTopics.get(userTopicKey(streamId, topic))?.visibility_policy ?? 0;
}

export function isTopicMuted(s: State, streamId: number, topic: string): boolean {
  const p = topicPolicy(s, streamId, topic);
  if (p === 1) return true;
  if (p === 2 || p === 3) return false;
  return s.subs.get(streamId)?.is_muted ?? false;
}

export function dmKey(ids: number[]): string {
  return [...ids].sort((a, b) => a - b).join(',');
}

export function userName(s: State, id: number): string {
  return s.users.get(id)?.full_name ?? `Unknown user ${id}`;
}

export function channelName(s: State, id: number | undefined): string {
  if (id === undefined) return '';
  return s.subs.get(id)?.name ?? s.otherChannels.get(id)?.name ?? `channel ${id}`;
}

/** Unread counts derived from the unread map (cheap: one pass over unread ids). */
export interface UnreadCounts {
  total: number;
  byStream: Map<number, number>;
  byTopic: Map<string, number>;
  byDm: Map<string, number>;
  dmTotal: number;
  mentions: number;
}

// The counts walk every unread message (10,000 of them in W1's realm) and were computed by
// the header and the sidebar on every render: they are computed once per store version
// (every change of the unread set goes through changed(), which bumps the version).
let countsCache: { s: State; version: number; counts: UnreadCounts } | undefined;

export function unreadCounts(s: State): UnreadCounts {
  const c = countsCache;
  if (c && c.s === s && c.version === version) return c.counts;
  const counts = computeUnreadCounts(s);
  countsCache = { s, version, counts };
  return counts;
}

function computeUnreadCounts(s: State): UnreadCounts {
  const byStream = new Map<number, number>();
  const byTopic = new Map<string, number>();
  const byDm = new Map<string, number>();
  let total = 0;
  let dmTotal = 0;
  const mutedTopics = new Map<string, boolean>();
  for (const info of s.unread.values()) {
    if (info.kind === 'dm') {
      byDm.set(info.key, (byDm.get(info.key) ?? 0) + 1);
      dmTotal++;
      total++;
    } else {
      const tk = userTopicKey(info.stream_id, info.topic);
      const n = byTopic.get(tk);
      byTopic.set(tk, (n ?? 0) + 1);
      // Muting is per topic: asked once per topic, then read back from mutedTopics.
      let muted = mutedTopics.get(tk);
      if (muted === undefined) mutedTopics.set(tk, (muted = isTopicMuted(s, info.stream_id, info.topic)));
      if (!muted) {
        byStream.set(info.stream_id, (byStream.get(info.stream_id) ?? 0) + 1);
        total++;
      }
    }
  }
  let mentions = 0;
  for (const id of s.mentions) if (s.unread.has(id)) mentions++;
  return { total, byStream, byTopic, byDm, dmTotal, mentions };
}

export function now(): number {
  return Date.now() / 1000 + (store.s?.serverTimeOffset ?? 0);
}

export function canEdit(s: State, m: Message): boolean {
  if (m.sender_id !== s.myId || s.realm.realm_allow_message_editing === false) return false;
  const limit = s.realm.realm_message_content_edit_limit_seconds as number | null | undefined;
  return limit == null || limit === 0 || now() - m.timestamp < limit + 5;
}

type GroupSetting = number | { direct_members?: number[]; direct_subgroups?: number[] };

/** Whether I hold a group-setting permission (a group id, or direct members + subgroups). */
export function inGroupSetting(s: State, setting: unknown): boolean {
  if (setting == null) return false;
  const groups = new Map(((s.realm.realm_user_groups as { id: number; members: number[]; direct_subgroup_ids: number[] }[]) ?? []).map((g) => [g.id, g]));
  const seen = new Set<number>();
  const inGroup = (id: number): boolean => {
    if (seen.has(id)) return false;
    seen.add(id);
    const g = groups.get(id);
    return !!g && (g.members.includes(s.myId) || g.direct_subgroup_ids.some(inGroup));
  };
  const v = setting as GroupSetting;
  if (typeof v === 'number') return inGroup(v);
  return (v.direct_members ?? []).includes(s.myId) || (v.direct_subgroups ?? []).some(inGroup);
}

export function canDelete(s: State, m: Message): boolean {
  if (inGroupSetting(s, s.realm.realm_can_delete_any_message_group)) return true;
  if (m.sender_id !== s.myId) return false;
  if (s.realm.realm_can_delete_own_message_group !== undefined && !inGroupSetting(s, s.realm.realm_can_delete_own_message_group)) return false;
  const limit = s.realm.realm_message_content_delete_limit_seconds as number | null | undefined;
  return limit == null || now() - m.timestamp < limit;
}

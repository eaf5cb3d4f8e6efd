// Messages of the current narrow: keyset pages of GET /messages (anchor + num_before /
// num_after), a cache of message objects by id shared with the event handlers, and
// the "mark as read when seen" batching.
import { call } from './api';
import { narrowKey, narrowMatches } from './narrow';
import { changed, isTopicMuted, showError, st, store } from './store';
import type { Message, NarrowTerm } from './types';

export const messages = new Map<number, Message>();

export interface Feed {
  key: string;
  narrow: NarrowTerm[];
  ids: number[];
  foundOldest: boolean;
  foundNewest: boolean;
  loadingOlder: boolean;
  loadingNewer: boolean;
  loading: boolean;
  error?: string;
  /** Message to scroll to after loading (a #.../near/<id> link), else the newest. */
  near?: number;
  /** Id of the first unread message when the feed was opened, for the "new messages" marker. */
  firstUnread?: number;
  /** A page fetch failed: no automatic retries (scrolling tries again). */
  pageFailed?: boolean;
  /** Set by "mark as unread from here": seen messages stay unread until the narrow is left. */
  noAutoRead?: boolean;
  /** Live messages of this narrow that arrived while the first page was loading. */
  live?: number[];
  /** The older part of the first page, rendered only after the newest part has been painted. */
  held?: number[];
}

export const feedBox: { f: Feed | null } = { f: null };
let abort: AbortController | null = null;
const PAGE = 60;
/** Messages of the first page rendered before the first paint (more than a screenful). */
const FIRST_PAINT = 20;

interface MessagesResponse {
  messages: Message[];
  found_oldest: boolean;
  found_newest: boolean;
}

/** The Combined feed leaves out muted channels and topics, as Zulip's does (in:home). */
export function serverNarrow(narrow: NarrowTerm[]): NarrowTerm[] {
  return narrow.length ? narrow : [{ operator: 'in', operand: 'home' }];
}

function fetchPage(narrow: NarrowTerm[], anchor: number | 'newest', before: number, after: number, signal?: AbortSignal, quiet401 = false) {
  return call<MessagesResponse>(
    'GET',
    'messages',
    {
      anchor: String(anchor),
      num_before: before,
      num_after: after,
      include_anchor: typeof anchor !== 'number' || before + after === 0 || after > 0,
      narrow: serverNarrow(narrow),
      apply_markdown: true,
      client_gravatar: false,
    },
    { signal, quiet401 },
  );
}

function remember(list: Message[]): number[] {
  for (const m of list) messages.set(m.id, m);
  return list.map((m) => m.id);
}

/**
 * Opens a narrow: the newest page (or the page around `near`). With `prefetch` (the page
 * load, before /register has answered, so the two requests run in parallel) a failure is
 * silent and leaves no feed behind, so that show() fetches again once the app is up.
 */
export async function openFeed(narrow: NarrowTerm[], near?: number, prefetch = false): Promise<void> {
  abort?.abort();
  abort = new AbortController();
  const f: Feed = {
    key: narrowKey(narrow) + (near ?? ''),
    narrow,
    ids: [],
    foundOldest: false,
    foundNewest: false,
    loadingOlder: false,
    loadingNewer: false,
    loading: true,
    near,
  };
  feedBox.f = f;
  changed();
  try {
    const r = await fetchPage(narrow, near ?? 'newest', PAGE, near === undefined ? 0 : PAGE, abort.signal, prefetch);
    if (feedBox.f !== f) return;
    f.ids = remember(r.messages);
    f.foundOldest = r.found_oldest;
    f.foundNewest = r.found_newest;
    f.firstUnread = r.messages.find((m) => !m.flags.includes('read'))?.id;
    // Messages the event queue delivered while the page was on its way: the ones the
    // page does not hold yet follow it (only when the page reaches the newest message).
    if (f.live && f.foundNewest) {
      const have = new Set(f.ids);
      const first = f.ids[0];
      const extra = f.live.filter((id) => !have.has(id) && messages.has(id) && (f.foundOldest || first === undefined || id > first));
      if (extra.length) f.ids = [...f.ids, ...extra].sort((a, b) => a - b);
    }
    f.live = undefined;
    // The newest messages are painted first; the rest of the page follows a frame later
    // (as if scrolled back to), so that the first paint lays out a screenful, not 60.
    if (near === undefined && f.ids.length > FIRST_PAINT) {
      f.held = f.ids.slice(0, f.ids.length - FIRST_PAINT);
      f.ids = f.ids.slice(f.held.length);
      requestAnimationFrame(() => setTimeout(() => releaseHeld(f)));
    }
  } catch (e) {
    if ((e as Error).name === 'AbortError') return;
    if (prefetch) {
      if (feedBox.f === f) feedBox.f = null;
      return;
    }
    f.error = (e as { msg?: string }).msg ?? String(e);
    showError(e);
  }
  f.loading = false;
  changed();
}

/**
 * After a prefetched first page: /register's max_message_id is the newest message the
 * user could see when the event queue was made. A newer one than the page's newest may
 * have been sent between the page's query and the queue's creation (neither in the page
 * nor in the queue): the page is then extended forward, which finds it if it belongs here.
 */
export function closeGap(maxMessageId: number | undefined): void {
  const f = feedBox.f;
  if (!f || f.loading || !f.foundNewest || maxMessageId === undefined) return;
  const last = f.ids[f.ids.length - 1];
  if (last === undefined) {
    if (maxMessageId > 0) void openFeed(f.narrow, f.near);
    return;
  }
  if (maxMessageId <= last) return;
  f.foundNewest = false;
  void loadNewer();
}

/** Reloads the open narrow after a re-registration (the queue missed events). */
export function refreshFeed(): void {
  const f = feedBox.f;
  if (f) void openFeed(f.narrow, f.near);
}

function releaseHeld(f: Feed): void {
  if (feedBox.f !== f || !f.held) return;
  f.ids = [...f.held, ...f.ids];
  f.held = undefined;
  changed();
}

export async function loadOlder(): Promise<void> {
  const f = feedBox.f;
  if (f?.held) return releaseHeld(f);
  if (!f || f.loading || f.loadingOlder || f.foundOldest || f.ids.length === 0) return;
  f.loadingOlder = true;
  changed();
  try {
    const r = await fetchPage(f.narrow, f.ids[0]!, PAGE, 0);
    if (feedBox.f !== f) return;
    const ids = remember(r.messages).filter((id) => id < f.ids[0]!);
    f.ids = [...ids, ...f.ids];
    f.foundOldest = r.found_oldest;
    f.pageFailed = false;
  } catch (e) {
    f.pageFailed = true;
    showError(e);
  }
  f.loadingOlder = false;
  changed();
}

export async function loadNewer(): Promise<void> {
  const f = feedBox.f;
  if (!f || f.loading || f.loadingNewer || f.foundNewest || f.ids.length === 0) return;
  f.loadingNewer = true;
  changed();
  try {
    const last = f.ids[f.ids.length - 1]!;
    const r = await fetchPage(f.narrow, last, 0, PAGE);
    if (feedBox.f !== f) return;
    const ids = remember(r.messages).filter((id) => id > last);
    f.ids = [...f.ids, ...ids];
    f.foundNewest = r.found_newest;
    f.pageFailed = false;
  } catch (e) {
    f.pageFailed = true;
    showError(e);
  }
  f.loadingNewer = false;
  changed();
}

/** A new message from the event queue: cache it and append it when it belongs here. */
export function addLiveMessage(m: Message): void {
  messages.set(m.id, m);
  const f = feedBox.f;
  if (!f || (!f.foundNewest && !f.loading)) return;
  const s = st();
  if (narrowMatches(f.narrow, m, s.myId) !== true) return;
  if (f.narrow.length === 0 && m.type === 'stream' && isTopicMuted(s, m.stream_id!, m.subject)) return;
  if (f.loading) {
    (f.live ??= []).push(m.id);
    return;
  }
  if (f.ids.includes(m.id)) return;
  f.ids = [...f.ids, m.id].sort((a, b) => a - b);
}

export function removeMessages(ids: number[]): void {
  const gone = new Set(ids);
  for (const id of ids) messages.delete(id);
  const f = feedBox.f;
  if (f) f.ids = f.ids.filter((id) => !gone.has(id));
}

// --- marking read as messages are seen -------------------------------------

const pendingRead = new Set<number>();
let readTimer: ReturnType<typeof setTimeout> | undefined;

/** Called by the feed for unread messages that are on screen while the window has focus. */
export function markSeen(id: number): void {
  const s = store.s;
  if (!s || !s.unread.has(id) || pendingRead.has(id) || feedBox.f?.noAutoRead) return;
  pendingRead.add(id);
  clearTimeout(readTimer);
  readTimer = setTimeout(flushRead, 300);
}

async function flushRead(): Promise<void> {
  const ids = [...pendingRead];
  if (!ids.length) return;
  try {
    await call('POST', 'messages/flags', { messages: ids, op: 'add', flag: 'read' });
    // The update_message_flags event updates the counts; apply locally too so the
    // counts go down at once even if the event is slow.
    const s = st();
    for (const id of ids) {
      s.unread.delete(id);
      const m = messages.get(id);
      if (m && !m.flags.includes('read')) m.flags = [...m.flags, 'read'];
    }
    changed();
  } catch (e) {
    showError(e);
  } finally {
    for (const id of ids) pendingRead.delete(id);
  }
}

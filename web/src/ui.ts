// UI state that is not server data: the route, the compose box, the selected
// message, open panels. Changes go through changed() like the server state.
import { feedBox, openFeed } from './feed-data';
import { hashToRoute, routeToHash } from './narrow';
import type { NameLookup, Route } from './narrow';
import { changed, channelName, st, store, userName } from './store';
import type { NarrowTerm } from './types';
import { draftKey, loadDrafts } from './drafts';

export interface ComposeState {
  open: boolean;
  mode: 'stream' | 'dm';
  channel: string;
  topic: string;
  /** DM recipients as typed: names or emails, comma-separated. */
  to: string;
  content: string;
  /** Set when the box should take focus on its next render. */
  focus?: 'content' | 'topic' | 'channel' | 'to';
}

export const ui = {
  compose: { open: false, mode: 'stream', channel: '', topic: '', to: '', content: '' } as ComposeState,
  selectedId: undefined as number | undefined,
  settingsOpen: false,
  helpOpen: false,
  leftOpen: false,
  rightOpen: false,
  /** The message whose action menu or emoji picker is open. */
  menuFor: undefined as number | undefined,
  pickerFor: undefined as number | undefined,
  editing: undefined as { id: number; text: string } | undefined,
  confirmDelete: undefined as number | undefined,
};

export function names(): NameLookup {
  const s = st();
  return {
    myId: s.myId,
    channelName: (id) => channelName(s, id),
    userName: (id) => userName(s, id),
    userEmail: (id) => s.users.get(id)?.email,
    channelId(name) {
      const n = name.toLowerCase();
      for (const c of s.subs.values()) if (c.name.toLowerCase() === n) return c.stream_id;
      for (const c of s.otherChannels.values()) if (c.name.toLowerCase() === n) return c.stream_id;
      return undefined;
    },
    userId(x) {
      const n = x.toLowerCase().trim();
      for (const u of s.users.values()) if (u.email.toLowerCase() === n) return u.user_id;
      for (const u of s.users.values()) if (u.full_name.toLowerCase() === n) return u.user_id;
      return undefined;
    },
  };
}

export function homeRoute(): Route {
  const v = store.s?.settings.web_home_view;
  if (v === 'all_messages') return { view: 'feed', narrow: [] };
  if (v === 'recent') return { view: 'recent' };
  return { view: 'inbox' };
}

export function routeFromLocation(): Route {
  const r = hashToRoute(location.hash) ?? homeRoute();
  if (r.view === 'feed' && store.s) {
    // Links may name channels and users instead of giving ids (#narrow/channel/general).
    const n = names();
    r.narrow = r.narrow.map((t) => {
      if ((t.operator === 'channel' || t.operator === 'sender') && typeof t.operand === 'string') {
        const id = t.operator === 'channel' ? n.channelId(t.operand) : n.userId(t.operand);
        return id === undefined ? t : { ...t, operand: id };
      }
      return t;
    });
  }
  return r;
}

/** Shows a route: updates the hash (so back/forward work) and loads the feed. */
export function navigate(r: Route): void {
  const hash = routeToHash(r, names());
  if (location.hash !== hash) history.pushState(null, '', hash);
  show(r);
}

export function narrowTo(narrow: NarrowTerm[], near?: number): void {
  navigate(near === undefined ? { view: 'feed', narrow } : { view: 'feed', narrow, near });
}

export function show(r: Route): void {
  const s = st();
  s.route = r;
  ui.selectedId = undefined;
  ui.leftOpen = false;
  if (r.view === 'feed') {
    const key = JSON.stringify(r.narrow) + (r.near ?? '');
    if (feedBox.f?.key !== key) void openFeed(r.narrow, r.near);
    presetCompose(r.narrow);
  }
  changed();
}

/** Points the compose box at the narrow's conversation, as Zulip does. */
function presetCompose(narrow: NarrowTerm[]): void {
  const c = ui.compose;
  if (c.content.trim()) return; // do not retarget a message being written
  const s = st();
  const ch = narrow.find((t) => t.operator === 'channel' && !t.negated);
  const topic = narrow.find((t) => t.operator === 'topic' && !t.negated);
  const dm = narrow.find((t) => t.operator === 'dm' && !t.negated);
  if (ch) {
    c.mode = 'stream';
    c.channel = channelName(s, Number(ch.operand));
    c.topic = topic ? String(topic.operand) : '';
  } else if (dm && Array.isArray(dm.operand)) {
    c.mode = 'dm';
    c.to = dm.operand.map((id) => s.users.get(id)?.email ?? '').filter(Boolean).join(', ');
  } else return;
  // A draft for this conversation comes back into the box.
  const d = loadDrafts()[draftKey(c.mode === 'stream' ? 'stream' : 'private', c.channel, c.topic, c.to)];
  if (d) c.content = d.content;
}

export function openCompose(patch: Partial<ComposeState>): void {
  Object.assign(ui.compose, { open: true, focus: 'content' }, patch);
  changed();
}

export function closeCompose(): void {
  ui.compose.open = false;
  changed();
}

// The signed-in app: header with search, left sidebar, the current view with the
// compose box, right sidebar; global keyboard shortcuts, theme, title, presence.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, logout } from './api';
import { expireTyping } from './apply';
import { Compose } from './compose';
import { stop } from './events';
import { Feed, describeNarrow } from './feed';
import { feedBox, messages } from './feed-data';
import { dmPeers, narrowToSearch, parseSearch } from './narrow';
import { LeftSidebar } from './sidebar';
import { RightSidebar } from './rightbar';
import { SettingsPanel } from './settings';
import { changed, channelName, dismissToast, dmKey, isTopicMuted, showError, st, unreadCounts, userName } from './store';
import type { State } from './store';
import { closeCompose, homeRoute, names, narrowTo, navigate, openCompose, ui } from './ui';
import { replyTo } from './message';
import { Drafts, Inbox, Recent } from './views';
import type { NarrowTerm, Presence } from './types';

function applyTheme(scheme: number): void {
  const el = document.documentElement;
  if (scheme === 2) el.dataset.theme = 'dark';
  else if (scheme === 3) el.dataset.theme = 'light';
  else delete el.dataset.theme;
}

/** The typing key of the open narrow: a DM conversation or a channel topic. */
function typingKeysFor(s: State, narrow: NarrowTerm[]): (k: string) => boolean {
  const ch = narrow.find((t) => t.operator === 'channel');
  const topic = narrow.find((t) => t.operator === 'topic');
  const dm = narrow.find((t) => t.operator === 'dm');
  if (dm && Array.isArray(dm.operand)) {
    const key = `d:${dmKey(dm.operand)}`;
    return (k) => k === key;
  }
  if (ch) {
    const prefix = `s:${ch.operand}:${topic ? String(topic.operand).toLowerCase() : ''}`;
    return (k) => (topic ? k === prefix : k.startsWith(prefix));
  }
  return () => narrow.length === 0;
}

function TypingIndicator() {
  const s = st();
  const r = s.route;
  if (r.view !== 'feed') return null;
  const match = typingKeysFor(s, r.narrow);
  const who = [...new Set(s.typing.filter((t) => match(t.key)).map((t) => userName(s, t.userId)))];
  return (
    <div class="typing" role="status" aria-live="polite" data-testid="typing-indicator" hidden={who.length === 0}>
      {who.length === 1 ? `${who[0]} is typing…` : who.length > 1 ? `${who.join(', ')} are typing…` : ''}
    </div>
  );
}

function nextUnreadTopic(s: State): void {
  const current = s.route.view === 'feed' ? s.route.narrow : [];
  const curCh = current.find((t) => t.operator === 'channel')?.operand;
  const curTopic = String(current.find((t) => t.operator === 'topic')?.operand ?? '').toLowerCase();
  const seen = new Map<string, { sid: number; topic: string; min: number }>();
  for (const [id, u] of s.unread) {
    if (u.kind !== 'stream' || isTopicMuted(s, u.stream_id, u.topic)) continue;
    const k = `${u.stream_id}:${u.topic.toLowerCase()}`;
    const e = seen.get(k);
    if (!e || id < e.min) seen.set(k, { sid: u.stream_id, topic: u.topic, min: id });
  }
  const list = [...seen.values()].filter((t) => !(t.sid === curCh && t.topic.toLowerCase() === curTopic)).sort((a, b) => a.min - b.min);
  const next = list[0];
  if (next) narrowTo([{ operator: 'channel', operand: next.sid }, { operator: 'topic', operand: next.topic }]);
  else {
    const dm = [...s.unread.values()].find((u) => u.kind === 'dm');
    if (dm && dm.kind === 'dm') narrowTo([{ operator: 'dm', operand: dm.key.split(',').map(Number) }]);
  }
}

function moveSelection(delta: number): void {
  const f = feedBox.f;
  if (!f || !f.ids.length) return;
  const i = ui.selectedId === undefined ? -1 : f.ids.indexOf(ui.selectedId);
  const next = i < 0 ? f.ids[f.ids.length - 1]! : f.ids[Math.max(0, Math.min(f.ids.length - 1, i + delta))]!;
  ui.selectedId = next;
  changed();
}

function selectedOrLast() {
  const f = feedBox.f;
  const id = ui.selectedId ?? f?.ids[f.ids.length - 1];
  return id === undefined ? undefined : messages.get(id);
}

function onGlobalKey(e: KeyboardEvent, search: HTMLInputElement | null): void {
  const s = st();
  const t = e.target as HTMLElement;
  const typing = t.closest('input, textarea, select, [contenteditable=true]');
  if (e.key === 'Escape') {
    if (ui.menuFor !== undefined || ui.pickerFor !== undefined || ui.confirmDelete !== undefined) {
      ui.menuFor = ui.pickerFor = ui.confirmDelete = undefined;
    } else if (ui.helpOpen) ui.helpOpen = false;
    else if (ui.settingsOpen) ui.settingsOpen = false;
    else if (typing) (t as HTMLElement).blur();
    else if (ui.compose.open) closeCompose();
    else if (s.settings.web_escape_navigates_to_home_view !== false) navigate(homeRoute());
    changed();
    return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey || ui.settingsOpen || ui.helpOpen) return;
  // Enter and the arrows keep their own meaning on links and buttons outside the feed.
  const onFeed = t === document.body || !!t.closest('[data-testid=feed]');
  const inFeed = s.route.view === 'feed' && onFeed;
  switch (e.key) {
    case '/':
      e.preventDefault();
      search?.focus();
      search?.select();
      return;
    case 'c': {
      e.preventDefault();
      const c = ui.compose;
      openCompose({ mode: 'stream', focus: c.channel ? (c.topic ? 'content' : 'topic') : 'channel' });
      return;
    }
    case 'x':
      e.preventDefault();
      openCompose({ mode: 'dm', focus: ui.compose.to ? 'content' : 'to' });
      return;
    case 'r':
    case 'Enter': {
      if (!inFeed || (e.key === 'Enter' && t.tagName === 'BUTTON')) return;
      const m = selectedOrLast();
      if (m) {
        e.preventDefault();
        replyTo(m);
      }
      return;
    }
    case 'n':
      e.preventDefault();
      nextUnreadTopic(s);
      return;
    case 'ArrowUp':
    case 'k':
      if (!inFeed) return;
      e.preventDefault();
      moveSelection(-1);
      return;
    case 'ArrowDown':
    case 'j':
      if (!inFeed) return;
      e.preventDefault();
      moveSelection(1);
      return;
    case '?':
      e.preventDefault();
      ui.helpOpen = true;
      changed();
      return;
    case '*': {
      const m = selectedOrLast();
      if (m) call('POST', 'messages/flags', { messages: [m.id], op: m.flags.includes('starred') ? 'remove' : 'add', flag: 'starred' }).catch(showError);
      return;
    }
  }
}

const SHORTCUTS: [string, string][] = [
  ['c', 'New message to a channel (the current one)'],
  ['x', 'New direct message'],
  ['r or Enter', 'Reply to the selected message'],
  ['n', 'Go to the next unread topic'],
  ['↑ / ↓ (or k / j)', 'Select the previous / next message'],
  ['*', 'Star or unstar the selected message'],
  ['/', 'Search'],
  ['Esc', 'Close menus and the compose box; then go to the home view'],
  ['Enter / Ctrl+Enter', 'Send (as chosen under the compose box)'],
  ['?', 'This list'],
];

function ShortcutHelp() {
  const close = () => {
    ui.helpOpen = false;
    changed();
  };
  return (
    <div class="overlay" onClick={close}>
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="help-title" data-testid="shortcut-help" onClick={(e) => e.stopPropagation()}>
        <div class="dialog-head">
          <h2 id="help-title">Keyboard shortcuts</h2>
          <button type="button" class="icon" aria-label="Close" ref={(el) => el?.focus()} onClick={close}>✕</button>
        </div>
        <table class="recent">
          <tbody>
            {SHORTCUTS.map(([k, what]) => (
              <tr key={k}>
                <th scope="row"><kbd>{k}</kbd></th>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

export function App({ onSignedOut }: { onSignedOut: () => void }) {
  const s = st();
  const search = useRef<HTMLInputElement>(null);
  const route = s.route;
  const narrowText = route.view === 'feed' ? narrowToSearch(route.narrow, names()) : '';
  const [query, setQuery] = useState(narrowText);
  useEffect(() => setQuery(narrowText), [narrowText]);

  useEffect(() => applyTheme(s.settings.color_scheme), [s.settings.color_scheme]);
  const fontPx = s.settings.web_font_size_px as number | undefined;
  const linePct = s.settings.web_line_height_percent as number | undefined;
  useEffect(() => {
    // web_font_size_px / web_line_height_percent of PATCH /settings (Zulip's defaults: 16 px, 140 %).
    document.body.style.fontSize = fontPx ? `${fontPx}px` : '';
    document.body.style.lineHeight = linePct ? String(linePct / 100) : '';
  }, [fontPx, linePct]);
  const total = unreadCounts(s).total;
  const realmName = String(s.realm.realm_name ?? 'Parley');
  useEffect(() => {
    document.title = total ? `(${total}) ${realmName}` : realmName;
  }, [total, realmName]);

  useEffect(() => {
    const key = (e: KeyboardEvent) => onGlobalKey(e, search.current);
    const click = () => {
      if (ui.menuFor !== undefined || ui.pickerFor !== undefined) {
        ui.menuFor = ui.pickerFor = undefined;
        changed();
      }
    };
    document.addEventListener('keydown', key);
    document.addEventListener('click', click);
    const typingTimer = setInterval(() => expireTyping() && changed(), 2000);
    // Presence: report activity every minute (server_presence_ping_interval_seconds).
    const ping = () =>
      call<{ presences?: Record<string, Presence> }>('POST', 'users/me/presence', {
        status: document.visibilityState === 'visible' ? 'active' : 'idle',
        new_user_input: document.visibilityState === 'visible',
        slim_presence: true,
      })
        .then((r) => {
          const cur = st();
          for (const [id, p] of Object.entries(r.presences ?? {})) cur.presence.set(Number(id), p);
          changed();
        })
        .catch(() => {});
    ping();
    const presenceTimer = setInterval(ping, ((s.realm.server_presence_ping_interval_seconds as number) ?? 60) * 1000);
    return () => {
      document.removeEventListener('keydown', key);
      document.removeEventListener('click', click);
      clearInterval(typingTimer);
      clearInterval(presenceTimer);
    };
  }, []);

  function submitSearch(e: Event) {
    e.preventDefault();
    const q = query.trim();
    if (!q) return narrowTo([]);
    const r = parseSearch(q, names());
    if ('error' in r) return showError({ msg: r.error });
    search.current?.blur();
    narrowTo(r.narrow);
  }

  async function doLogout() {
    stop();
    try {
      await logout();
    } catch (e) {
      showError(e);
    }
    onSignedOut();
  }

  let title = '';
  if (route.view === 'feed') title = describeNarrow(s, route.narrow);
  return (
    <div class="app">
      <header class="top" role="banner">
        <button type="button" class="icon only-phone" aria-label="Show channels" aria-expanded={ui.leftOpen} data-testid="toggle-left" onClick={() => { ui.leftOpen = !ui.leftOpen; ui.rightOpen = false; changed(); }}>☰</button>
        <a class="brand" href="#" onClick={(e) => { e.preventDefault(); navigate(homeRoute()); }}>
          {realmName}
        </a>
        <form class="search" role="search" onSubmit={submitSearch}>
          <input
            ref={search}
            type="search"
            aria-label="Search messages (operators: channel: topic: dm: sender: is:starred)"
            placeholder="Search  (channel: topic: dm: sender: is:starred …)"
            data-testid="search"
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
          />
        </form>
        {s.reconnecting && <span class="reconnecting" role="status" data-testid="reconnecting">Reconnecting…</span>}
        <button type="button" class="icon only-phone" aria-label="Show users" aria-expanded={ui.rightOpen} data-testid="toggle-right" onClick={() => { ui.rightOpen = !ui.rightOpen; ui.leftOpen = false; changed(); }}>Users</button>
        <button type="button" data-testid="settings" onClick={() => { ui.settingsOpen = true; changed(); }}>Settings</button>
        <button type="button" data-testid="logout" onClick={() => void doLogout()}>Log out</button>
      </header>
      <div class="columns">
        <LeftSidebar />
        <main id="main" class="center" aria-label={title || 'Main'}>
          {route.view === 'feed' && (
            <h1 class="narrow-title" data-testid="narrow-title">
              {title}
            </h1>
          )}
          {route.view === 'feed' && <Feed />}
          {route.view === 'inbox' && <Inbox />}
          {route.view === 'recent' && <Recent />}
          {route.view === 'drafts' && <Drafts />}
          <TypingIndicator />
          <Compose />
        </main>
        <RightSidebar />
      </div>
      {(ui.leftOpen || ui.rightOpen) && <div class="scrim only-phone" onClick={() => { ui.leftOpen = ui.rightOpen = false; changed(); }} />}
      {ui.settingsOpen && <SettingsPanel />}
      {ui.helpOpen && <ShortcutHelp />}
      <div class="toasts" aria-live="assertive">
        {s.toasts.map((t) => (
          <div key={t.id} class={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'} data-testid={t.kind === 'error' ? 'error-toast' : 'info-toast'}>
            <span>{t.text}</span>
            <button type="button" class="icon" aria-label="Dismiss" onClick={() => dismissToast(t.id)}>✕</button>
          </div>
        ))}
      </div>
    </div>
  );
}

export { channelName, dmPeers };

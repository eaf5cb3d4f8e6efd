/*
 * Parley web app entry.
 *
 * Test hooks (stable; browser tests rely on them):
 *   Login:     data-testid login-form, login-username, login-password, login-submit, login-error (role=alert)
 *   Header:    search (the search box; Enter submits Zulip operators), settings, logout,
 *              reconnecting (shown while the event queue is re-established), toggle-left / toggle-right (phone width)
 *   Left nav:  view-inbox, view-recent, view-feed, view-mentions, view-starred, view-drafts;
 *              channel-<channel name>, topic-<topic name> (topics of the open channel),
 *              dm-<email>[,<email>...] (DM conversations); unread badges: unread-count
 *   Feed:      feed (role=log), narrow-title, recipient-bar, message (data-message-id=<id>, class "unread" while unread),
 *              message-sender, message-content, edited, moved, starred, unread-marker, feed-empty,
 *              reaction (data-emoji=<name>, data-count=<n>, aria-pressed when mine),
 *              react-button (opens the emoji picker), message-actions (opens the menu),
 *              menu items action-react, action-reply, action-quote, action-edit, action-delete,
 *              action-star, action-copy-link, action-mark-unread; confirm-delete;
 *              edit-content, edit-save, edit-cancel; emoji picker: emoji-search, emoji-<name>
 *   Compose:   compose, compose-open-stream, compose-open-dm, compose-mode-stream, compose-mode-dm,
 *              compose-channel, compose-topic, compose-to (emails or names, comma-separated),
 *              compose-content, compose-send, compose-preview, compose-preview-content,
 *              compose-enter-sends, compose-close, typeahead (role=listbox),
 *              compose-attach (the paperclip; opens the chooser of compose-file-input, a hidden <input type=file multiple>;
 *              files dropped on compose or pasted into compose-content upload too)
 *   Typing:    typing-indicator (role=status; hidden when nobody types)
 *   Views:     inbox, recent, drafts, draft
 *   Users:     user-filter, user-<email> (data-presence=active|idle|offline), status-text
 *   Settings:  settings-panel, settings-close, settings-tab-<profile|password|display|notifications|muted>,
 *              settings-full-name, settings-save-name, settings-avatar, settings-old-password,
 *              settings-new-password, settings-change-password, setting-<PATCH /settings name>,
 *              enable-notifications, muted-topic
 *   Recipient bars also hold mute-topic (aria-pressed when the topic is muted).
 *   Shortcuts: '?' opens shortcut-help (c, x, r/Enter, n, arrows or j/k, *, /, Esc).
 *   Errors:    error-toast (role=alert), info-toast
 * URL hash: #inbox, #recent, #drafts, #feed, #narrow/channel/<id>-<name>/topic/<topic>,
 *           #narrow/dm/<ids>-<name>, #narrow/sender/<id>-<name>, #narrow/is/starred, #narrow/search/<text>,
 *           .../near/<message id>  (Zulip's hash encoding: '.' in place of '%').
 * The stylesheets (KaTeX's, for server-rendered math, and web/src/app.css) are imported here, so esbuild emits it next to the JS bundle.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, setSignedOutHandler } from './api';
import { start, stop } from './events';
import { closeGap, openFeed } from './feed-data';
import { hashToRoute } from './narrow';
import { App } from './app';
import { LoginPage } from './login';
import { store, useStoreVersion } from './store';
import { routeFromLocation, show } from './ui';
import 'katex/dist/katex.min.css';
import './app.css';

type Phase = { name: 'loading' } | { name: 'login'; notice?: string } | { name: 'app' } | { name: 'error'; msg: string };

function Root() {
  const [phase, setPhase] = useState<Phase>({ name: 'loading' });
  useStoreVersion();

  async function boot() {
    setPhase({ name: 'loading' });
    // A feed link (#feed, #narrow/... by ids) needs nothing of /register to fetch its first
    // page: that request starts now, alongside /register, instead of after it. A link that
    // names channels or users by name waits for /register to resolve them.
    const early = hashToRoute(location.hash);
    const prefetched =
      early?.view === 'feed' && early.narrow.every((t) => !((t.operator === 'channel' || t.operator === 'sender') && typeof t.operand === 'string'))
        ? openFeed(early.narrow, early.near, true)
        : undefined;
    try {
      await start(routeFromLocation());
      setPhase({ name: 'app' });
      show(routeFromLocation());
      if (prefetched) void prefetched.then(() => closeGap(store.s?.realm.max_message_id as number | undefined));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setPhase({ name: 'login' });
      else setPhase({ name: 'error', msg: (e as { msg?: string }).msg ?? String(e) });
    }
  }

  useEffect(() => {
    setSignedOutHandler(() => {
      stop();
      store.s = null;
      setPhase({ name: 'login', notice: 'You have been signed out. Log in again to continue.' });
    });
    const onHash = () => {
      if (store.s) show(routeFromLocation());
    };
    window.addEventListener('popstate', onHash);
    window.addEventListener('hashchange', onHash);
    void boot();
    return () => {
      window.removeEventListener('popstate', onHash);
      window.removeEventListener('hashchange', onHash);
    };
  }, []);

  if (phase.name === 'loading') return <p class="splash" role="status">Loading…</p>;
  if (phase.name === 'login') return <LoginPage notice={phase.notice} onSignedIn={() => void boot()} />;
  if (phase.name === 'error')
    return (
      <main class="splash" role="alert">
        <p>Could not start the app: {phase.msg}</p>
        <button type="button" class="primary" onClick={() => void boot()}>Try again</button>
      </main>
    );
  if (!store.s) return <p class="splash">Loading…</p>;
  return (
    <App
      onSignedOut={() => {
        store.s = null;
        setPhase({ name: 'login' });
      }}
    />
  );
}

const root = document.getElementById('app') ?? document.body.appendChild(Object.assign(document.createElement('div'), { id: 'app' }));
render(<Root />, root);

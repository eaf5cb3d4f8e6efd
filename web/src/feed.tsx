// The message feed: recipient bars (channel > topic, or DM participants), messages,
// loading older pages on scroll-up, newer ones on scroll-down (after a jump), and
// marking messages read when they are on screen.
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { call } from './api';
import { feedBox, loadNewer, loadOlder, markSeen, messages } from './feed-data';
import { dmPeers } from './narrow';
import { channelName, dmKey, isTopicMuted, showError, st, userName } from './store';
import type { State } from './store';
import { MessageRow } from './message';
import { LockIcon } from './icons';
import { narrowTo, ui } from './ui';
import type { Message, NarrowTerm } from './types';

function recipientKey(m: Message, me: number): string {
  return m.type === 'stream' ? `s:${m.stream_id}:${m.subject.toLowerCase()}` : `d:${dmKey(dmPeers(m, me))}`;
}

let dateFormat: Intl.DateTimeFormat | undefined;

function RecipientBar({ m, s }: { m: Message; s: State }) {
  // One formatter for all bars (toLocaleDateString builds a new one per call).
  dateFormat ??= new Intl.DateTimeFormat([], { month: 'short', day: 'numeric', year: 'numeric' });
  const date = dateFormat.format(m.timestamp * 1000);
  if (m.type === 'stream') {
    const sub = s.subs.get(m.stream_id!);
    const name = typeof m.display_recipient === 'string' ? m.display_recipient : channelName(s, m.stream_id);
    const topic = m.subject || String(s.realm.realm_empty_topic_display_name ?? 'general chat');
    const muted = isTopicMuted(s, m.stream_id!, m.subject);
    return (
      <div class={muted ? 'rbar muted' : 'rbar'} data-testid="recipient-bar" style={{ '--chan': sub?.color ?? '#888' }}>
        <button type="button" class="rb-channel" onClick={() => narrowTo([{ operator: 'channel', operand: m.stream_id! }])}>
          {sub?.invite_only ? <LockIcon /> : '#'}{' '}
          {name}
        </button>
        <span aria-hidden="true">›</span>
        <button
          type="button"
          class="rb-topic"
          onClick={() =>
            narrowTo([
              { operator: 'channel', operand: m.stream_id! },
              { operator: 'topic', operand: m.subject },
            ])
          }
        >
          {topic}
        </button>
        <button
          type="button"
          class="rb-mute"
          data-testid="mute-topic"
          aria-pressed={muted}
          title={muted ? 'Unmute this topic' : 'Mute this topic'}
          onClick={() =>
            call('POST', 'user_topics', { stream_id: m.stream_id, topic: m.subject, visibility_policy: muted ? 0 : 1 }).catch(showError)
          }
        >
          {muted ? 'Unmute' : 'Mute'}
        </button>
        <span class="rb-date">{date}</span>
      </div>
    );
  }
  const peers = dmPeers(m, s.myId);
  const label = peers[0] === s.myId && peers.length === 1 ? 'You (notes to self)' : `You and ${peers.map((id) => userName(s, id)).join(', ')}`;
  return (
    <div class="rbar dm" data-testid="recipient-bar">
      <button type="button" class="rb-topic" onClick={() => narrowTo([{ operator: 'dm', operand: peers }])}>
        {label}
      </button>
      <span class="rb-date">{date}</span>
    </div>
  );
}

export function describeNarrow(s: State, narrow: NarrowTerm[]): string {
  if (narrow.length === 0) return 'Combined feed';
  return narrow
    .map((t) => {
      const not = t.negated ? 'not ' : '';
      switch (t.operator) {
        case 'channel': return `${not}#${channelName(s, Number(t.operand))}`;
        case 'topic': return `${not}topic “${t.operand}”`;
        case 'dm': return Array.isArray(t.operand) ? `${not}DMs with ${t.operand.map((id) => userName(s, id)).join(', ')}` : '';
        case 'sender': return `${not}sent by ${userName(s, Number(t.operand))}`;
        case 'is': return t.operand === 'starred' ? 'Starred messages' : t.operand === 'mentioned' ? 'Mentions' : `${not}is ${t.operand}`;
        case 'search': return `search “${t.operand}”`;
        default: return `${not}${t.operator}: ${String(t.operand)}`;
      }
    })
    .join(' · ');
}

/** Clicks inside server-rendered HTML: spoilers open and close. */
function onContentClick(e: MouseEvent): void {
  const header = (e.target as HTMLElement).closest?.('.spoiler-header');
  if (!header) return;
  const block = header.closest('.spoiler-block');
  if (!block) return;
  const open = block.classList.toggle('open');
  block.querySelector('.spoiler-content')?.setAttribute('aria-hidden', String(!open));
}

export function Feed() {
  const s = st();
  const f = feedBox.f;
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const prevHeight = useRef<{ first: number | undefined; height: number; top: number } | null>(null);
  const lastKey = useRef('');

  // Keep the reader's place: after older messages are prepended, shift the scroll
  // position by the height added; when at the bottom, stay at the bottom.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !f) return;
    if (lastKey.current !== f.key && !f.loading) {
      lastKey.current = f.key;
      if (f.near !== undefined) {
        el.querySelector<HTMLElement>(`[data-message-id="${f.near}"]`)?.scrollIntoView({ block: 'center' });
        ui.selectedId = f.near;
      } else el.scrollTop = el.scrollHeight;
      atBottom.current = f.near === undefined;
      return;
    }
    const p = prevHeight.current;
    if (p && p.first !== f.ids[0]) el.scrollTop = p.top + (el.scrollHeight - p.height);
    else if (atBottom.current) el.scrollTop = el.scrollHeight;
    prevHeight.current = { first: f.ids[0], height: el.scrollHeight, top: el.scrollTop };
  });

  // A page that does not fill the screen gives no scroll event: fetch more at once.
  useEffect(() => {
    const el = scroller.current;
    if (!el || !f || f.loading || f.error || f.pageFailed || el.scrollHeight > el.clientHeight + 10) return;
    if (!f.foundOldest || f.held) void loadOlder();
    else if (!f.foundNewest) void loadNewer();
  });

  useEffect(() => {
    const stick = () => (atBottom.current = true);
    window.addEventListener('parley:sent', stick);
    return () => window.removeEventListener('parley:sent', stick);
  }, []);

  // Mark read what is on screen, only while the page is visible.
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const io = new IntersectionObserver(
      (entries) => {
        if (document.visibilityState !== 'visible') return;
        // web_mark_read_on_scroll_policy: 1 always, 2 only in conversation views, 3 never.
        const cur = st();
        const policy = cur.settings.web_mark_read_on_scroll_policy as number | undefined;
        if (policy === 3) return;
        if (policy === 2 && cur.route.view === 'feed') {
          const ops = cur.route.narrow.map((t) => t.operator);
          if (!(ops.includes('dm') || (ops.includes('channel') && ops.includes('topic')))) return;
        }
        for (const e of entries) {
          if (!e.isIntersecting) continue;
          const id = Number((e.target as HTMLElement).dataset.messageId);
          if (st().unread.has(id)) markSeen(id);
        }
      },
      { root: el, threshold: 0.5 },
    );
    for (const node of el.querySelectorAll('[data-testid="message"].unread')) io.observe(node);
    return () => io.disconnect();
  });

  // Selected message: keep it visible and focused (arrow keys move it).
  useEffect(() => {
    if (ui.selectedId === undefined) return;
    const node = scroller.current?.querySelector<HTMLElement>(`[data-message-id="${ui.selectedId}"]`);
    if (node && !node.contains(document.activeElement)) {
      node.scrollIntoView({ block: 'nearest' });
      if (!document.activeElement || document.activeElement === document.body || document.activeElement.closest('[data-testid="message"]')) node.focus({ preventScroll: true });
    }
  }, [ui.selectedId]);

  function onScroll() {
    const el = scroller.current!;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    prevHeight.current = { first: f?.ids[0], height: el.scrollHeight, top: el.scrollTop };
    if (el.scrollTop < 300) void loadOlder();
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 300) void loadNewer();
  }

  if (!f) return null;
  // One <section> per recipient group, so that a group's sticky bar never
  // overlaps the next group's bar.
  const groups: { first: Message; rows: preact.JSX.Element[] }[] = [];
  let prevKey = '';
  let prev: Message | undefined;
  let markerShown = false;
  for (const id of f.ids) {
    const m = messages.get(id);
    if (!m) continue;
    const key = recipientKey(m, s.myId);
    if (key !== prevKey) groups.push({ first: m, rows: [] });
    const rows = groups[groups.length - 1]!.rows;
    if (!markerShown && f.firstUnread !== undefined && m.id === f.firstUnread && f.ids[0] !== m.id) {
      markerShown = true;
      rows.push(<div key="unread-marker" class="unread-marker" data-testid="unread-marker" role="separator">New messages</div>);
    }
    const showSender = key !== prevKey || !prev || prev.sender_id !== m.sender_id || m.timestamp - prev.timestamp > 600;
    rows.push(<MessageRow key={m.id} m={m} showSender={showSender} selected={ui.selectedId === m.id} />);
    prevKey = key;
    prev = m;
  }
  const rows = groups.map((g) => (
    <section key={`g-${g.first.id}`} class="group" aria-label={g.first.type === 'stream' ? `${channelName(s, g.first.stream_id)} > ${g.first.subject}` : 'Direct messages'}>
      <RecipientBar m={g.first} s={s} />
      {g.rows}
    </section>
  ));

  return (
    <div class="feed" ref={scroller} onScroll={onScroll} onClick={onContentClick} role="log" aria-label={`Messages: ${describeNarrow(s, f.narrow)}`} aria-busy={f.loading} data-testid="feed">
      {!f.loading && (f.foundOldest && !f.held ? <p class="feed-edge">{f.ids.length ? 'This is the beginning of the conversation.' : ''}</p> : <p class="feed-edge">{f.loadingOlder ? 'Loading older messages…' : ''}</p>)}
      {f.loading && <p class="feed-edge" role="status">Loading messages…</p>}
      {f.error && <p class="feed-error" role="alert">{f.error}</p>}
      {!f.loading && !f.error && f.ids.length === 0 && <p class="feed-empty" data-testid="feed-empty">No messages here yet.</p>}
      {rows}
      {f.loadingNewer && <p class="feed-edge">Loading newer messages…</p>}
    </div>
  );
}

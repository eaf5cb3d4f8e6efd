// One message in the feed: avatar, sender, time, the server-rendered HTML, markers,
// reactions and the action menu.
import { useLayoutEffect, useRef } from 'preact/hooks';
import { call } from './api';
import { emojiImg } from './emoji';
import { feedBox, messages, serverNarrow } from './feed-data';
import { dmPeers, routeToHash } from './narrow';
import { canDelete, canEdit, changed, showError, st, toast, userName } from './store';
import type { State } from './store';
import { EmojiPicker, reactionBody, toggleReaction } from './picker';
import { names, openCompose, ui } from './ui';
import type { Message, Reaction } from './types';

// Date.prototype.toLocale*String builds a new Intl.DateTimeFormat on every call (tens of
// microseconds each, several per message per render); the formatters are built once.
const timeFormats = new Map<boolean, Intl.DateTimeFormat>();
let fullFormat: Intl.DateTimeFormat | undefined;

/** The time of day, as toLocaleTimeString([], { hour: 'numeric', minute: '2-digit', hour12: !h24 }) gives it. */
export function formatTime(ts: number, h24: boolean): string {
  let f = timeFormats.get(h24);
  if (!f) timeFormats.set(h24, (f = new Intl.DateTimeFormat([], { hour: 'numeric', minute: '2-digit', hour12: !h24 })));
  return f.format(ts * 1000);
}

/** Date and time, as toLocaleString() with no arguments gives it. */
export function formatFull(ts: number): string {
  fullFormat ??= new Intl.DateTimeFormat([], { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  return fullFormat.format(ts * 1000);
}

function initials(name: string): string {
  return name.split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0]!.toUpperCase()).join('') || '?';
}

/** Only images of our own origin load (the page's CSP blocks others, e.g. gravatar); others show initials. */
// Parsing a URL per avatar per render showed in profiles of the feed's first paint;
// the answer per URL is kept (one entry per distinct avatar URL).
const sameOriginSeen = new Map<string, boolean>();
function sameOrigin(url: string | null | undefined): url is string {
  if (!url) return false;
  let ok = sameOriginSeen.get(url);
  if (ok === undefined) {
    try {
      ok = new URL(url, location.href).origin === location.origin;
    } catch {
      ok = false;
    }
    sameOriginSeen.set(url, ok);
  }
  return ok;
}

export function Avatar({ url, name, size = 36 }: { url: string | null | undefined; name: string; size?: number }) {
  if (!sameOrigin(url)) url = null;
  return (
    <span class="avatar" style={{ width: size, height: size }} aria-hidden="true">
      <span class="initials">{initials(name)}</span>
      {url && <img src={url} alt="" width={size} height={size} loading="lazy" onError={(e) => e.currentTarget.remove()} />}
    </span>
  );
}

/** After the server HTML is inserted: emoji images for emoji spans, external links in a new tab. */
function enhance(el: HTMLElement): void {
  for (const span of el.querySelectorAll<HTMLElement>('span.emoji')) {
    const m = /emoji-([0-9a-f-]+)/.exec(span.className);
    if (m && !span.dataset.native) {
      span.dataset.native = '1';
      span.replaceChildren(emojiImg(m[1]!, span.title || m[1]!));
    }
  }
  for (const a of el.querySelectorAll<HTMLAnchorElement>('a[href]')) {
    if (!a.getAttribute('href')!.startsWith('#')) {
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
    }
  }
}

export function messageLink(m: Message, s: State): string {
  const narrow =
    m.type === 'stream'
      ? [
          { operator: 'channel', operand: m.stream_id! },
          { operator: 'topic', operand: m.subject },
        ]
      : [{ operator: 'dm', operand: dmPeers(m, s.myId) }];
  return location.origin + '/' + routeToHash({ view: 'feed', narrow, near: m.id }, names());
}

async function rawContent(id: number): Promise<string> {
  const r = await call<{ message: { content: string }; raw_content?: string }>('GET', `messages/${id}`, { apply_markdown: false });
  return r.raw_content ?? r.message.content;
}

export function replyTo(m: Message, quote = false): void {
  const s = st();
  const target =
    m.type === 'stream'
      ? { mode: 'stream' as const, channel: typeof m.display_recipient === 'string' ? m.display_recipient : '', topic: m.subject }
      : { mode: 'dm' as const, to: dmPeers(m, s.myId).map((id) => s.users.get(id)?.email ?? '').join(', ') };
  if (!quote) return openCompose(target);
  rawContent(m.id)
    .then((raw) => {
      const prefix = ui.compose.content && ui.compose.mode === target.mode ? ui.compose.content + '\n' : '';
      const quoted = `@_**${m.sender_full_name}|${m.sender_id}** [said](${messageLink(m, s)}):\n\`\`\`quote\n${raw}\n\`\`\`\n`;
      openCompose({ ...target, content: prefix + quoted });
    })
    .catch(showError);
}

function startEdit(m: Message): void {
  ui.menuFor = undefined;
  rawContent(m.id)
    .then((text) => {
      ui.editing = { id: m.id, text };
      changed();
    })
    .catch(showError);
}

function markUnreadFrom(m: Message): void {
  const f = feedBox.f;
  if (f) f.noAutoRead = true;
  call('POST', 'messages/flags/narrow', {
    anchor: String(m.id),
    include_anchor: true,
    num_before: 0,
    num_after: 1000,
    narrow: serverNarrow(f?.narrow ?? []),
    op: 'remove',
    flag: 'read',
  }).catch(showError);
}

function ActionMenu({ m }: { m: Message }) {
  const s = st();
  const starred = m.flags.includes('starred');
  const close = () => {
    ui.menuFor = undefined;
    changed();
  };
  const item = (id: string, label: string, run: () => void) => (
    <li role="none">
      <button
        type="button"
        role="menuitem"
        data-testid={`action-${id}`}
        onClick={() => {
          close();
          run();
        }}
      >
        {label}
      </button>
    </li>
  );
  return (
    <ul
      class="menu"
      role="menu"
      aria-label="Message actions"
      ref={(el) => {
        // Keyboard users land on the first item when the menu opens.
        if (el && !el.contains(document.activeElement)) el.querySelector<HTMLElement>('[role=menuitem]')?.focus();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') return close();
        if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
        e.preventDefault();
        e.stopPropagation();
        const items = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>('[role=menuitem]')];
        const i = items.indexOf(document.activeElement as HTMLElement);
        items[(i + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus();
      }}
    >
      {item('react', 'Add emoji reaction', () => {
        ui.pickerFor = m.id;
        changed();
      })}
      {item('reply', 'Reply', () => replyTo(m))}
      {item('quote', 'Quote and reply', () => replyTo(m, true))}
      {canEdit(s, m) && item('edit', 'Edit message', () => startEdit(m))}
      {canDelete(s, m) && item('delete', 'Delete message', () => {
        ui.confirmDelete = m.id;
        changed();
      })}
      {item('star', starred ? 'Unstar message' : 'Star message', () =>
        call('POST', 'messages/flags', { messages: [m.id], op: starred ? 'remove' : 'add', flag: 'starred' }).catch(showError),
      )}
      {item('copy-link', 'Copy link to message', () =>
        navigator.clipboard
          .writeText(messageLink(m, s))
          .then(() => toast('Link copied to the clipboard.', 'info'))
          .catch(() => toast(`Copy failed; the link is ${messageLink(m, s)}`)),
      )}
      {item('mark-unread', 'Mark as unread from here', () => markUnreadFrom(m))}
    </ul>
  );
}

let focusedEdit: HTMLTextAreaElement | null = null;
/** Focuses the edit box when it appears (not on every re-render, which would steal focus). */
function focusOnce(el: HTMLTextAreaElement | null): void {
  if (el && el !== focusedEdit) {
    focusedEdit = el;
    el.focus();
  }
}

function EditBox({ m }: { m: Message }) {
  const ed = ui.editing!;
  const save = () => {
    call('PATCH', `messages/${m.id}`, { content: ed.text })
      .then(() => {
        ui.editing = undefined;
        changed();
      })
      .catch(showError);
  };
  return (
    <div class="edit-box">
      <label class="sr-only" for={`edit-${m.id}`}>Edit message</label>
      <textarea
        id={`edit-${m.id}`}
        data-testid="edit-content"
        value={ed.text}
        ref={focusOnce}
        onInput={(e) => (ed.text = e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save();
          if (e.key === 'Escape') {
            ui.editing = undefined;
            changed();
          }
        }}
      />
      <div class="row">
        <button type="button" class="primary" data-testid="edit-save" onClick={save}>Save</button>
        <button type="button" data-testid="edit-cancel" onClick={() => { ui.editing = undefined; changed(); }}>Cancel</button>
      </div>
    </div>
  );
}

function Reactions({ m }: { m: Message }) {
  const s = st();
  const groups = new Map<string, Reaction[]>();
  for (const r of m.reactions) {
    const k = `${r.reaction_type}:${r.emoji_code}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  if (!groups.size) return null;
  const showNames = s.settings.display_emoji_reaction_users && m.reactions.length <= 3;
  return (
    <div class="reactions">
      {[...groups.values()].map((list) => {
        const r = list[0]!;
        const mine = list.some((x) => x.user_id === s.myId);
        const who = list.map((x) => (x.user_id === s.myId ? 'You' : userName(s, x.user_id))).join(', ');
        return (
          <button
            type="button"
            key={r.emoji_code}
            class={mine ? 'reaction mine' : 'reaction'}
            data-testid="reaction"
            data-emoji={r.emoji_name}
            data-count={list.length}
            aria-pressed={mine}
            title={`${who} reacted with :${r.emoji_name}:`}
            aria-label={`${r.emoji_name}: ${list.length}, ${who}`}
            onClick={() => toggleReaction(m, { emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type })}
          >
            {reactionBody(s, r)}
            <span class="n">{showNames ? who : list.length}</span>
          </button>
        );
      })}
    </div>
  );
}

export function MessageRow({ m, showSender, selected }: { m: Message; showSender: boolean; selected: boolean }) {
  const s = st();
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (ref.current) enhance(ref.current);
  }, [m.content]);
  const unread = s.unread.has(m.id);
  const mentioned = m.flags.some((f) => f.includes('mentioned'));
  const cls = ['msg', unread ? 'unread' : '', selected ? 'selected' : '', mentioned ? 'mentioned' : '', showSender ? '' : 'cont'].join(' ');
  const avatarUrl = s.users.get(m.sender_id)?.avatar_url ?? m.avatar_url;
  const h24 = s.settings.twenty_four_hour_time;
  const full = formatFull(m.timestamp);
  return (
    <article
      class={cls}
      data-testid="message"
      data-message-id={m.id}
      aria-label={`${m.sender_full_name}, ${full}`}
      tabIndex={selected ? 0 : -1}
      onClick={() => {
        if (ui.selectedId !== m.id) {
          ui.selectedId = m.id;
          changed();
        }
      }}
    >
      <div class="gutter">{showSender ? <Avatar url={avatarUrl} name={m.sender_full_name} /> : <time class="t-hover" dateTime={new Date(m.timestamp * 1000).toISOString()}>{formatTime(m.timestamp, h24)}</time>}</div>
      <div class="body">
        {showSender && (
          <div class="meta">
            <a
              href="#"
              class="sender"
              data-testid="message-sender"
              onClick={(e) => {
                e.preventDefault();
                location.hash = routeToHash({ view: 'feed', narrow: [{ operator: 'sender', operand: m.sender_id }] }, names());
              }}
            >
              {m.sender_full_name}
            </a>
            <time dateTime={new Date(m.timestamp * 1000).toISOString()} title={full}>
              {formatTime(m.timestamp, h24)}
            </time>
          </div>
        )}
        {ui.editing?.id === m.id ? (
          <EditBox m={m} />
        ) : (
          <div class={m.is_me_message ? 'content me' : 'content'} ref={ref} data-testid="message-content" dangerouslySetInnerHTML={{ __html: m.content }} />
        )}
        <div class="markers">
          {m.last_edit_timestamp !== undefined && <span class="marker" title={`Edited ${formatFull(m.last_edit_timestamp)}`} data-testid="edited">(edited)</span>}
          {m.last_moved_timestamp !== undefined && m.last_edit_timestamp === undefined && <span class="marker" data-testid="moved">(moved)</span>}
          {m.flags.includes('starred') && <span class="marker star" aria-label="Starred" data-testid="starred">★</span>}
          {unread && <span class="sr-only">Unread</span>}
        </div>
        <Reactions m={m} />
        {ui.confirmDelete === m.id && (
          <div class="confirm" role="alertdialog" aria-label="Delete message?">
            <span>Delete this message for everyone?</span>
            <button
              type="button"
              class="danger"
              data-testid="confirm-delete"
              onClick={() => {
                ui.confirmDelete = undefined;
                call('DELETE', `messages/${m.id}`).catch(showError);
                changed();
              }}
            >
              Delete
            </button>
            <button type="button" onClick={() => { ui.confirmDelete = undefined; changed(); }}>Cancel</button>
          </div>
        )}
      </div>
      <div class="actions">
        <button type="button" class="icon" aria-label="Add emoji reaction" data-testid="react-button" onClick={(e) => { e.stopPropagation(); ui.pickerFor = ui.pickerFor === m.id ? undefined : m.id; ui.menuFor = undefined; changed(); }}>☺+</button>
        <button
          type="button"
          class="icon"
          aria-label="Message actions"
          aria-haspopup="menu"
          aria-expanded={ui.menuFor === m.id}
          data-testid="message-actions"
          onClick={(e) => {
            e.stopPropagation();
            ui.menuFor = ui.menuFor === m.id ? undefined : m.id;
            ui.pickerFor = undefined;
            changed();
          }}
        >
          ⋯
        </button>
        {ui.menuFor === m.id && <ActionMenu m={m} />}
        {ui.pickerFor === m.id && <EmojiPicker onPick={(e) => toggleReaction(m, e, true)} onClose={() => { ui.pickerFor = undefined; changed(); }} />}
      </div>
    </article>
  );
}

export { messages };

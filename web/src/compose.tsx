// The compose box: channel + topic or DM recipients, Markdown with preview
// (POST /messages/render), typeahead for @-mentions, #channel>topic and :emoji:,
// Enter or Ctrl+Enter to send, typing notifications, drafts saved as one types,
// file uploads by the paperclip, drag and drop, or paste (upload.tsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api';
import { deleteDraft, draftKey, saveDraft } from './drafts';
import { EmojiImage, searchEmoji } from './picker';
import { changed, showError, st } from './store';
import { ensureTopics } from './sidebar';
import type { State } from './store';
import { closeCompose, ui } from './ui';
import { AttachButton, filesOf, uploadFiles, uploading, UPLOADING_MSG, useFileDrop } from './upload';

const ENTER_KEY = 'parley.enterSends';
export function enterSends(): boolean {
  const v = localStorage.getItem(ENTER_KEY);
  return v === null ? true : v === '1';
}

interface Target {
  type: 'stream' | 'direct';
  streamId?: number;
  topic?: string;
  to?: number[];
  error?: string;
}

export function resolveTarget(s: State): Target {
  const c = ui.compose;
  if (c.mode === 'stream') {
    const name = c.channel.trim().replace(/^#/, '').toLowerCase();
    const sub = [...s.subs.values()].find((x) => x.name.toLowerCase() === name);
    if (!name) return { type: 'stream', error: 'Choose a channel.' };
    if (!sub) return { type: 'stream', error: `You are not subscribed to a channel named “${c.channel.trim()}”.` };
    return { type: 'stream', streamId: sub.stream_id, topic: c.topic.trim() };
  }
  const ids: number[] = [];
  for (const part of c.to.split(',').map((x) => x.trim()).filter(Boolean)) {
    const p = part.toLowerCase();
    const u = [...s.users.values()].find((x) => x.email.toLowerCase() === p) ?? [...s.users.values()].find((x) => x.full_name.toLowerCase() === p);
    if (!u) return { type: 'direct', error: `No user “${part}”.` };
    ids.push(u.user_id);
  }
  if (!ids.length) return { type: 'direct', error: 'Add at least one recipient.' };
  return { type: 'direct', to: ids };
}

// --- typing notifications ----------------------------------------------------
let typingSentAt = 0;
let typingTarget = '';
let stopTimer: ReturnType<typeof setTimeout> | undefined;

function typingParams(t: Target) {
  return t.type === 'stream' ? { type: 'stream', stream_id: t.streamId, topic: t.topic ?? '' } : { type: 'direct', to: t.to };
}

function sendTyping(s: State, t: Target): void {
  if (t.error) return;
  if (t.type === 'stream' ? s.settings.send_stream_typing_notifications === false : s.settings.send_private_typing_notifications === false) return;
  const key = JSON.stringify(typingParams(t));
  const wait = (s.realm.server_typing_started_wait_period_milliseconds as number) ?? 10000;
  if (key !== typingTarget) stopTyping();
  if (key !== typingTarget || Date.now() - typingSentAt > wait) {
    typingTarget = key;
    typingSentAt = Date.now();
    call('POST', 'typing', { op: 'start', ...typingParams(t) }).catch(() => {});
  }
  clearTimeout(stopTimer);
  stopTimer = setTimeout(stopTyping, 5000);
}

function stopTyping(): void {
  clearTimeout(stopTimer);
  if (!typingTarget) return;
  const params = JSON.parse(typingTarget) as Record<string, unknown>;
  typingTarget = '';
  typingSentAt = 0;
  call('POST', 'typing', { op: 'stop', ...params }).catch(() => {});
}

// --- typeahead -----------------------------------------------------------------
interface Suggestion {
  label: string;
  insert: string;
  icon?: preact.JSX.Element;
}
interface TA {
  start: number;
  items: Suggestion[];
  index: number;
}

function suggestions(s: State, before: string): { start: number; items: Suggestion[] } | null {
  let m = /(^|\s)@\**([^\s*@]{0,30})$/.exec(before);
  if (m) {
    const q = m[2]!.toLowerCase();
    const items = [...s.users.values()]
      .filter((u) => u.is_active !== false && (u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().startsWith(q)))
      .slice(0, 8)
      .map((u) => ({ label: `${u.full_name} (${u.email})`, insert: `@**${u.full_name}** ` }));
    for (const w of ['all', 'channel', 'topic']) if (w.startsWith(q) && q) items.push({ label: `@${w} (notify everyone)`, insert: `@**${w}** ` });
    return { start: before.length - m[0].length + m[1]!.length, items };
  }
  m = /(^|\s)#\**([^*#>\n]{0,40})(>([^*\n]{0,60}))?$/.exec(before);
  if (m) {
    const q = m[2]!.toLowerCase();
    const start = before.length - m[0].length + m[1]!.length;
    if (m[3] !== undefined) {
      const sub = [...s.subs.values()].find((x) => x.name.toLowerCase() === q);
      if (!sub) return null;
      ensureTopics(s, sub.stream_id);
      const tq = (m[4] ?? '').toLowerCase();
      const topics = (s.topics.get(sub.stream_id) ?? []).filter((t) => t.name.toLowerCase().includes(tq)).slice(0, 8);
      const items = topics.map((t) => ({ label: `#${sub.name} > ${t.name}`, insert: `#**${sub.name}>${t.name}** ` }));
      if (tq && !topics.some((t) => t.name.toLowerCase() === tq)) items.push({ label: `#${sub.name} > ${m[4]} (new topic)`, insert: `#**${sub.name}>${m[4]}** ` });
      items.unshift({ label: `#${sub.name} (the channel)`, insert: `#**${sub.name}** ` });
      return { start, items };
    }
    const items = [...s.subs.values()]
      .filter((c) => c.name.toLowerCase().includes(q))
      .slice(0, 8)
      .map((c) => ({ label: `#${c.name}`, insert: `#**${c.name}>` }));
    return { start, items };
  }
  m = /(^|\s):([a-z0-9_+-]{2,30})$/.exec(before);
  if (m) {
    const items = searchEmoji(s, m[2]!, 8).map((e) => ({
      label: `:${e.emoji_name}:`,
      insert: `:${e.emoji_name}: `,
      icon: e.url ? <img class="emoji-img" src={e.url} alt="" /> : <EmojiImage code={e.emoji_code} name={e.emoji_name} />,
    }));
    return { start: before.length - m[0].length + m[1]!.length, items };
  }
  return null;
}

export function Compose() {
  const s = st();
  const c = ui.compose;
  const area = useRef<HTMLTextAreaElement>(null);
  const channelInput = useRef<HTMLInputElement>(null);
  const topicInput = useRef<HTMLInputElement>(null);
  const toInput = useRef<HTMLInputElement>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [ta, setTa] = useState<TA | null>(null);
  const [sending, setSending] = useState(false);
  const [enter, setEnter] = useState(enterSends());
  const [, rerender] = useState(0);

  useEffect(() => {
    if (!c.focus) return;
    const target = { content: area, topic: topicInput, channel: channelInput, to: toInput }[c.focus];
    c.focus = undefined;
    const el = target.current;
    if (el) {
      el.focus();
      if (el === area.current) el.setSelectionRange(el.value.length, el.value.length);
    }
  });

  // Topic suggestions for the chosen channel.
  const sub = c.mode === 'stream' ? [...s.subs.values()].find((x) => x.name.toLowerCase() === c.channel.trim().toLowerCase()) : undefined;
  useEffect(() => {
    if (sub && !s.topics.has(sub.stream_id))
      call<{ topics: { name: string; max_id: number }[] }>('GET', `users/me/${sub.stream_id}/topics`)
        .then((r) => {
          st().topics.set(sub.stream_id, r.topics);
          changed();
        })
        .catch(() => {});
  }, [sub?.stream_id]);

  function persist() {
    saveDraft({ type: c.mode === 'stream' ? 'stream' : 'private', channel: c.channel, topic: c.topic, to: c.to, content: c.content });
  }

  // Uploads write into the text; the preview, if shown, gives way to the editor.
  function attach(files: File[]) {
    if (!files.length) return;
    setPreview(null);
    void uploadFiles(files, { area: () => area.current, afterChange: () => { persist(); changed(); } });
    // Back to the text (after the file chooser), the caret just after the placeholders.
    requestAnimationFrame(() => area.current?.focus());
  }

  const [dropping, drop] = useFileDrop((files) => {
    if (!c.open) Object.assign(c, { open: true, focus: 'content' });
    attach(files);
  });

  async function send() {
    if (sending) return;
    if (uploading()) {
      showError({ msg: UPLOADING_MSG });
      return;
    }
    if (!c.content.trim()) {
      showError({ msg: 'Write a message first.' });
      return;
    }
    const t = resolveTarget(s);
    if (t.error) {
      showError({ msg: t.error });
      return;
    }
    setSending(true);
    try {
      await call('POST', 'messages', t.type === 'stream'
        ? { type: 'stream', to: t.streamId, topic: t.topic ?? '', content: c.content }
        : { type: 'direct', to: t.to, content: c.content });
      stopTyping();
      // The feed follows one's own new message even when scrolled up.
      window.dispatchEvent(new Event('parley:sent'));
      deleteDraft(draftKey(c.mode === 'stream' ? 'stream' : 'private', c.channel, c.topic, c.to));
      c.content = '';
      setPreview(null);
      setTa(null);
      changed();
      area.current?.focus();
    } catch (e) {
      showError(e);
    } finally {
      setSending(false);
    }
  }

  function updateTypeahead(el: HTMLTextAreaElement) {
    const before = el.value.slice(0, el.selectionStart);
    const r = suggestions(s, before);
    setTa(r && r.items.length ? { ...r, index: 0 } : null);
  }

  function accept(sug: Suggestion) {
    const el = area.current!;
    const caret = el.selectionStart;
    const start = ta!.start;
    c.content = c.content.slice(0, start) + sug.insert + c.content.slice(caret);
    setTa(null);
    changed();
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(start + sug.insert.length, start + sug.insert.length);
      if (sug.insert.endsWith('>')) updateTypeahead(el);
    });
  }

  function onKeyDown(e: KeyboardEvent) {
    if (ta) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        const n = ta.items.length;
        setTa({ ...ta, index: (ta.index + (e.key === 'ArrowDown' ? 1 : n - 1)) % n });
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        accept(ta.items[ta.index]!);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        setTa(null);
        return;
      }
    }
    if (e.key === 'Enter' && !e.isComposing) {
      const mod = e.ctrlKey || e.metaKey;
      if ((enter && !e.shiftKey && !mod && !e.altKey) || (!enter && mod)) {
        e.preventDefault();
        void send();
      }
    }
    if (e.key === 'Escape') {
      e.preventDefault();
      stopTyping();
      closeCompose();
      (document.activeElement as HTMLElement | null)?.blur();
    }
  }

  const typeahead = ta && (
    <ul class="typeahead" role="listbox" id="compose-typeahead" aria-label="Suggestions" data-testid="typeahead">
      {ta.items.map((it, i) => (
        <li
          key={it.label}
          role="option"
          id={`ta-${i}`}
          aria-selected={i === ta.index}
          class={i === ta.index ? 'on' : undefined}
          onMouseDown={(e) => {
            e.preventDefault();
            accept(it);
          }}
        >
          {it.icon && <span aria-hidden="true">{it.icon} </span>}
          {it.label}
        </li>
      ))}
    </ul>
  );

  if (!c.open) {
    return (
      <div class="compose-closed" {...drop}>
        <button type="button" data-testid="compose-open-stream" onClick={() => { Object.assign(c, { open: true, mode: 'stream', focus: c.channel ? 'topic' : 'channel' }); changed(); }}>
          New channel message <kbd>c</kbd>
        </button>
        <button type="button" data-testid="compose-open-dm" onClick={() => { Object.assign(c, { open: true, mode: 'dm', focus: 'to' }); changed(); }}>
          New direct message <kbd>x</kbd>
        </button>
      </div>
    );
  }

  // Keystrokes re-render only the compose box, not the whole app (the feed can be long).
  const set = (k: 'channel' | 'topic' | 'to', v: string) => {
    c[k] = v;
    rerender((n) => n + 1);
  };

  return (
    <section class={dropping ? 'compose dropping' : 'compose'} aria-label="Compose message" data-testid="compose" {...drop}>
      <div class="compose-head">
        <div class="seg" role="group" aria-label="Message type">
          <button type="button" aria-pressed={c.mode === 'stream'} data-testid="compose-mode-stream" onClick={() => { c.mode = 'stream'; changed(); }}>Channel</button>
          <button type="button" aria-pressed={c.mode === 'dm'} data-testid="compose-mode-dm" onClick={() => { c.mode = 'dm'; changed(); }}>Direct</button>
        </div>
        {c.mode === 'stream' ? (
          <>
            <input ref={channelInput} list="compose-channels" aria-label="Channel" placeholder="Channel" data-testid="compose-channel" value={c.channel} onInput={(e) => set('channel', e.currentTarget.value)} />
            <datalist id="compose-channels">{[...s.subs.values()].map((x) => <option key={x.stream_id} value={x.name} />)}</datalist>
            <span aria-hidden="true">›</span>
            <input ref={topicInput} list="compose-topics" aria-label="Topic" placeholder="Topic" maxLength={(s.realm.max_topic_length as number) ?? 60} data-testid="compose-topic" value={c.topic} onInput={(e) => set('topic', e.currentTarget.value)} />
            <datalist id="compose-topics">{(sub ? (s.topics.get(sub.stream_id) ?? []) : []).slice(0, 30).map((t) => <option key={t.name} value={t.name} />)}</datalist>
          </>
        ) : (
          <>
            <input ref={toInput} list="compose-users" aria-label="To (names or emails, comma-separated)" placeholder="To: name or email, …" data-testid="compose-to" value={c.to} onInput={(e) => set('to', e.currentTarget.value)} />
            <datalist id="compose-users">{[...s.users.values()].filter((u) => u.is_active !== false).map((u) => <option key={u.user_id} value={u.email}>{u.full_name}</option>)}</datalist>
          </>
        )}
        <button type="button" class="icon close" aria-label="Close compose box" data-testid="compose-close" onClick={() => { stopTyping(); closeCompose(); }}>✕</button>
      </div>
      <div class="compose-body">
        {typeahead}
        {preview !== null ? (
          <div class="content preview" data-testid="compose-preview-content" aria-label="Preview" dangerouslySetInnerHTML={{ __html: preview || '<p><em>Nothing to preview.</em></p>' }} />
        ) : (
          <textarea
            ref={area}
            aria-label="Message"
            placeholder={enter ? 'Message (Enter sends, Shift+Enter for a new line)' : 'Message (Ctrl+Enter sends)'}
            data-testid="compose-content"
            role="combobox"
            aria-autocomplete="list"
            aria-expanded={!!ta}
            aria-controls={ta ? 'compose-typeahead' : undefined}
            aria-activedescendant={ta ? `ta-${ta.index}` : undefined}
            maxLength={(s.realm.max_message_length as number) ?? 10000}
            value={c.content}
            onInput={(e) => {
              c.content = e.currentTarget.value;
              persist();
              updateTypeahead(e.currentTarget);
              if (c.content.trim()) sendTyping(s, resolveTarget(s));
              else stopTyping();
              rerender((n) => n + 1);
            }}
            onKeyDown={onKeyDown}
            onPaste={(e) => {
              // Pasted files (a screenshot, files copied in a file manager) are uploaded, not pasted as text.
              const files = filesOf(e.clipboardData);
              if (!files.length) return;
              e.preventDefault();
              attach(files);
            }}
            onBlur={() => setTimeout(() => setTa(null), 150)}
          />
        )}
      </div>
      <div class="compose-foot">
        <button
          type="button"
          aria-pressed={preview !== null}
          data-testid="compose-preview"
          onClick={() => {
            if (preview !== null) return setPreview(null);
            call<{ rendered: string }>('POST', 'messages/render', { content: c.content })
              .then((r) => setPreview(r.rendered))
              .catch(showError);
          }}
        >
          {preview !== null ? 'Edit' : 'Preview'}
        </button>
        <AttachButton onFiles={attach} />
        <label class="check">
          <input
            type="checkbox"
            checked={enter}
            data-testid="compose-enter-sends"
            onChange={(e) => {
              localStorage.setItem(ENTER_KEY, e.currentTarget.checked ? '1' : '0');
              setEnter(e.currentTarget.checked);
            }}
          />
          Enter sends
        </label>
        <button type="button" class="primary" disabled={sending} data-testid="compose-send" onClick={() => void send()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </section>
  );
}

// Emoji: the picker with search (reactions), how a reaction is drawn, and the
// name search shared with the compose typeahead.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api';
import { EMOJI, emojiUrl, onEmojiImageError } from './emoji';
import { showError, st } from './store';
import type { State } from './store';
import type { Message } from './types';

export interface EmojiChoice {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** Built-in and custom emoji whose name contains the query (prefix matches first). */
export function searchEmoji(s: State, q: string, limit = 60): (EmojiChoice & { url?: string })[] {
  const query = q.toLowerCase().replace(/^:/, '');
  const all: (EmojiChoice & { url?: string })[] = [];
  for (const e of s.realmEmoji.values())
    if (!e.deactivated) all.push({ emoji_name: e.name, emoji_code: e.id, reaction_type: 'realm_emoji', url: e.source_url });
  for (const e of EMOJI) all.push({ emoji_name: e.name, emoji_code: e.code, reaction_type: 'unicode_emoji' });
  const hits = query ? all.filter((e) => e.emoji_name.includes(query)) : all;
  hits.sort((a, b) => Number(!a.emoji_name.startsWith(query)) - Number(!b.emoji_name.startsWith(query)));
  const seen = new Set<string>();
  return hits.filter((e) => !seen.has(e.emoji_code) && seen.add(e.emoji_code)).slice(0, limit);
}

export function EmojiImage({ code, name }: { code: string; name: string }) {
  return <img class="emoji-img" src={emojiUrl(code)} alt={`:${name}:`} loading="lazy" onError={(e) => onEmojiImageError(e.currentTarget, code)} />;
}

export function reactionBody(s: State, r: { emoji_name: string; emoji_code: string; reaction_type: string }) {
  if (r.reaction_type === 'realm_emoji') {
    const e = s.realmEmoji.get(r.emoji_code);
    if (e) return <img class="emoji-img" src={e.source_url} alt={`:${r.emoji_name}:`} />;
  }
  if (r.reaction_type === 'unicode_emoji') {
    return <EmojiImage code={r.emoji_code} name={r.emoji_name} />;
  }
  return <span class="emoji-text">:{r.emoji_name}:</span>;
}

/** Adds my reaction, or removes it if present (`onlyAdd` from the picker never removes). */
export function toggleReaction(m: Message, e: EmojiChoice, onlyAdd = false): void {
  const s = st();
  const mine = m.reactions.some((r) => r.user_id === s.myId && r.emoji_code === e.emoji_code && r.reaction_type === e.reaction_type);
  if (mine && onlyAdd) return;
  call(mine ? 'DELETE' : 'POST', `messages/${m.id}/reactions`, {
    emoji_name: e.emoji_name,
    emoji_code: e.emoji_code,
    reaction_type: e.reaction_type,
  }).catch(showError);
}

export function EmojiPicker({ onPick, onClose }: { onPick: (e: EmojiChoice) => void; onClose: () => void }) {
  const s = st();
  const [q, setQ] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const list = searchEmoji(s, q, 120);
  return (
    <div class="picker" role="dialog" aria-label="Emoji picker" onClick={(e) => e.stopPropagation()} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <input
        ref={input}
        type="search"
        placeholder="Search emoji"
        aria-label="Search emoji"
        data-testid="emoji-search"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && list[0]) {
            e.preventDefault();
            onPick(list[0]);
            onClose();
          }
        }}
      />
      <div class="grid">
        {list.map((e) => (
          <button
            type="button"
            key={e.emoji_code}
            title={`:${e.emoji_name}:`}
            aria-label={e.emoji_name}
            data-testid={`emoji-${e.emoji_name}`}
            onClick={() => {
              onPick(e);
              onClose();
            }}
          >
            {e.url ? <img class="emoji-img" src={e.url} alt="" /> : <EmojiImage code={e.emoji_code} name={e.emoji_name} />}
          </button>
        ))}
        {list.length === 0 && <p class="empty">No emoji match “{q}”.</p>}
      </div>
    </div>
  );
}

// Right sidebar: users with presence (active / idle / offline) and status text/emoji.
import { useState } from 'preact/hooks';
import { EmojiImage } from './picker';
import { now, st } from './store';
import type { State } from './store';
import { Avatar } from './message';
import { narrowTo, ui } from './ui';

export type PresenceState = 'active' | 'idle' | 'offline';

export function presenceOf(s: State, id: number): PresenceState {
  const p = s.presence.get(id);
  if (!p) return 'offline';
  const limit = (s.realm.server_presence_offline_threshold_seconds as number) ?? 140;
  const t = now();
  if (p.active_timestamp && t - p.active_timestamp < limit) return 'active';
  if (p.idle_timestamp && t - p.idle_timestamp < limit) return 'idle';
  return 'offline';
}

const ORDER: Record<PresenceState, number> = { active: 0, idle: 1, offline: 2 };
const LABEL: Record<PresenceState, string> = { active: 'Active', idle: 'Idle', offline: 'Offline' };

export function RightSidebar() {
  const s = st();
  const [filter, setFilter] = useState('');
  const q = filter.trim().toLowerCase();
  const users = [...s.users.values()]
    .filter((u) => u.is_active !== false && !u.is_bot && (!q || u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().includes(q)))
    .map((u) => ({ u, p: presenceOf(s, u.user_id) }))
    .sort((a, b) => ORDER[a.p] - ORDER[b.p] || a.u.full_name.localeCompare(b.u.full_name));
  const withAvatars = s.settings.user_list_style === 3;
  return (
    <aside class={ui.rightOpen ? 'right open' : 'right'} aria-label="Users">
      <h2 class="side-heading">Users</h2>
      <input type="search" class="filter" placeholder="Filter users" aria-label="Filter users" data-testid="user-filter" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <ul class="users">
        {users.map(({ u, p }) => {
          const st_ = s.userStatus.get(u.user_id);
          const away = st_?.away;
          const presence = away && p === 'active' ? 'idle' : p;
          return (
            <li key={u.user_id}>
              <button
                type="button"
                class="user"
                data-testid={`user-${u.email}`}
                data-presence={presence}
                title={`${u.full_name} (${LABEL[presence]})${st_?.status_text ? ': ' + st_.status_text : ''}`}
                onClick={() => {
                  ui.rightOpen = false;
                  narrowTo([{ operator: 'dm', operand: [u.user_id] }]);
                }}
              >
                <span class={`dot ${presence}`} role="img" aria-label={LABEL[presence]} />
                {withAvatars && <Avatar url={u.avatar_url} name={u.full_name} size={24} />}
                <span class="uname">
                  <span class="uname-line">
                    {u.full_name}
                    {u.user_id === s.myId && <span class="you"> (you)</span>}
                    {st_?.emoji_code && st_.reaction_type === 'unicode_emoji' && (
                      <span class="status-emoji" title={st_.emoji_name}>
                        {' '}
                        <EmojiImage code={st_.emoji_code} name={st_.emoji_name ?? ''} />
                      </span>
                    )}
                  </span>
                  {st_?.status_text && s.settings.user_list_style !== 1 && <span class="status-text" data-testid="status-text">{st_.status_text}</span>}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
    </aside>
  );
}

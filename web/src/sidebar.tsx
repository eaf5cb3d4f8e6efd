// Left sidebar: views, channels (by folder) with unread counts and the topics of the
// open channel (GET /users/me/{stream_id}/topics), DM conversations.
import { useEffect } from 'preact/hooks';
import { call } from './api';
import { changed, channelName, isTopicMuted, showError, st, unreadCounts, userName, userTopicKey } from './store';
import type { State } from './store';
import { navigate, narrowTo, ui } from './ui';
import { loadDrafts } from './drafts';
import { LockIcon } from './icons';
import type { Subscription } from './types';

const loadingTopics = new Set<number>();
export function ensureTopics(s: State, streamId: number): void {
  if (s.topics.has(streamId) || loadingTopics.has(streamId)) return;
  loadingTopics.add(streamId);
  call<{ topics: { name: string; max_id: number }[] }>('GET', `users/me/${streamId}/topics`)
    .then((r) => {
      st().topics.set(streamId, r.topics);
      changed();
    })
    .catch(showError)
    .finally(() => loadingTopics.delete(streamId));
}

function Count({ n, label }: { n: number | undefined; label: string }) {
  if (!n) return null;
  return (
    <span class="count" data-testid="unread-count" aria-label={`${n} unread ${label}`}>
      {n}
    </span>
  );
}

function activeOf(s: State) {
  const r = s.route;
  if (r.view !== 'feed') return { view: r.view as string };
  const get = (op: string) => r.narrow.find((t) => t.operator === op && !t.negated)?.operand;
  if (r.narrow.length === 0) return { view: 'feed' };
  if (r.narrow.length === 1 && get('is') === 'starred') return { view: 'starred' };
  if (r.narrow.length === 1 && get('is') === 'mentioned') return { view: 'mentions' };
  const dm = get('dm');
  return { view: '', channel: get('channel') as number | undefined, topic: get('topic') as string | undefined, dm: Array.isArray(dm) ? dm.join(',') : undefined };
}

export function LeftSidebar() {
  const s = st();
  const counts = unreadCounts(s);
  const active = activeOf(s);
  useEffect(() => {
    if (active.channel !== undefined) ensureTopics(s, active.channel);
  }, [active.channel]);

  const subs = [...s.subs.values()].sort((a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || a.name.localeCompare(b.name));
  const groups: { name: string; subs: Subscription[] }[] = [];
  if (s.folders.length) {
    for (const f of [...s.folders].sort((a, b) => (a.order ?? a.id) - (b.order ?? b.id))) {
      const list = subs.filter((c) => c.folder_id === f.id);
      if (list.length) groups.push({ name: f.name, subs: list });
    }
    const rest = subs.filter((c) => !s.folders.some((f) => f.id === c.folder_id));
    if (rest.length) groups.push({ name: 'Other channels', subs: rest });
  } else groups.push({ name: 'Channels', subs });

  const dms = [...s.recentDms.entries()];
  for (const key of counts.byDm.keys()) if (!s.recentDms.has(key)) dms.push([key, 0]);
  dms.sort((a, b) => b[1] - a[1]);
  const drafts = Object.keys(loadDrafts()).length;

  const view = (id: string, label: string, go: () => void, n?: number) => (
    <li>
      <a
        href="#"
        class={active.view === id ? 'item active' : 'item'}
        aria-current={active.view === id ? 'page' : undefined}
        data-testid={`view-${id}`}
        onClick={(e) => {
          e.preventDefault();
          go();
        }}
      >
        <span class="label">{label}</span>
        <Count n={n} label={label} />
      </a>
    </li>
  );

  return (
    <nav class={ui.leftOpen ? 'left open' : 'left'} aria-label="Views, channels and direct messages">
      <h2 class="sr-only">Views</h2>
      <ul class="views">
        {view('inbox', 'Inbox', () => navigate({ view: 'inbox' }), counts.total)}
        {view('recent', 'Recent conversations', () => navigate({ view: 'recent' }))}
        {view('feed', 'Combined feed', () => narrowTo([]))}
        {view('mentions', 'Mentions', () => narrowTo([{ operator: 'is', operand: 'mentioned' }]), counts.mentions)}
        {view('starred', 'Starred messages', () => narrowTo([{ operator: 'is', operand: 'starred' }]), s.settings.starred_message_counts === false ? undefined : s.starred.size)}
        {view('drafts', 'Drafts', () => navigate({ view: 'drafts' }), drafts)}
      </ul>
      {groups.map((g) => (
        <section key={g.name} aria-label={g.name}>
          <h2 class="side-heading">{g.name}</h2>
          <ul class="channels">
            {g.subs.map((c) => {
              const isActive = active.channel === c.stream_id;
              const topics = isActive ? (s.topics.get(c.stream_id) ?? []) : [];
              return (
                <li key={c.stream_id} class={c.is_muted ? 'muted' : undefined}>
                  <a
                    href="#"
                    class={isActive && active.topic === undefined ? 'item active' : 'item'}
                    data-testid={`channel-${c.name}`}
                    onClick={(e) => {
                      e.preventDefault();
                      narrowTo([{ operator: 'channel', operand: c.stream_id }]);
                    }}
                  >
                    <span class="swatch" style={{ background: c.color }} aria-hidden="true">
                      {c.invite_only ? <LockIcon /> : '#'}
                    </span>
                    <span class="label">{c.name}</span>
                    <Count n={counts.byStream.get(c.stream_id)} label={`in ${c.name}`} />
                  </a>
                  {isActive && topics.length > 0 && (
                    <ul class="topics" aria-label={`Topics in ${c.name}`}>
                      {topics.slice(0, 30).map((t) => {
                        const muted = isTopicMuted(s, c.stream_id, t.name);
                        const on = active.topic !== undefined && active.topic.toLowerCase() === t.name.toLowerCase();
                        return (
                          <li key={t.name} class={muted ? 'muted' : undefined}>
                            <a
                              href="#"
                              class={on ? 'item active' : 'item'}
                              data-testid={`topic-${t.name}`}
                              title={muted ? `${t.name} (muted)` : t.name}
                              onClick={(e) => {
                                e.preventDefault();
                                narrowTo([
                                  { operator: 'channel', operand: c.stream_id },
                                  { operator: 'topic', operand: t.name },
                                ]);
                              }}
                            >
                              <span class="label">{t.name || String(s.realm.realm_empty_topic_display_name ?? 'general chat')}</span>
                              <Count n={counts.byTopic.get(userTopicKey(c.stream_id, t.name))} label={`in ${t.name}`} />
                            </a>
                          </li>
                        );
                      })}
                    </ul>
                  )}
                </li>
              );
            })}
          </ul>
        </section>
      ))}
      <section aria-label="Direct messages">
        <h2 class="side-heading">Direct messages</h2>
        <ul class="dms">
          {dms.slice(0, 40).map(([key]) => {
            const ids = key.split(',').map(Number);
            const label = ids.map((id) => userName(s, id)).join(', ');
            const emails = ids.map((id) => s.users.get(id)?.email ?? id).join(',');
            return (
              <li key={key}>
                <a
                  href="#"
                  class={active.dm === key ? 'item active' : 'item'}
                  data-testid={`dm-${emails}`}
                  onClick={(e) => {
                    e.preventDefault();
                    narrowTo([{ operator: 'dm', operand: ids }]);
                  }}
                >
                  <span class="label">{label}</span>
                  <Count n={counts.byDm.get(key)} label={`from ${label}`} />
                </a>
              </li>
            );
          })}
          {dms.length === 0 && <li class="empty">No conversations yet.</li>}
        </ul>
      </section>
    </nav>
  );
}

export { channelName };

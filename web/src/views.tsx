// The non-feed views: Inbox (unread conversations), Recent conversations, Drafts.
import { useEffect, useState } from 'preact/hooks';
import { call } from './api';
import { deleteDraft, loadDrafts } from './drafts';
import { dmPeers } from './narrow';
import { changed, channelName, dmKey, isTopicMuted, showError, st, unreadCounts, userName, userTopicKey } from './store';
import { narrowTo, openCompose } from './ui';
import { formatTime } from './message';
import { messages } from './feed-data';
import type { Message } from './types';

export function Inbox() {
  const s = st();
  const counts = unreadCounts(s);
  const topicsByStream = new Map<number, Map<string, string>>();
  for (const u of s.unread.values())
    if (u.kind === 'stream') {
      const m = topicsByStream.get(u.stream_id) ?? new Map<string, string>();
      m.set(u.topic.toLowerCase(), u.topic);
      topicsByStream.set(u.stream_id, m);
    }
  const dmKeys = [...counts.byDm.keys()];
  if (!dmKeys.length && !topicsByStream.size)
    return (
      <div class="view" data-testid="inbox">
        <h2>Inbox</h2>
        <p class="empty">You have no unread messages.</p>
      </div>
    );
  return (
    <div class="view" data-testid="inbox">
      <h2>Inbox</h2>
      {dmKeys.length > 0 && (
        <section aria-label="Direct messages">
          <h3>Direct messages</h3>
          <ul class="rows">
            {dmKeys.map((k) => {
              const ids = k.split(',').map(Number);
              return (
                <li key={k}>
                  <button type="button" class="row-btn" onClick={() => narrowTo([{ operator: 'dm', operand: ids }])}>
                    <span class="label">{ids.map((id) => userName(s, id)).join(', ')}</span>
                    <span class="count" data-testid="unread-count">{counts.byDm.get(k)}</span>
                  </button>
                </li>
              );
            })}
          </ul>
        </section>
      )}
      {[...topicsByStream.entries()]
        .sort((a, b) => channelName(s, a[0]).localeCompare(channelName(s, b[0])))
        .map(([sid, topics]) => (
          <section key={sid} aria-label={`#${channelName(s, sid)}`}>
            <h3>
              <button type="button" class="link" onClick={() => narrowTo([{ operator: 'channel', operand: sid }])}>
                <span class="swatch" style={{ background: s.subs.get(sid)?.color }} aria-hidden="true">#</span>
                {channelName(s, sid)}
              </button>{' '}
              {counts.byStream.get(sid) ? <span class="count" data-testid="unread-count">{counts.byStream.get(sid)}</span> : null}
            </h3>
            <ul class="rows">
              {[...topics.values()].map((t) => (
                <li key={t} class={isTopicMuted(s, sid, t) ? 'muted' : undefined}>
                  <button type="button" class="row-btn" onClick={() => narrowTo([{ operator: 'channel', operand: sid }, { operator: 'topic', operand: t }])}>
                    <span class="label">{t || String(s.realm.realm_empty_topic_display_name ?? 'general chat')}</span>
                    <span class="count" data-testid="unread-count">{counts.byTopic.get(userTopicKey(sid, t))}</span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        ))}
    </div>
  );
}

export function Recent() {
  const s = st();
  const [list, setList] = useState<Message[] | null>(null);
  useEffect(() => {
    call<{ messages: Message[] }>('GET', 'messages', { anchor: 'newest', num_before: 400, num_after: 0, narrow: [], apply_markdown: false, client_gravatar: false })
      .then((r) => setList(r.messages))
      .catch((e) => {
        showError(e);
        setList([]);
      });
  }, []);
  if (!list) return <div class="view" role="status">Loading recent conversations…</div>;
  // Messages that arrived live since the fetch are in the shared cache.
  const maxId = list.length ? list[list.length - 1]!.id : 0;
  const live = [...messages.values()].filter((m) => m.id > maxId).sort((a, b) => a.id - b.id);
  const convs = new Map<string, { last: Message; senders: Set<number> }>();
  for (const m of [...list, ...live].reverse()) {
    const k = m.type === 'stream' ? `s:${m.stream_id}:${m.subject.toLowerCase()}` : `d:${dmKey(dmPeers(m, s.myId))}`;
    const c = convs.get(k);
    if (c) c.senders.add(m.sender_id);
    else convs.set(k, { last: m, senders: new Set([m.sender_id]) });
  }
  return (
    <div class="view" data-testid="recent">
      <h2>Recent conversations</h2>
      {convs.size === 0 && <p class="empty">No conversations yet.</p>}
      <table class="recent">
        <thead>
          <tr><th scope="col">Conversation</th><th scope="col">Participants</th><th scope="col">Last message</th></tr>
        </thead>
        <tbody>
          {[...convs.values()].map(({ last: m, senders }) => {
            const peers = m.type === 'private' ? dmPeers(m, s.myId) : [];
            return (
              <tr key={m.id}>
                <td>
                  <button
                    type="button"
                    class="link"
                    onClick={() =>
                      narrowTo(m.type === 'stream' ? [{ operator: 'channel', operand: m.stream_id! }, { operator: 'topic', operand: m.subject }] : [{ operator: 'dm', operand: peers }])
                    }
                  >
                    {m.type === 'stream' ? `#${channelName(s, m.stream_id)} › ${m.subject}` : peers.map((id) => userName(s, id)).join(', ')}
                  </button>
                </td>
                <td>{[...senders].map((id) => userName(s, id)).join(', ')}</td>
                <td>
                  {new Date(m.timestamp * 1000).toDateString() === new Date().toDateString()
                    ? formatTime(m.timestamp, s.settings.twenty_four_hour_time)
                    : new Date(m.timestamp * 1000).toLocaleDateString()}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function Drafts() {
  const drafts = Object.values(loadDrafts()).sort((a, b) => b.timestamp - a.timestamp);
  return (
    <div class="view" data-testid="drafts">
      <h2>Drafts</h2>
      {drafts.length === 0 && <p class="empty">No drafts. Drafts are saved as you type.</p>}
      <ul class="rows">
        {drafts.map((d) => (
          <li key={d.key} class="draft" data-testid="draft">
            <div class="draft-head">{d.type === 'stream' ? `#${d.channel} › ${d.topic}` : `To ${d.to}`}</div>
            <p class="draft-text">{d.content}</p>
            <div class="row">
              <button
                type="button"
                onClick={() =>
                  openCompose({ mode: d.type === 'stream' ? 'stream' : 'dm', channel: d.channel, topic: d.topic, to: d.to, content: d.content })
                }
              >
                Restore
              </button>
              <button
                type="button"
                onClick={() => {
                  deleteDraft(d.key);
                  changed();
                }}
              >
                Delete
              </button>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

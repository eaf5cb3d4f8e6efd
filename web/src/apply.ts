// Applies one event from GET /events to the client state (store + message cache).
// Event shapes are Zulip's (zerver/openapi/zulip.yaml, "get-events"); fields are read
// defensively because old and new forms (subject/topic, message_id/message_ids) both occur.
import { addLiveMessage, feedBox, messages, removeMessages } from './feed-data';
import { dmPeers } from './narrow';
import { maybeNotify } from './notify';
import { dmKey, st, userTopicKey } from './store';
import type { State } from './store';
import type { ChannelFolder, Message, Reaction, Subscription, User, UserStatus, UserTopic } from './types';

type Ev = { type: string } & Record<string, unknown>;

function unreadInfoFor(s: State, m: Message) {
  return m.type === 'stream'
    ? { kind: 'stream' as const, stream_id: m.stream_id!, topic: m.subject }
    : { kind: 'dm' as const, key: dmKey(dmPeers(m, s.myId)) };
}

function noteTopic(s: State, streamId: number, topic: string, id: number): void {
  const list = s.topics.get(streamId);
  if (!list) return;
  const t = list.find((x) => x.name.toLowerCase() === topic.toLowerCase());
  if (t) t.max_id = Math.max(t.max_id, id);
  else list.push({ name: topic, max_id: id });
  list.sort((a, b) => b.max_id - a.max_id);
}

function onMessage(s: State, ev: Ev): void {
  const m = { ...(ev.message as Message), flags: (ev.flags as string[]) ?? [] };
  if (m.reactions === undefined) m.reactions = [];
  addLiveMessage(m);
  if (!m.flags.includes('read')) s.unread.set(m.id, unreadInfoFor(s, m));
  if (m.flags.some((f) => f.includes('mentioned'))) s.mentions.add(m.id);
  if (m.type === 'private') s.recentDms.set(dmKey(dmPeers(m, s.myId)), m.id);
  else noteTopic(s, m.stream_id!, m.subject, m.id);
  s.typing = s.typing.filter((t) => t.userId !== m.sender_id);
  maybeNotify(s, m);
}

function onUpdateMessage(s: State, ev: Ev): void {
  const id = ev.message_id as number | undefined;
  const ids = (ev.message_ids as number[] | undefined) ?? (id !== undefined ? [id] : []);
  if (id !== undefined && typeof ev.rendered_content === 'string') {
    const m = messages.get(id);
    if (m) {
      m.content = ev.rendered_content;
      if (typeof ev.edit_timestamp === 'number') m.last_edit_timestamp = ev.edit_timestamp;
      if (typeof ev.is_me_message === 'boolean') m.is_me_message = ev.is_me_message;
    }
  }
  const newTopic = (ev.topic ?? ev.subject) as string | undefined;
  const newStream = ev.new_stream_id as number | undefined;
  if (newTopic === undefined && newStream === undefined) return;
  for (const mid of ids) {
    const m = messages.get(mid);
    if (m) {
      if (newTopic !== undefined) m.subject = newTopic;
      if (newStream !== undefined) {
        m.stream_id = newStream;
        m.display_recipient = s.subs.get(newStream)?.name ?? s.otherChannels.get(newStream)?.name ?? '';
      }
      if (typeof ev.edit_timestamp === 'number') m.last_moved_timestamp = ev.edit_timestamp;
    }
    const u = s.unread.get(mid);
    if (u && u.kind === 'stream')
      s.unread.set(mid, { kind: 'stream', stream_id: newStream ?? u.stream_id, topic: newTopic ?? u.topic });
  }
  const streamId = newStream ?? (ev.stream_id as number | undefined);
  if (streamId !== undefined && newTopic !== undefined) noteTopic(s, streamId, newTopic, Math.max(...ids));
  // Moved messages may have left the narrow; the feed keeps them until it is reopened,
  // which matches Zulip (the view does not jump under the reader).
}

function onDelete(s: State, ev: Ev): void {
  const ids = (ev.message_ids as number[] | undefined) ?? [ev.message_id as number];
  for (const id of ids) {
    s.unread.delete(id);
    s.mentions.delete(id);
    s.starred.delete(id);
  }
  removeMessages(ids);
}

function onReaction(ev: Ev): void {
  const m = messages.get(ev.message_id as number);
  if (!m) return;
  const r: Reaction = {
    emoji_name: ev.emoji_name as string,
    emoji_code: ev.emoji_code as string,
    reaction_type: ev.reaction_type as string,
    user_id: (ev.user_id as number) ?? (ev.user as { user_id: number }).user_id,
  };
  const same = (x: Reaction) => x.user_id === r.user_id && x.emoji_code === r.emoji_code && x.reaction_type === r.reaction_type;
  if (ev.op === 'add') {
    if (!m.reactions.some(same)) m.reactions = [...m.reactions, r];
  } else m.reactions = m.reactions.filter((x) => !same(x));
}

function onFlags(s: State, ev: Ev): void {
  const flag = ev.flag as string;
  const add = ev.op === 'add';
  const ids = (ev.messages as number[]) ?? [];
  if (flag === 'read') {
    if (add && ev.all) s.unread.clear();
    for (const id of ids) {
      if (add) s.unread.delete(id);
      else {
        const m = messages.get(id);
        const d = (ev.message_details as Record<string, { type: string; stream_id?: number; topic?: string; user_ids?: number[]; mentioned?: boolean }> | undefined)?.[id];
        if (m) s.unread.set(id, unreadInfoFor(s, m));
        else if (d?.type === 'stream') s.unread.set(id, { kind: 'stream', stream_id: d.stream_id!, topic: d.topic ?? '' });
        else if (d) s.unread.set(id, { kind: 'dm', key: d.user_ids?.length ? dmKey(d.user_ids) : String(s.myId) });
        if (d?.mentioned) s.mentions.add(id);
      }
    }
  }
  if (flag === 'starred') for (const id of ids) add ? s.starred.add(id) : s.starred.delete(id);
  for (const id of ids) {
    const m = messages.get(id);
    if (!m) continue;
    const has = m.flags.includes(flag);
    if (add && !has) m.flags = [...m.flags, flag];
    if (!add && has) m.flags = m.flags.filter((f) => f !== flag);
  }
  if (add && ev.all) for (const m of messages.values()) if (!m.flags.includes(flag)) m.flags = [...m.flags, flag];
}

function onTyping(s: State, ev: Ev): void {
  const sender = (ev.sender as { user_id: number }).user_id;
  if (sender === s.myId) return;
  let key: string;
  if (ev.message_type === 'stream' || ev.stream_id !== undefined) key = `s:${ev.stream_id}:${String(ev.topic ?? '').toLowerCase()}`;
  else {
    const ids = ((ev.recipients as { user_id: number }[]) ?? []).map((r) => r.user_id).filter((id) => id !== s.myId);
    key = `d:${dmKey(ids.length ? ids : [s.myId])}`;
  }
  s.typing = s.typing.filter((t) => !(t.userId === sender && t.key === key));
  if (ev.op === 'start') {
    const ms = (s.realm.server_typing_started_expiry_period_milliseconds as number) ?? 45000;
    s.typing.push({ key, userId: sender, expires: Date.now() + ms });
  }
}

function onSubscription(s: State, ev: Ev): void {
  if (ev.op === 'add') {
    for (const sub of ev.subscriptions as Subscription[]) {
      s.subs.set(sub.stream_id, sub);
      s.otherChannels.delete(sub.stream_id);
    }
  } else if (ev.op === 'remove') {
    for (const sub of ev.subscriptions as { stream_id: number; name: string }[]) {
      s.subs.delete(sub.stream_id);
      s.otherChannels.set(sub.stream_id, { stream_id: sub.stream_id, name: sub.name });
      for (const [id, u] of s.unread) if (u.kind === 'stream' && u.stream_id === sub.stream_id) s.unread.delete(id);
    }
  } else if (ev.op === 'update') {
    const sub = s.subs.get(ev.stream_id as number);
    if (sub) {
      (sub as unknown as Record<string, unknown>)[ev.property as string] = ev.value;
      if (ev.property === 'in_home_view') sub.is_muted = !ev.value;
    }
  }
}

function onStream(s: State, ev: Ev): void {
  if (ev.op === 'update') {
    const id = ev.stream_id as number;
    const sub = s.subs.get(id) as unknown as Record<string, unknown> | undefined;
    if (sub) sub[ev.property as string] = ev.value;
    const other = s.otherChannels.get(id);
    if (other && ev.property === 'name') other.name = ev.value as string;
    if (ev.property === 'name')
      for (const m of messages.values()) if (m.stream_id === id) m.display_recipient = ev.value as string;
  } else if (ev.op === 'create') {
    for (const c of ev.streams as { stream_id: number; name: string }[])
      if (!s.subs.has(c.stream_id)) s.otherChannels.set(c.stream_id, { stream_id: c.stream_id, name: c.name });
  } else if (ev.op === 'delete') {
    for (const c of ev.streams as { stream_id: number }[]) {
      s.subs.delete(c.stream_id);
      s.otherChannels.delete(c.stream_id);
    }
  }
}

function onRealmUser(s: State, ev: Ev): void {
  const p = ev.person as Partial<User> & { user_id: number };
  if (ev.op === 'add') s.users.set(p.user_id, p as User);
  else if (ev.op === 'remove') {
    const u = s.users.get(p.user_id);
    if (u) u.is_active = false;
  } else if (ev.op === 'update') {
    const u = s.users.get(p.user_id);
    if (u) Object.assign(u, p);
    if (p.full_name !== undefined)
      for (const m of messages.values()) if (m.sender_id === p.user_id) m.sender_full_name = p.full_name;
    if (p.avatar_url !== undefined)
      for (const m of messages.values()) if (m.sender_id === p.user_id) m.avatar_url = p.avatar_url ?? null;
  }
}

function onPresence(s: State, ev: Ev): void {
  if (ev.presences) {
    for (const [id, v] of Object.entries(ev.presences as Record<string, { active_timestamp?: number; idle_timestamp?: number }>))
      s.presence.set(Number(id), v);
    return;
  }
  // Legacy form: {user_id, presence: {<client>: {status, timestamp}}}
  const id = ev.user_id as number;
  const cur = { ...(s.presence.get(id) ?? {}) };
  for (const c of Object.values((ev.presence as Record<string, { status: string; timestamp: number }>) ?? {})) {
    if (c.status === 'active') cur.active_timestamp = Math.max(cur.active_timestamp ?? 0, c.timestamp);
    cur.idle_timestamp = Math.max(cur.idle_timestamp ?? 0, c.timestamp);
  }
  s.presence.set(id, cur);
}

export function applyEvent(ev: Ev): void {
  const s = st();
  switch (ev.type) {
    case 'message': return onMessage(s, ev);
    case 'update_message': return onUpdateMessage(s, ev);
    case 'delete_message': return onDelete(s, ev);
    case 'reaction': return onReaction(ev);
    case 'update_message_flags': return onFlags(s, ev);
    case 'typing': return onTyping(s, ev);
    case 'presence': return onPresence(s, ev);
    case 'subscription': return onSubscription(s, ev);
    case 'stream': return onStream(s, ev);
    case 'realm_user': return onRealmUser(s, ev);
    case 'user_settings':
      if (ev.op === 'update') s.settings = { ...s.settings, [ev.property as string]: ev.value };
      return;
    case 'user_topic': {
      const t = ev as unknown as UserTopic;
      s.userTopics.set(userTopicKey(t.stream_id, t.topic_name), t);
      return;
    }
    case 'user_status': {
      const id = ev.user_id as number;
      const cur = { ...(s.userStatus.get(id) ?? {}) } as UserStatus;
      for (const k of ['status_text', 'emoji_name', 'emoji_code', 'reaction_type', 'away'] as const)
        if (k in ev) (cur as Record<string, unknown>)[k] = ev[k];
      s.userStatus.set(id, cur);
      return;
    }
    case 'realm':
      if (ev.op === 'update') s.realm = { ...s.realm, [`realm_${ev.property as string}`]: ev.value };
      else if (ev.op === 'update_dict')
        s.realm = { ...s.realm, ...Object.fromEntries(Object.entries((ev.data as object) ?? {}).map(([k, v]) => [`realm_${k}`, v])) };
      return;
    case 'realm_emoji':
      s.realmEmoji = new Map(Object.entries((ev.realm_emoji as Record<string, never>) ?? {}));
      return;
    case 'channel_folder':
      if (ev.op === 'add') s.folders = [...s.folders, ev.channel_folder as ChannelFolder];
      else if (ev.op === 'update')
        s.folders = s.folders.map((f) => (f.id === ev.channel_folder_id ? { ...f, ...(ev.data as object) } : f)).filter((f) => !f.is_archived);
      return;
    default:
      return; // heartbeat and events this client does not display
  }
}

/** Drops typing notices whose time ran out (called by a timer). */
export function expireTyping(): boolean {
  const s = st();
  const n = Date.now();
  const before = s.typing.length;
  s.typing = s.typing.filter((t) => t.expires > n);
  return s.typing.length !== before;
}

export { feedBox };

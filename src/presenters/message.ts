import { dummyEmail } from './user.js';
import { ALL, INACCESSIBLE_USER_AVATAR, INACCESSIBLE_USER_NAME, type AccessSet } from '../domain/access/user-access.js';
import { topicLinks, type Linkifier } from '../domain/rules/markdown/index.js';
import { flagList, HISTORICAL_FLAGS } from '../domain/rules/message-flags.js';
import { resolveToggled, topicForClient } from '../domain/rules/topics.js';
import { EMAIL_VISIBLE_EVERYONE } from '../domain/rules/users.js';
import type { MessageRow, ReactionRow } from '../store/messages.js';
import { dmParticipants, type MessagePerson, type MessageRelations } from '../store/message-relations.js';
import { apiEmail, avatarUrl, emailVisibility } from './user.js';

/**
 * Zulip's message dict (build_message_dict + finalize_payload): shared by
 * GET /messages, GET /messages/{id} and message events. Client capabilities
 * are explicit options; the function is pure.
 */
export type EditHistoryPolicy = 'all' | 'moves' | 'none';

export interface MessageViewOptions {
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly allowEmptyTopicName: boolean;
  readonly emptyTopicName: string;
  readonly editHistoryPolicy: EditHistoryPolicy;
  readonly realmStr: string;
  readonly fakeEmailDomain: string;
  /** The realm's linkifiers, for topic_links. */
  readonly linkifiers: readonly Linkifier[];
  /** What the reader can access (restricted guests); absent: everyone. */
  readonly access?: AccessSet;
}

/** The columns of a message row that presenting it reads (GET /messages selects only these). */
export type PresentedMessageRow = Pick<
  MessageRow,
  'id' | 'sender_id' | 'recipient_id' | 'stream_id' | 'dm_key' | 'topic' | 'content' | 'rendered_content' | 'date_sent' | 'sending_client' | 'is_me_message' | 'edit_history'
>;

/** An entry of messages.edit_history (stored newest first). */
export interface EditHistoryEntry {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

const UNKNOWN_PERSON = (id: number): MessagePerson => ({
  id,
  realm_id: 0,
  full_name: 'Unknown user',
  delivery_email: `user${id}@unknown`,
  settings: '{}',
  is_bot: 0,
  avatar_source: 'G',
  avatar_version: 1,
});

/**
 * What presenting a person costs (settings JSON, email visibility, avatar
 * hash), computed once per person object: a page of 50 messages usually has
 * a handful of senders.
 */
interface PersonView {
  readonly email: string;
  readonly gravatarVisible: boolean;
  readonly avatar: string;
}
const personViews = new WeakMap<MessagePerson, Map<string, PersonView>>();

function personView(p: MessagePerson, domain: string): PersonView {
  let byDomain = personViews.get(p);
  if (!byDomain) personViews.set(p, (byDomain = new Map()));
  let v = byDomain.get(domain);
  if (!v) {
    v = { email: apiEmail(p, domain), gravatarVisible: p.avatar_source === 'G' && emailVisibility(p) === EMAIL_VISIBLE_EVERYONE, avatar: avatarUrl(p) };
    byDomain.set(domain, v);
  }
  return v;
}

/** The sender's avatar: null when the client computes gravatars itself and can (the sender's email is public). */
export function messageAvatarUrl(sender: MessagePerson, clientGravatar: boolean, domain = ''): string | null {
  const v = personView(sender, domain);
  return clientGravatar && v.gravatarVisible ? null : v.avatar;
}

export function presentReaction(r: ReactionRow, person: MessagePerson, domain: string): Record<string, unknown> {
  return {
    emoji_name: r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
    user_id: r.user_id,
    user: { email: personView(person, domain).email, id: person.id, full_name: person.full_name },
  };
}

export function displayRecipient(dmKey: string, users: ReadonlyMap<number, MessagePerson>, domain: string): Record<string, unknown>[] {
  return dmParticipants(dmKey).map((id) => {
    const u = users.get(id) ?? UNKNOWN_PERSON(id);
    return { id, email: personView(u, domain).email, full_name: u.full_name, is_mirror_dummy: false };
  });
}

export const parseEditHistory = (raw: string | null): EditHistoryEntry[] => (raw ? (JSON.parse(raw) as EditHistoryEntry[]) : []);

/** Zulip's visible_edit_history_for_message: under "moves", content-only edits disappear and content fields go. */
export function visibleEditHistory<T extends Record<string, unknown>>(policy: EditHistoryPolicy, entries: readonly T[]): T[] {
  if (policy === 'all') return [...entries];
  const out: T[] = [];
  for (const e of entries) {
    if ('prev_content' in e) {
      if (!('prev_topic' in e)) continue;
      const { prev_content: _c, prev_rendered_content: _r, content_html_diff: _d, ...rest } = e as Record<string, unknown>;
      out.push(rest as T);
    } else out.push(e);
  }
  return out;
}

/** last_edit_timestamp (content edits) and last_moved_timestamp (topic or channel moves, resolving excluded). */
export function editTimestamps(entries: readonly EditHistoryEntry[]): { edited?: number; moved?: number } {
  let edited = 0;
  let moved = 0;
  for (const e of entries) {
    if (e.prev_stream !== undefined) moved = Math.max(moved, e.timestamp);
    else if (e.prev_topic !== undefined && !resolveToggled(e.topic ?? '', e.prev_topic)) moved = Math.max(moved, e.timestamp);
    if (e.prev_content !== undefined) edited = Math.max(edited, e.timestamp);
  }
  return { ...(edited ? { edited } : {}), ...(moved ? { moved } : {}) };
}

function clientEditHistory(entries: readonly EditHistoryEntry[], o: MessageViewOptions): Record<string, unknown>[] {
  const shown = entries.map((e) => {
    const out: Record<string, unknown> = { ...e };
    if (typeof e.prev_topic === 'string') out.prev_topic = topicForClient(e.prev_topic, o.allowEmptyTopicName, o.emptyTopicName);
    if (typeof e.topic === 'string') out.topic = topicForClient(e.topic, o.allowEmptyTopicName, o.emptyTopicName);
    return out;
  });
  return visibleEditHistory(o.editHistoryPolicy, shown);
}

/**
 * One message for one reader. `flags` is the reader's bitmask (null: the
 * reader has no row, so ["read", "historical"] as Zulip reports it) or
 * undefined where Zulip sends no flags.
 */
export function presentMessage(
  m: PresentedMessageRow,
  rel: MessageRelations,
  o: MessageViewOptions,
  flags?: number | null,
): Record<string, unknown> {
  const sender = rel.users.get(m.sender_id) ?? UNKNOWN_PERSON(m.sender_id);
  const isChannel = m.stream_id !== null;
  const out: Record<string, unknown> = {
    id: m.id,
    sender_id: m.sender_id,
    content: o.applyMarkdown ? m.rendered_content : m.content,
    recipient_id: m.recipient_id,
    timestamp: m.date_sent,
    client: m.sending_client,
    subject: isChannel ? topicForClient(m.topic, o.allowEmptyTopicName, o.emptyTopicName) : '',
    topic_links: isChannel ? topicLinks(m.topic, o.linkifiers) : [],
    is_me_message: m.is_me_message === 1,
    reactions: (rel.reactions.get(m.id) ?? []).map((r) => {
      const out = presentReaction(r, rel.users.get(r.user_id) ?? UNKNOWN_PERSON(r.user_id), o.fakeEmailDomain);
      // A reactor the reader cannot access: the placeholder's name and dummy email in the legacy `user` object.
      if (o.access !== undefined && o.access !== ALL && !o.access.has(r.user_id)) {
        out.user = { email: dummyEmail(r.user_id, o.fakeEmailDomain), id: r.user_id, full_name: INACCESSIBLE_USER_NAME };
      }
      return out;
    }),
    submessages: [],
    sender_full_name: sender.full_name,
    sender_email: personView(sender, o.fakeEmailDomain).email,
    sender_realm_str: o.realmStr,
    display_recipient: isChannel ? (rel.channels.get(m.stream_id!) ?? '') : displayRecipient(m.dm_key ?? String(m.sender_id), rel.users, o.fakeEmailDomain),
    type: isChannel ? 'stream' : 'private',
  };
  if (isChannel) out.stream_id = m.stream_id;
  out.avatar_url = messageAvatarUrl(sender, o.clientGravatar, o.fakeEmailDomain);
  // A sender the reader cannot access is Zulip's placeholder (name, dummy email, avatar).
  if (o.access !== undefined && o.access !== ALL && !o.access.has(m.sender_id)) {
    out.sender_full_name = INACCESSIBLE_USER_NAME;
    out.sender_email = dummyEmail(m.sender_id, o.fakeEmailDomain);
    out.avatar_url = INACCESSIBLE_USER_AVATAR;
  }
  out.content_type = o.applyMarkdown ? 'text/html' : 'text/x-markdown';
  if (m.edit_history) {
    const entries = parseEditHistory(m.edit_history);
    const { edited, moved } = editTimestamps(entries);
    if (o.editHistoryPolicy !== 'none') out.edit_history = clientEditHistory(entries, o);
    if (edited !== undefined) out.last_edit_timestamp = edited;
    if (moved !== undefined) out.last_moved_timestamp = moved;
  }
  if (flags !== undefined) out.flags = flagList(flags === null ? HISTORICAL_FLAGS : flags);
  return out;
}

import type { Db } from '../../store/db.js';
import type { Caller, TxDb } from '../context.js';
import { badRequest, type JsonableError } from '../errors.js';
import { groupIdsContainingUser } from '../rules/group-settings.js';
import { ROLE_GUEST } from '../rules/users.js';
import { channelById, channelByName, channelsByIds, type ChannelRow } from '../../store/channels.js';
import { messageWithFlags, type MessageRow } from '../../store/messages.js';
import { fakeEmailDomain } from '../../config.js';
import type { AppCtx } from '../context.js';
import { emailVisibility } from '../../presenters/user.js';
import { visibilitiesSeenBy } from '../rules/users.js';
import type { UserRow } from '../../store/users.js';

type AnyDb = Db | TxDb;

/**
 * Who may see a message, checked here and nowhere else (Zulip's
 * has_message_access). Every refusal is the same "Invalid message(s)", so a
 * response never tells a missing message from one the caller may not see.
 *
 * - A direct message: only its participants (they have a user_messages row).
 * - A channel message: public channels for non-guests; otherwise the caller
 *   needs content access (subscribed, or in the channel's can_subscribe /
 *   can_add_subscribers group), and for protected history also a row for
 *   the message (received it while subscribed).
 * - Modifying (edit, delete, react, typing): never in an archived channel.
 */
export const invalidMessage = (): JsonableError => badRequest('Invalid message(s)');

export interface AccessedMessage {
  readonly message: MessageRow;
  /** The caller's flags, or null without a user_messages row. */
  readonly umFlags: number | null;
  readonly channel: ChannelRow | null;
}

/** Lazily loaded facts about the caller, so each check costs only the queries it needs. */
export class MessageViewer {
  private groups: Promise<Set<number>> | undefined;
  private subs: Promise<Set<number>> | undefined;
  constructor(
    readonly db: AnyDb,
    readonly caller: Pick<Caller, 'id' | 'realmId' | 'role'>,
  ) {}
  get isGuest(): boolean {
    return this.caller.role === ROLE_GUEST;
  }
  groupIds(): Promise<Set<number>> {
    this.groups ??= groupIdsContainingUser(this.db, this.caller.id);
    return this.groups;
  }
  subscribedChannelIds(): Promise<Set<number>> {
    this.subs ??= this.db
      .selectFrom('subscriptions')
      .select('channel_id')
      .where('user_id', '=', this.caller.id)
      .where('active', '=', 1)
      .execute()
      .then((rows) => new Set(rows.map((r) => r.channel_id)));
    return this.subs;
  }
  /** Content access other than "public channel": subscribed, or in a group granting it (never guests). */
  async hasContentAccess(ch: ChannelRow): Promise<boolean> {
    if ((await this.subscribedChannelIds()).has(ch.id)) return true;
    if (this.isGuest) return false;
    const g = await this.groupIds();
    return g.has(ch.can_subscribe_group_id) || g.has(ch.can_add_subscribers_group_id);
  }
  /** Zulip's can_access_stream_history: may read messages sent before joining. */
  async canReadHistory(ch: ChannelRow): Promise<boolean> {
    if (ch.is_web_public) return true;
    if (!ch.invite_only && !this.isGuest) return true;
    if (!ch.history_public_to_subscribers) return false;
    return this.hasContentAccess(ch);
  }
}

/** Zulip's has_message_access for one message whose channel (if any) is known. */
export async function canAccessMessage(
  v: MessageViewer,
  m: Pick<MessageRow, 'stream_id' | 'realm_id'>,
  hasRow: boolean,
  ch: ChannelRow | null,
  forModify: boolean,
): Promise<boolean> {
  if (m.realm_id !== v.caller.realmId) return false;
  if (m.stream_id === null) return hasRow;
  if (!ch || ch.realm_id !== v.caller.realmId) return false;
  if (forModify && ch.deactivated) return false;
  if (!ch.invite_only && !v.isGuest) return true;
  if (!ch.history_public_to_subscribers) return hasRow && (await v.hasContentAccess(ch));
  return v.hasContentAccess(ch);
}

/** Fetches a message the caller may see (or modify), with the caller's flags and its channel. */
export async function accessMessage(
  db: AnyDb,
  caller: Pick<Caller, 'id' | 'realmId' | 'role'>,
  messageId: number,
  opts: { forModify: boolean; viewer?: MessageViewer },
): Promise<AccessedMessage> {
  const row = await messageWithFlags(db, messageId, caller.id);
  if (!row || row.realm_id !== caller.realmId) throw invalidMessage();
  const { um_flags: umFlags, ...message } = row;
  const channel = message.stream_id === null ? null : ((await channelById(db, caller.realmId, message.stream_id)) ?? null);
  const v = opts.viewer ?? new MessageViewer(db, caller);
  if (!(await canAccessMessage(v, message, umFlags !== null, channel, opts.forModify))) throw invalidMessage();
  return { message, umFlags, channel };
}

/**
 * Zulip's bulk_access_messages: the subset of messages the caller may see,
 * given which of them the caller has rows for. A fixed number of queries.
 */
export async function bulkAccessible(
  db: AnyDb,
  caller: Pick<Caller, 'id' | 'realmId' | 'role'>,
  messages: readonly MessageRow[],
  withRows: ReadonlySet<number>,
): Promise<MessageRow[]> {
  const channelIds = [...new Set(messages.map((m) => m.stream_id).filter((id): id is number => id !== null))];
  const channels = new Map((await channelsByIds(db, caller.realmId, channelIds)).map((c) => [c.id, c]));
  const v = new MessageViewer(db, caller);
  const out: MessageRow[] = [];
  for (const m of messages) {
    const ch = m.stream_id === null ? null : (channels.get(m.stream_id) ?? null);
    if (await canAccessMessage(v, m, withRows.has(m.id), ch, false)) out.push(m);
  }
  return out;
}

/** A channel named by id or (case-insensitive) name, whatever the caller's access; undefined when missing. */
export async function channelByIdOrName(db: AnyDb, realmId: number, operand: string | number): Promise<ChannelRow | undefined> {
  return typeof operand === 'number' ? channelById(db, realmId, operand) : channelByName(db, realmId, operand);
}

/**
 * Users named by API email, as Zulip's get_user does it: the dummy
 * user{id}@{host} form finds anyone; a real address only users whose email
 * visibility lets this caller see it. Returns a map keyed by the email as given.
 */
export async function usersByEmails(app: AppCtx, caller: Pick<Caller, 'realmId' | 'role'>, emails: readonly string[]): Promise<Map<string, UserRow>> {
  const domain = fakeEmailDomain(app.config).toLowerCase();
  const ids = new Map<number, string[]>();
  const lowers = new Map<string, string[]>();
  for (const e of emails) {
    const m = /^user(\d{1,15})@(.+)$/i.exec(e.trim());
    if (m && m[2]!.toLowerCase() === domain) {
      const id = Number(m[1]);
      ids.set(id, [...(ids.get(id) ?? []), e]);
    } else {
      const l = e.trim().toLowerCase();
      lowers.set(l, [...(lowers.get(l) ?? []), e]);
    }
  }
  const out = new Map<string, UserRow>();
  if (ids.size === 0 && lowers.size === 0) return out;
  let q = app.db.selectFrom('users').selectAll().where('realm_id', '=', caller.realmId);
  q = q.where((eb) =>
    eb.or([
      ...(ids.size ? [eb('id', 'in', [...ids.keys()])] : []),
      ...(lowers.size ? [eb('email_lower', 'in', [...lowers.keys()])] : []),
    ]),
  );
  const seen = visibilitiesSeenBy(caller.role);
  for (const u of await q.execute()) {
    for (const e of ids.get(u.id) ?? []) out.set(e, u);
    if (u.is_bot || seen.includes(emailVisibility(u))) for (const e of lowers.get(u.email_lower) ?? []) out.set(e, u);
  }
  return out;
}

/**
 * Who hears about an action on messages of one conversation (reactions,
 * edits, deletions): Zulip's event_recipient_ids_for_action_on_messages.
 * DMs: their participants. Channels with protected history: subscribers who
 * received the messages. Other private channels: the subscribers. Public
 * channels: the subscribers and any non-guest with a row for the messages.
 * Active users only; two queries.
 */
export async function eventRecipientIds(db: AnyDb, messageIds: readonly number[], channel: ChannelRow | null): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const rows = await db
    .selectFrom('user_messages as um')
    .innerJoin('users as u', 'u.id', 'um.user_id')
    .select(['um.user_id', 'u.role'])
    .where('um.message_id', 'in', [...messageIds])
    .where('u.is_active', '=', 1)
    .execute();
  const withRows = new Set(rows.map((r) => r.user_id));
  if (!channel) return [...withRows].sort((a, b) => a - b);
  const subs = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select('s.user_id')
    .where('s.channel_id', '=', channel.id)
    .where('s.active', '=', 1)
    .where('u.is_active', '=', 1)
    .execute();
  const subscribers = new Set(subs.map((s) => s.user_id));
  let out: Set<number>;
  if (!channel.history_public_to_subscribers) out = new Set([...withRows].filter((id) => subscribers.has(id)));
  else if (channel.invite_only) out = subscribers;
  else out = new Set([...subscribers, ...rows.filter((r) => r.role !== ROLE_GUEST).map((r) => r.user_id)]);
  return [...out].sort((a, b) => a - b);
}

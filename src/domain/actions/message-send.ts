import { claimAttachments, uploadPathIds } from './attachments.js';
import { embeddableLink } from '../link-embeds.js';
import { ROLE_GUEST } from '../rules/users.js';
import { accessSets, canAccessUser, restrictingGroupId } from '../access/user-access.js';
import { accessBefore, emitAccessChanges } from '../access/user-access-events.js';
import { fakeEmailDomain, realmUrl } from '../../config.js';
import { realmOf } from '../realm-row-cache.js';
import type { AppCtx, Tx } from '../context.js';
import { announceGroupCommit, groupCommit } from '../group-commit.js';
import { badRequest, JsonableError } from '../errors.js';
import { checkCanCreateTopic, checkChannelSend, metadataUserIdsOf } from '../access/channels.js';
import { usersByEmails } from '../access/messages.js';
import { contentTraits, renderMessageContent } from '../message-render.js';
import { normalizeMessageContent, type Linkifier, type RenderResult } from '../rules/markdown/index.js';
import { linkifiersForRealm } from '../access/linkifiers.js';
import { mutersOf } from '../../store/muted-users.js';
import { FLAG_MENTIONED, FLAG_PRIVATE, FLAG_READ, FLAG_STREAM_WILDCARD, FLAG_TOPIC_WILDCARD, flagList } from '../rules/message-flags.js';
import { checkChannelName, effectiveTopicsPolicy, RECIPIENT_PERSONAL, VISIBILITY_FOLLOWED, VISIBILITY_INHERIT, VISIBILITY_UNMUTED } from '../rules/channels.js';
import { checkTopic, incomingTopic, topicKey, truncateTopic } from '../rules/topics.js';
import { realmSettings, type RealmSettings } from '../rules/realm-settings.js';
import { groupIdsContainingUser, isUserInGroup, recursiveMemberIds } from '../rules/group-settings.js';
import { sendReads } from '../send-read-cache.js';
import { userHasRealmPermission } from '../rules/realm-group-settings.js';
import { userSettings } from '../rules/user-settings.js';
import { apiEmail } from '../../presenters/user.js';
import { messageAvatarUrl, presentMessage } from '../../presenters/message.js';
import { channelById, channelByName, isStorableId, type ChannelRow } from '../../store/channels.js';
import { userTopicRow } from '../../store/channel-extras.js';
import { nowSeconds, preparedOnPostgres } from '../../store/db.js';
import { sql } from 'kysely';
import { directRead } from '../../store/prepared.js';
import {
  conversationExists,
  firstTopicMessageId,
  groupRecipientId,
  insertMessageWithRows,
  recipientId,
  topicParticipantIds,
} from '../../store/messages.js';
import type { MessageRelations } from '../../store/message-relations.js';
import type { RealmRow } from '../../store/realms.js';
import { usersInRealm, type UserRow } from '../../store/users.js';
import { doSetUserTopicPolicy } from './user-topics.js';
import { messageViewFor } from './message-events.js';
import { enqueueWebhookJobs, webhookTriggers } from './outgoing-webhook-triggers.js';

/**
 * POST /messages: check (addressing, permissions, rendering, mentions) and
 * send (one transaction: the message, every recipient's row in one batch
 * statement, the message event). The number of statements does not depend
 * on the number of recipients.
 */

/** Zulip's Realm.WILDCARD_MENTION_THRESHOLD. */
const WILDCARD_MENTION_THRESHOLD = 15;

export interface SendInput {
  readonly type: 'stream' | 'private';
  /** Raw `to`: a channel name or id (possibly JSON), or DM recipients (JSON list or comma string). */
  readonly to: string | undefined;
  readonly topic: string | undefined;
  readonly content: string;
  readonly client: string;
  readonly readBySender: boolean;
  readonly localId?: string;
  readonly queueId?: string;
  /**
   * Runs inside the transaction that stores the message (scheduled delivery
   * marks its row delivered there, so the message and the mark commit together).
   */
  readonly inTransaction?: (tx: Tx, messageId: number) => Promise<void>;
  /**
   * A system bot's message (actions/internal-send.ts): addressed in this
   * organization, without the sender's permission checks (send, create
   * topic, direct-message policies, group and wildcard mention rights);
   * everything else (addressing, topic rules, rendering) as for anyone.
   */
  readonly internal?: { readonly realmId: number; readonly readBy?: readonly number[]; readonly actingUser?: UserRow };
}

export interface SendResult {
  readonly id: number;
  readonly automaticNewVisibilityPolicy?: number;
}

/** Zulip's Client.default_read_by_sender: messages from full UI clients are read for their sender. */
export function defaultReadBySender(clientName: string): boolean {
  const c = clientName.toLowerCase();
  return (
    ['zulipandroid', 'zulipios', 'zulipdesktop', 'zulipmobile', 'zulipelectron', 'zulipterminal', 'snipe', 'website', 'ios', 'android'].includes(c) ||
    c.includes('desktop app')
  );
}

/** Zulip's extract_stream_indicator: a name, an id, or either JSON-encoded (a one-element list too). */
export function channelIndicator(raw: string): string | number {
  // Most clients send a plain name: skip the (throwing) JSON attempt for those.
  if (!/^\s*[[\d"-]/.test(raw)) return raw;
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (Array.isArray(data)) {
    if (data.length !== 1) throw badRequest('Expected exactly one channel');
    data = data[0];
  }
  if (typeof data === 'string') return data;
  if (typeof data === 'number' && Number.isInteger(data)) return data;
  throw badRequest('Invalid data type for channel');
}

/** Zulip's extract_private_recipients: a JSON list of ids or emails, or a comma-separated string of emails. */
export function dmRecipients(raw: string): { emails: string[] } | { ids: number[] } {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = raw;
  }
  if (typeof data === 'string') data = data.split(',');
  if (!Array.isArray(data)) throw badRequest('Invalid data type for recipients');
  if (data.length === 0) return { ids: [] };
  if (typeof data[0] === 'string') {
    if (data.some((x) => typeof x !== 'string')) throw badRequest('Recipient lists may contain emails or user IDs, but not both.');
    return { emails: [...new Set((data as string[]).map((e) => e.trim()))].filter(Boolean) };
  }
  if (typeof data[0] !== 'number' || !Number.isInteger(data[0])) throw badRequest('Invalid data type for recipients');
  if (data.some((x) => typeof x !== 'number' || !Number.isInteger(x))) throw badRequest('Recipient lists may contain emails or user IDs, but not both.');
  return { ids: [...new Set(data as number[])] };
}

export interface Addressed {
  readonly channel: ChannelRow | null;
  readonly topic: string;
  readonly recipientId: number;
  readonly dmKey: string | null;
  /** Channel: active subscribers with their muting; DM: participants. */
  readonly recipients: readonly number[];
  readonly newTopic: boolean;
  readonly senderMutedChannel: boolean;
  readonly participants: readonly UserRow[];
  /** Recipients who muted the sender: the message arrives already read for them (Zulip's get_muting_users). */
  readonly muters: ReadonlySet<number>;
}

const missing = (msg: string): JsonableError => badRequest(msg);

async function addressChannel(app: AppCtx, sender: UserRow, realm: RealmRow, settings: RealmSettings, input: SendInput): Promise<Addressed> {
  let to: string | number;
  if (input.to === undefined) {
    if (sender.default_sending_stream_id === null) throw missing('Missing channel');
    to = sender.default_sending_stream_id;
  } else to = channelIndicator(input.to);
  if (input.topic === undefined) throw missing('Missing topic');
  if (typeof to === 'string') checkChannelName(to.trim());
  let topic = '';
  let topicError: unknown;
  try {
    topic = incomingTopic(input.topic, settings.realm_empty_topic_display_name);
    checkTopic(topic);
    topic = truncateTopic(topic);
  } catch (err) {
    topicError = err;
  }
  const senderId = sender.id;
  // PostgreSQL: the channel, the topic's first message and the subscribers in one statement
  // (one round trip instead of two in sequence, two statements fewer); SQLite: three direct reads.
  const together = app.store.dialect === 'postgres' ? await channelForSendPg(app, realm.id, to, topicKey(topic), senderId) : undefined;
  // SQLite: the channel, the sender's groups and the subscribers are kept while
  // nothing has been committed since they were read (domain/send-read-cache.ts);
  // the topic's first message is read each time (sends create topics).
  // (PostgreSQL has no generation: every read runs there, and `together` answered them.)
  const reads = sendReads(app, !input.internal);
  let ch: ChannelRow | undefined;
  if (typeof to === 'number') {
    const id = to;
    ch = together ? together.channel : await reads.get(`id:${realm.id}:${id}`, () => channelById(app.db, realm.id, id).then(frozen));
    if (!ch) throw new JsonableError(`Channel with ID '${to}' does not exist`, { code: 'STREAM_DOES_NOT_EXIST', data: { stream_id: to } });
  } else {
    const name = to.trim();
    ch = together ? together.channel : await reads.get(`name:${realm.id}:${name.toLowerCase()}`, () => channelByName(app.db, realm.id, name).then(frozen));
    if (!ch) throw new JsonableError(`Channel '${name}' does not exist`, { code: 'STREAM_DOES_NOT_EXIST', data: { stream: name } });
  }
  // The permission check, the topic's first message and the subscribers are
  // independent reads: issue them together (on PostgreSQL the last two came with
  // the channel; on SQLite they run one after another), then judge them in
  // Zulip's order, so errors are unchanged.
  const senderGroups = together || input.internal ? undefined : await reads.get(`groups:${senderId}`, () => groupIdsContainingUser(app.db, senderId));
  const holdsSendGroup = together ? together.senderHoldsSendGroup : senderGroups?.has(ch.can_send_message_group_id);
  const sendCheck = input.internal ? Promise.resolve() : checkChannelSend(app, sender, ch, holdsSendGroup);
  const first = together
    ? Promise.resolve(together.firstId)
    : topicError === undefined
      ? firstTopicMessageId(app.db, ch.recipient_id!, topicKey(topic))
      : Promise.resolve(undefined);
  const channelId = ch.id;
  // Straight on the connection on SQLite (store/prepared.ts directRead): every channel send reads it.
  const subsQuery = together
    ? Promise.resolve(together.subs)
    : reads.get(`subs:${channelId}:${senderId}`, () =>
        directRead<{ user_id: number; is_muted: number; muter: number | null }>(app.db, SUBSCRIBERS_SQLITE, [senderId, channelId], () =>
          app.db
            .selectFrom('subscriptions')
            .innerJoin('users', 'users.id', 'subscriptions.user_id')
            // Joined here rather than read apart: the send path's statement count stays constant.
            .leftJoin('muted_users', (j) => j.onRef('muted_users.user_id', '=', 'subscriptions.user_id').on('muted_users.muted_user_id', '=', senderId))
            .select(['subscriptions.user_id', 'subscriptions.is_muted', 'muted_users.user_id as muter'])
            .where('subscriptions.channel_id', '=', channelId)
            .where('subscriptions.active', '=', 1)
            .where('users.is_active', '=', 1)
            .execute(),
        ).then((rows) => Object.freeze(rows.map(frozen))),
      );
  // Whatever is thrown first below, the other reads must not reject unobserved.
  first.catch(() => {});
  subsQuery.catch(() => {});
  await sendCheck;
  if (topicError !== undefined) throw topicError;

  const newTopic = (await first) === undefined;
  if (newTopic && !input.internal) await checkCanCreateTopic(app.db, sender, ch, senderGroups);
  const policy = effectiveTopicsPolicy(ch.topics_policy, settings.topics_policy);
  const display = settings.realm_empty_topic_display_name;
  if (policy === 'disable_empty_topic' && topic === '') throw badRequest(`Sending messages to the ${display} topic is not allowed in this channel.`);
  if (policy === 'empty_topic_only' && topic !== '') throw badRequest(`Only the ${display} topic is allowed in this channel.`);

  const subs = await subsQuery;
  return {
    channel: ch,
    topic,
    recipientId: ch.recipient_id!,
    dmKey: null,
    recipients: subs.map((s) => s.user_id),
    newTopic,
    senderMutedChannel: subs.some((s) => s.user_id === sender.id && s.is_muted === 1),
    participants: [],
    muters: new Set(subs.filter((s) => s.muter !== null).map((s) => s.user_id)),
  };
}

/** A row shared between sends (send-read-cache.ts) is frozen, so a change by mistake throws instead of leaking into other sends. */
const frozen = <T extends object | undefined>(row: T): T => (row === undefined ? row : Object.freeze(row));

interface SendChannelRead {
  readonly channel: ChannelRow | undefined;
  readonly firstId: number | undefined;
  readonly subs: { user_id: number; is_muted: number; muter: number | null }[];
  /** Whether the sender is in the channel's can_send_message_group (recursively, as groupIdsContainingUser). */
  readonly senderHoldsSendGroup: boolean | undefined;
}

/**
 * PostgreSQL: a channel (by id or name, as channelById/channelByName), the id
 * of its topic's first message (as firstTopicMessageId), its active
 * subscribers with whether each muted the sender (as SUBSCRIBERS_SQLITE) and
 * whether the sender holds its can_send_message_group (the recursive walk of
 * groupIdsContainingUser), in one statement: each statement there is a round trip, a parse and a plan.
 * No row: no such channel. `to` a number beyond 32 bits matches nothing.
 */
async function channelForSendPg(app: AppCtx, realmId: number, to: string | number, topicKeyValue: string, senderId: number): Promise<SendChannelRead> {
  if (typeof to === 'number' && !isStorableId(to)) return { channel: undefined, firstId: undefined, subs: [], senderHoldsSendGroup: undefined };
  const byId = typeof to === 'number';
  const where = byId ? sql`c.id = ${to}` : sql`c.name_lower = ${to.trim().toLowerCase()}`;
  const statement = sql<ChannelRow & { __first_id: number | null; __subs: [number, number, number | null][]; __may_send: boolean }>`SELECT c.*,
      (SELECT m.id FROM messages m WHERE m.recipient_id = c.recipient_id AND m.topic_key = ${topicKeyValue} ORDER BY m.id LIMIT 1) AS __first_id,
      (SELECT coalesce(json_agg(json_build_array(s.user_id, s.is_muted, mu.user_id)), '[]'::json) FROM subscriptions s
        JOIN users u ON u.id = s.user_id
        LEFT JOIN muted_users mu ON mu.user_id = s.user_id AND mu.muted_user_id = ${senderId}
        WHERE s.channel_id = c.id AND s.active = 1 AND u.is_active = 1) AS __subs,
      (WITH RECURSIVE up(id) AS (
          SELECT group_id FROM user_group_members WHERE user_id = ${senderId}
          UNION
          SELECT s.supergroup_id FROM user_group_subgroups s JOIN up ON s.subgroup_id = up.id
        ) SELECT EXISTS (SELECT 1 FROM up WHERE up.id = c.can_send_message_group_id)) AS __may_send
    FROM channels c WHERE c.realm_id = ${realmId} AND ${where}`;
  // A named statement (store/db.ts): parsed and planned once per connection; two texts (by id, by name).
  if (!namedChannelReads[byId ? 1 : 0]) {
    preparedOnPostgres(statement.compile(app.db).sql);
    namedChannelReads[byId ? 1 : 0] = true;
  }
  const r = await statement.execute(app.db);
  const row = r.rows[0];
  if (!row) return { channel: undefined, firstId: undefined, subs: [], senderHoldsSendGroup: undefined };
  const { __first_id, __subs, __may_send, ...channel } = row;
  return {
    channel: channel as ChannelRow,
    firstId: __first_id ?? undefined,
    subs: __subs.map(([user_id, is_muted, muter]) => ({ user_id, is_muted, muter })),
    senderHoldsSendGroup: __may_send === true,
  };
}

const namedChannelReads = [false, false];

/** The Kysely query of addressChannel in SQLite text: active subscribers of a channel (?2), each with whether it muted the sender (?1). */
const SUBSCRIBERS_SQLITE = `SELECT s.user_id, s.is_muted, mu.user_id AS muter FROM subscriptions s
  JOIN users u ON u.id = s.user_id
  LEFT JOIN muted_users mu ON mu.user_id = s.user_id AND mu.muted_user_id = ?
  WHERE s.channel_id = ? AND s.active = 1 AND u.is_active = 1`;

/** A realm permission stored in the settings JSON (absent: the default group, everyone for DM settings). */
const storedGroup = (settings: RealmSettings, name: string): number | undefined => (typeof settings[name] === 'number' ? (settings[name] as number) : undefined);

/** Zulip's check_can_send_direct_message: direct_message_permission_group, then direct_message_initiator_group. */
async function checkDirectMessagePermissions(app: AppCtx, settings: RealmSettings, sender: UserRow, recipients: readonly UserRow[], dmKey: string): Promise<void> {
  if (sender.is_bot) return;
  if (recipients.every((u) => u.is_bot || u.id === sender.id)) return;
  const permission = storedGroup(settings, 'direct_message_permission_group');
  if (permission !== undefined) {
    const members = new Set(await recursiveMemberIds(app.db, permission));
    if (![sender, ...recipients].some((u) => members.has(u.id))) {
      const g = await app.db.selectFrom('user_groups').select('name').where('id', '=', permission).executeTakeFirst();
      if (g?.name === 'role:nobody') throw badRequest('Direct messages are disabled in this organization.');
      throw badRequest('This conversation does not include any users who can authorize it.');
    }
  }
  const initiator = storedGroup(settings, 'direct_message_initiator_group');
  if (initiator === undefined || (await isUserInGroup(app.db, sender.id, initiator))) return;
  if (!(await conversationExists(app.db, dmKey))) throw badRequest('You are not allowed to start direct message conversations.');
}

async function addressDirect(app: AppCtx, sender: UserRow, realm: RealmRow, settings: RealmSettings, input: SendInput): Promise<Addressed> {
  const parsed = input.to === undefined ? { ids: [] as number[] } : dmRecipients(input.to);
  const domain = fakeEmailDomain(app.config);
  let users: UserRow[];
  if ('emails' in parsed) {
    if (parsed.emails.length === 0) throw missing('Message must have recipients');
    const found = await usersByEmails(app, { realmId: realm.id, role: sender.role }, parsed.emails);
    const bad = parsed.emails.find((e) => !found.has(e));
    if (bad !== undefined) throw badRequest(`Invalid email '${bad}'`);
    users = [...new Map(parsed.emails.map((e) => [found.get(e)!.id, found.get(e)!])).values()];
  } else {
    if (parsed.ids.length === 0) throw missing('Message must have recipients');
    const rows = await usersInRealm(app.db, realm.id, parsed.ids.filter(isStorableId));
    const byId = new Map(rows.map((u) => [u.id, u]));
    const bad = parsed.ids.find((id) => !byId.has(id));
    if (bad !== undefined) throw badRequest(`Invalid user ID ${bad}`);
    users = parsed.ids.map((id) => byId.get(id)!);
  }
  const gone = users.find((u) => !u.is_active);
  if (gone) throw badRequest(`'${apiEmail(gone, domain)}' is no longer using Zulip.`);
  await checkSenderCanAccessRecipients(app, realm, sender, users);
  const ids = [...new Set([...users.map((u) => u.id), sender.id])].sort((a, b) => a - b);
  const dmKey = ids.join(',');
  if (!input.internal) await checkDirectMessagePermissions(app, settings, sender, users, dmKey);
  let recipient: number;
  if (ids.length <= 2) {
    const other = ids.find((id) => id !== sender.id) ?? sender.id;
    recipient = await recipientId(app.db, realm.id, RECIPIENT_PERSONAL, other);
  } else recipient = await groupRecipientId(app.db, realm.id, dmKey, ids.length);
  const participants = users.some((u) => u.id === sender.id) ? users : [...users, sender];
  const muters = new Set(await mutersOf(app.db, sender.id));
  return { channel: null, topic: '', recipientId: recipient, dmKey, recipients: ids, newTopic: false, senderMutedChannel: false, participants, muters };
}

/** Group mentions: the sender may mention each group (can_mention_group); returns the groups' members. */
async function groupMentionMembers(app: AppCtx, sender: UserRow, groupIds: ReadonlySet<number>, internal: boolean): Promise<Set<number>> {
  const out = new Set<number>();
  if (groupIds.size === 0) return out;
  const groups = await app.db.selectFrom('user_groups').select(['id', 'name', 'can_mention_group']).where('id', 'in', [...groupIds]).execute();
  for (const g of groups) {
    const allowed = internal || (g.can_mention_group !== null && (await isUserInGroup(app.db, sender.id, g.can_mention_group)));
    if (!allowed) throw badRequest(`You are not allowed to mention user group '${g.name}'.`);
    for (const id of await recursiveMemberIds(app.db, g.id)) out.add(id);
  }
  return out;
}

/** Wildcard mentions in large channels or topics need can_mention_many_users_group. */
async function checkWildcards(app: AppCtx, sender: UserRow, a: Addressed, r: RenderResult): Promise<Set<number>> {
  let participants = new Set<number>();
  if (!a.channel) return participants;
  if (r.streamWildcardMentioned && a.recipients.length > WILDCARD_MENTION_THRESHOLD) {
    if (!(await userHasRealmPermission(app.db, sender.realm_id, sender.id, 'can_mention_many_users_group'))) {
      throw new JsonableError('You do not have permission to use channel wildcard mentions in this channel.', { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' });
    }
  }
  if (r.topicWildcardMentioned) {
    participants = await topicParticipantIds(app.db, a.recipientId, topicKey(a.topic));
    participants.add(sender.id);
    if (participants.size > WILDCARD_MENTION_THRESHOLD && !(await userHasRealmPermission(app.db, sender.realm_id, sender.id, 'can_mention_many_users_group'))) {
      throw new JsonableError('You do not have permission to use topic wildcard mentions in this topic.', { code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED' });
    }
  }
  return participants;
}

/**
 * The visibility policy a send gives the sender's topic (Zulip's
 * visibility_policy_for_send_message): follow a topic one starts (or sends
 * to, or participates in), unmute a topic of a muted channel; only ever more visible.
 */
async function automaticPolicy(app: AppCtx, sender: UserRow, a: Addressed): Promise<number | undefined> {
  if (!a.channel || sender.is_bot) return undefined;
  const s = userSettings(sender.settings);
  const follow = Number(s.automatically_follow_topics_policy);
  const unmute = Number(s.automatically_unmute_topics_in_muted_streams_policy);
  let wanted: number | undefined;
  if (follow === 1 || follow === 2 || (follow === 3 && a.newTopic)) wanted = VISIBILITY_FOLLOWED;
  else if (a.senderMutedChannel && (unmute === 1 || unmute === 2 || (unmute === 3 && a.newTopic))) wanted = VISIBILITY_UNMUTED;
  if (wanted === undefined) return undefined;
  const current = (await userTopicRow(app.db, sender.id, a.channel.id, a.topic))?.visibility_policy ?? VISIBILITY_INHERIT;
  if (current === VISIBILITY_FOLLOWED || current === wanted) return undefined;
  return wanted;
}

/** Checks and sends one message; returns its id. */
/**
 * Zulip's check_sender_can_access_recipients: a guest restricted by
 * can_access_all_users_group may write only to users it can access. One
 * statement for such a guest; nothing for anyone else.
 */
async function checkSenderCanAccessRecipients(app: AppCtx, realm: RealmRow, sender: UserRow, users: readonly UserRow[]): Promise<void> {
  const groupId = sender.role === ROLE_GUEST ? restrictingGroupId(realm.settings) : null;
  if (groupId === null) return;
  const access = (await accessSets(app.db, realm.id, groupId, [sender.id])).get(sender.id) ?? new Set([sender.id]);
  if (users.some((u) => !canAccessUser(access, u))) throw badRequest('You do not have permission to access some of the recipients.');
}

export async function checkAndSendMessage(app: AppCtx, sender: UserRow, input: SendInput): Promise<SendResult> {
  const announced = announceGroupCommit(app);
  try {
    return await checkAndSend(app, sender, input, announced);
  } finally {
    announced();
  }
}

/** A message that passed Zulip's check_message: addressed, rendered, permissions checked; not stored. */
export interface CheckedMessage {
  readonly content: string;
  readonly realm: RealmRow;
  readonly settings: RealmSettings;
  readonly addressed: Addressed;
  readonly rendered: RenderResult;
}

/** Zulip's check_message without the send: scheduling validates a message now and sends it later. */
export async function checkMessage(app: AppCtx, sender: UserRow, input: Pick<SendInput, 'type' | 'to' | 'topic' | 'content'>): Promise<CheckedMessage> {
  const normalized = normalizeMessageContent(input.content);
  if (!normalized.ok) throw badRequest(normalized.error);
  const content = normalized.content;
  const realm = await realmOf(app, sender.realm_id);
  const settings = realmSettings(realm.settings);
  const full = { ...input, client: '', readBySender: false };
  const addressed = input.type === 'stream' ? await addressChannel(app, sender, realm, settings, full) : await addressDirect(app, sender, realm, settings, full);
  const rendered = await renderMessageContent(app, app.db, realm.id, settings, sender, content);
  await groupMentionMembers(app, sender, rendered.mentionedGroupIds, false);
  await checkWildcards(app, sender, addressed, rendered);
  return { content, realm, settings, addressed, rendered };
}

async function checkAndSend(app: AppCtx, sender: UserRow, input: SendInput, announced: () => void): Promise<SendResult> {
  const normalized = normalizeMessageContent(input.content);
  if (!normalized.ok) throw badRequest(normalized.error);
  const content = normalized.content;
  const realm = await realmOf(app, input.internal?.realmId ?? sender.realm_id);
  const settings = realmSettings(realm.settings);
  const a = input.type === 'stream' ? await addressChannel(app, sender, realm, settings, input) : await addressDirect(app, sender, realm, settings, input);

  // A system bot's message renders as its acting user would see it (Zulip's acting_user: channel links).
  const rendered = await renderMessageContent(app, app.db, realm.id, settings, input.internal?.actingUser ?? sender, content);
  // Read before the transaction (a cache miss must not wait for the connection the transaction holds).
  const linkifiers = await linkifiersForRealm(app.db, realm.id);
  const groupMembers = await groupMentionMembers(app, sender, rendered.mentionedGroupIds, input.internal !== undefined);
  const topicParticipants = input.internal ? new Set<number>() : await checkWildcards(app, sender, a, rendered);
  const readBy = new Set(input.internal?.readBy ?? []);
  const autoPolicy = await automaticPolicy(app, sender, a);
  // Outgoing-webhook bots this message triggers; a 1:1 DM to one needs the sender's recipient id (read now, outside the transaction).
  const webhooks = await webhookTriggers(app.db, sender, a, rendered, groupMembers);
  const senderRecipient = webhooks.length && !a.channel && a.recipients.length === 2 ? await recipientId(app.db, realm.id, RECIPIENT_PERSONAL, sender.id) : undefined;

  const base = (a.channel ? 0 : FLAG_PRIVATE) | (rendered.streamWildcardMentioned ? FLAG_STREAM_WILDCARD : 0);
  const flagsFor = (userId: number): number => {
    let f = base;
    if ((userId === sender.id && input.readBySender) || readBy.has(userId)) f |= FLAG_READ;
    if (a.muters.has(userId)) f |= FLAG_READ;
    if (rendered.mentionedUserIds.has(userId) || groupMembers.has(userId)) f |= FLAG_MENTIONED;
    if (rendered.topicWildcardMentioned && topicParticipants.has(userId)) f |= FLAG_TOPIC_WILDCARD;
    return f;
  };

  const now = nowSeconds();
  const row = {
    realm_id: realm.id,
    sender_id: sender.id,
    recipient_id: a.recipientId,
    stream_id: a.channel?.id ?? null,
    dm_key: a.dmKey,
    topic: a.topic,
    topic_key: topicKey(a.topic),
    content,
    rendered_content: rendered.html,
    date_sent: now,
    sending_client: input.client,
    is_me_message: rendered.isMeMessage ? 1 : 0,
    ...contentTraits(rendered.html, rendered.links),
    last_edit_time: null,
    edit_history: null,
  };

  // A direct message with a guest of a restricted realm may give it access to the others (Zulip:
  // get_recipients_for_user_creation_events): their realm_user add events go out before the message.
  const accessMayChange = !a.channel && restrictingGroupId(realm.settings) !== null && a.participants.some((u) => u.role === ROLE_GUEST);
  // Whether the transaction below writes with one statement: the message and its recipients'
  // rows, one statement on PostgreSQL (store/messages.ts insertMessageWithRows), and nothing
  // else. Each other write below is behind one of these conditions; a channel whose first
  // message and recent activity are already set gets no update (afterChannelSend). Such a send
  // runs outside a transaction block on PostgreSQL (group-commit.ts).
  const writesOneStatement =
    a.recipients.length > 0 &&
    !accessMayChange &&
    (!a.channel || (a.channel.first_message_id !== null && !!a.channel.is_recently_active)) &&
    !row.has_attachment &&
    webhooks.length === 0 &&
    autoPolicy === undefined &&
    !input.inTransaction;
  const id = await groupCommit(app, async (tx) => {
    const access = accessMayChange ? await accessBefore(tx, realm.id, app) : undefined;
    const ums = a.recipients.map((user_id) => ({ user_id, flags: flagsFor(user_id) }));
    const id = await insertMessageWithRows(tx.db, row, ums);
    if (access) await emitAccessChanges(app, tx, realm.id, access);
    if (a.channel) await afterChannelSend(tx, a.channel, id);
    // Uploads the message links become its attachments (only when it links one: no statement otherwise).
    if (row.has_attachment) {
      const pathIds = uploadPathIds(rendered.links, realmUrl(app.config));
      await claimAttachments(tx, { id: sender.id, realmId: sender.realm_id, role: sender.role }, id, pathIds, a.channel !== null && !a.channel.invite_only);
    }
    const people = new Map<number, UserRow>([[sender.id, sender], ...a.participants.map((u) => [u.id, u] as const)]);
    emitMessage(app, tx, realm, settings, { ...row, id }, people, ums, a, input, linkifiers);
    if (webhooks.length) {
      const rel: MessageRelations = { users: people, channels: new Map(a.channel ? [[a.channel.id, a.channel.name]] : []), reactions: new Map() };
      await enqueueWebhookJobs(app, tx, realm, settings, { ...row, id }, rel, linkifiers, webhooks, senderRecipient);
    }
    if (autoPolicy !== undefined) await doSetUserTopicPolicy(tx, sender.id, a.channel!, a.topic, autoPolicy);
    if (input.inTransaction) await input.inTransaction(tx, id);
    return id;
  }, announced, { oneStatement: writesOneStatement });
  // The scheduler picks the webhook jobs up now rather than at its next scan.
  if (webhooks.length) app.jobs?.wake();
  // A thumbnail that finished between rendering and commit: swap its placeholder now.
  if (row.has_attachment && rendered.html.includes('image-loading-placeholder')) app.files.refreshPlaceholders(id);
  // Link previews that fetch the page: server switch and realm setting both on; after commit, in the background.
  if (app.config.linkPreviews && settings.inline_url_embed_preview) {
    const link = embeddableLink(rendered.links);
    if (link) app.files.scheduleEmbed(id, link);
  }
  return autoPolicy === undefined ? { id } : { id, automaticNewVisibilityPolicy: autoPolicy };
}

/** A channel's first message id and recent activity follow its messages. */
async function afterChannelSend(tx: Tx, ch: ChannelRow, messageId: number): Promise<void> {
  // Conditional updates: another send in the same transaction may have set them already.
  if (ch.first_message_id === null) {
    const r = await tx.db.updateTable('channels').set({ first_message_id: messageId }).where('id', '=', ch.id).where('first_message_id', 'is', null).executeTakeFirst();
    // Zulip's do_send_messages: a channel's first message is announced to everyone who sees the channel.
    if (Number(r.numUpdatedRows) > 0) {
      tx.emit(ch.realm_id, { type: 'stream', op: 'update', property: 'first_message_id', value: messageId, stream_id: ch.id, name: ch.name }, await metadataUserIdsOf(tx.db, ch));
    }
  }
  if (!ch.is_recently_active) {
    const r = await tx.db.updateTable('channels').set({ is_recently_active: 1 }).where('id', '=', ch.id).where('is_recently_active', '=', 0).executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) {
      tx.emit(ch.realm_id, { type: 'stream', op: 'update', property: 'is_recently_active', value: true, stream_id: ch.id, name: ch.name }, await metadataUserIdsOf(tx.db, ch));
    }
  }
}

/**
 * One message event for every recipient, in its richest form (rendered
 * content, full avatar URL, the raw topic) with delivery hints: each
 * recipient's flags, the raw Markdown and whether the avatar is a gravatar,
 * so the per-queue shaper (actions/message-events.ts) can honor
 * apply_markdown, client_gravatar, empty_topic_name and local_id.
 */
function emitMessage(
  app: AppCtx,
  tx: Tx,
  realm: RealmRow,
  settings: RealmSettings,
  m: Parameters<typeof presentMessage>[0],
  people: ReadonlyMap<number, UserRow>,
  ums: readonly { user_id: number; flags: number }[],
  a: Addressed,
  input: SendInput,
  linkifiers: readonly Linkifier[],
): void {
  const rel: MessageRelations = {
    users: people,
    channels: new Map(a.channel ? [[a.channel.id, a.channel.name]] : []),
    reactions: new Map(),
  };
  const view = messageViewFor(app, realm, settings, { applyMarkdown: true, clientGravatar: false, allowEmptyTopicName: true }, linkifiers);
  const message = presentMessage(m, rel, view);
  const flags: Record<string, string[]> = {};
  for (const um of ums) if (um.flags) flags[um.user_id] = flagList(um.flags);
  const sender = people.get(m.sender_id)!;
  tx.emit(
    realm.id,
    {
      type: 'message',
      message,
      flags: [],
      __flags: flags,
      __raw_content: m.content,
      __avatar_gravatar: messageAvatarUrl(sender, true) === null,
      __sender_id: sender.id,
      __empty_topic_name: settings.realm_empty_topic_display_name,
      ...(input.localId !== undefined ? { __local_id: input.localId } : {}),
      ...(input.queueId !== undefined ? { __sender_queue_id: input.queueId } : {}),
      ...(a.channel && !a.channel.invite_only ? { __public_stream_message: true } : {}),
    },
    ums.map((u) => u.user_id),
  );
}

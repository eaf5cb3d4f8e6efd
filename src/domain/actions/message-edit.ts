import { sendMoveNotices, type MoveOutcome } from './message-move-notices.js';
import { createHash } from 'node:crypto';
import type { AppCtx, Caller, Tx, TxDb } from '../context.js';
import { transact } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { accessChannelById, checkCanCreateTopic, checkChannelSend, loadViewer } from '../access/channels.js';
import { accessMessage, MessageViewer } from '../access/messages.js';
import { linkifiersForRealm } from '../access/linkifiers.js';
import { contentTraits, renderMessageContent } from '../message-render.js';
import { realmUrl } from '../../config.js';
import { updateMessageAttachments, uploadPathIds } from './attachments.js';
import type { AttachmentObject } from '../../presenters/attachment.js';
import { topicLinks, normalizeMessageContent } from '../rules/markdown/index.js';
import { FLAG_MENTIONED, FLAG_READ, FLAG_STREAM_WILDCARD, FLAG_TOPIC_WILDCARD, flagList } from '../rules/message-flags.js';
import { effectiveTopicsPolicy, VISIBILITY_INHERIT } from '../rules/channels.js';
import { doSetUserTopicPolicy } from './user-topics.js';
import { userTopicRow } from '../../store/channel-extras.js';
import { checkTopic, incomingTopic, RESOLVED_TOPIC_PREFIX, stripResolvedPrefix, topicKey, truncateTopic } from '../rules/topics.js';
import { realmSettings, type RealmSettings } from '../rules/realm-settings.js';
import { isUserInGroup, recursiveMemberIds } from '../rules/group-settings.js';
import { userHasRealmPermission, type RealmGroupSetting } from '../rules/realm-group-settings.js';
import { ROLE_GUEST, ROLE_MODERATOR } from '../rules/users.js';
import { parseEditHistory, type EditHistoryEntry } from '../../presenters/message.js';
import type { ChannelRow } from '../../store/channels.js';
import { nowSeconds } from '../../store/db.js';
import {
  deleteUserMessages,
  firstMessageIdOf,
  firstTopicMessageId,
  insertUserMessagesIgnoringExisting,
  setFlagsExactly,
  topicMessages,
  topicParticipantIds,
  updateMessage,
  userMessageRows,
  type MessageRow,
} from '../../store/messages.js';
import { realmById } from '../../store/realms.js';
import type { UserRow } from '../../store/users.js';

/**
 * PATCH /messages/{id} (Zulip's check_update_message / do_update_message):
 * content edits, topic edits (resolving included) and moves between
 * channels, with propagate_mode, permissions and time limits, the edit
 * history entries and one update_message event, all in one transaction.
 *
 * After the commit, Notification Bot's resolved-topic notice and "moved"
 * breadcrumbs (actions/message-move-notices.ts). Not done: per-user topic
 * visibility is not moved with a topic.
 */
export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

export interface EditInput {
  readonly content?: string;
  readonly topic?: string;
  readonly streamId?: number;
  readonly propagateMode: PropagateMode;
  readonly prevContentSha256?: string;
  /** Zulip's send_notification_to_old_thread (default false) / _new_thread (default true). */
  readonly notifyOldThread?: boolean;
  readonly notifyNewThread?: boolean;
}

/** Zulip allows 20 s beyond the configured limits (network latency, client countdowns). */
const EDIT_LIMIT_BUFFER = 20;
const WILDCARD_MENTION_THRESHOLD = 15;

const isModerator = (role: number): boolean => role <= ROLE_MODERATOR;

async function hasPermission(db: TxDb, v: MessageViewer, setting: RealmGroupSetting, channelGroupId: number | null): Promise<boolean> {
  if (channelGroupId !== null && (await v.groupIds()).has(channelGroupId)) return true;
  return userHasRealmPermission(db, v.caller.realmId, v.caller.id, setting);
}

function checkContentEditAllowed(settings: RealmSettings, caller: Caller, m: MessageRow, now: number): void {
  if (!settings.allow_message_editing) throw badRequest('Your organization has turned off message editing');
  if (m.sender_id !== caller.id) throw badRequest("You don't have permission to edit this message");
  const limit = settings.message_content_edit_limit_seconds;
  if (limit !== null && now - m.date_sent > limit + EDIT_LIMIT_BUFFER) throw badRequest('The time limit for editing this message has passed');
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

interface Plan {
  content?: string;
  topic?: string;
  target: ChannelRow | null;
  resolved: boolean;
  unresolved: boolean;
}

/** Validates the request shape (Zulip's validate_message_edit_payload and build_message_edit_request). */
function planEdit(m: MessageRow, settings: RealmSettings, input: EditInput): Omit<Plan, 'target'> & { streamId?: number } {
  let topic = input.topic === undefined ? undefined : incomingTopic(input.topic, settings.realm_empty_topic_display_name);
  if (topic !== undefined && topic === m.topic) topic = undefined;
  let streamId = input.streamId;
  if (streamId !== undefined && streamId === m.stream_id) streamId = undefined;
  if (topic === undefined && input.content === undefined && streamId === undefined) throw badRequest('Nothing to change');
  if (m.stream_id === null) {
    if (streamId !== undefined) throw badRequest('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw badRequest('Direct messages cannot have topics.');
  }
  if (input.propagateMode !== 'change_one' && topic === undefined && streamId === undefined) throw badRequest('Invalid propagate_mode without topic edit');
  if (topic !== undefined && (topic === RESOLVED_TOPIC_PREFIX.trim() || topic === RESOLVED_TOPIC_PREFIX + settings.realm_empty_topic_display_name)) {
    throw badRequest('General chat cannot be marked as resolved');
  }
  if (topic !== undefined) checkTopic(topic);
  if (streamId !== undefined && input.content !== undefined) throw badRequest('Cannot change message content while changing channel');
  if (input.prevContentSha256 !== undefined && input.prevContentSha256 !== sha256(m.content)) {
    throw new JsonableError("'prev_content_sha256' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH' });
  }
  let content: string | undefined;
  if (input.content !== undefined) {
    const n = normalizeMessageContent(input.content.trimEnd() === '' ? '(deleted)' : input.content);
    if (!n.ok) throw badRequest(n.error);
    content = n.content;
  }
  let resolved = false;
  let unresolved = false;
  if (topic !== undefined) {
    const raw = topic;
    topic = truncateTopic(topic);
    resolved = topic.startsWith(RESOLVED_TOPIC_PREFIX) && !m.topic.startsWith(RESOLVED_TOPIC_PREFIX) && raw.slice(RESOLVED_TOPIC_PREFIX.length) === m.topic;
    unresolved = m.topic.startsWith(RESOLVED_TOPIC_PREFIX) && !topic.startsWith(RESOLVED_TOPIC_PREFIX) && stripResolvedPrefix(m.topic) === topic;
  }
  return { content, topic, resolved, unresolved, streamId };
}

/** change_all by a non-moderator: every message of the topic must be within the move time limit. */
async function checkChangeAllLimit(db: TxDb, m: MessageRow, settings: RealmSettings, topicChanged: boolean, channelChanged: boolean, now: number): Promise<void> {
  const limits: number[] = [];
  if (topicChanged && settings.move_messages_within_stream_limit_seconds !== null) limits.push(settings.move_messages_within_stream_limit_seconds + EDIT_LIMIT_BUFFER);
  if (channelChanged && settings.move_messages_between_streams_limit_seconds !== null) limits.push(settings.move_messages_between_streams_limit_seconds + EDIT_LIMIT_BUFFER);
  if (limits.length === 0) return;
  const deadline = Math.min(...limits);
  const all = await topicMessages(db, m.recipient_id, m.topic_key);
  const allowed = all.filter((r) => now - r.date_sent <= deadline);
  if (allowed.length === all.length) return;
  throw new JsonableError(`You only have permission to move the ${allowed.length}/${all.length} most recent messages in this topic.`, {
    code: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    data: { first_message_id_allowed_to_move: allowed[0]?.id ?? null, total_messages_in_topic: all.length, total_messages_allowed_to_move: allowed.length },
  });
}

/** Mention flags a content edit gives each user with a row (Zulip's update_user_message_flags). */
async function remention(app: AppCtx, tx: Tx, user: UserRow, m: MessageRow, settings: RealmSettings, content: string, ch: ChannelRow | null) {
  const rendered = await renderMessageContent(app, tx.db, m.realm_id, settings, user, content);
  const groupMembers = new Set<number>();
  if (rendered.mentionedGroupIds.size) {
    const groups = await tx.db.selectFrom('user_groups').select(['id', 'name', 'can_mention_group']).where('id', 'in', [...rendered.mentionedGroupIds]).execute();
    for (const g of groups) {
      if (g.can_mention_group === null || !(await isUserInGroup(tx.db, user.id, g.can_mention_group))) {
        throw badRequest(`You are not allowed to mention user group '${g.name}'.`);
      }
      for (const id of await recursiveMemberIds(tx.db, g.id)) groupMembers.add(id);
    }
  }
  let participants = new Set<number>();
  if (ch) {
    if (rendered.streamWildcardMentioned) {
      const subs = await tx.db.selectFrom('subscriptions').select('user_id').where('channel_id', '=', ch.id).where('active', '=', 1).execute();
      if (subs.length > WILDCARD_MENTION_THRESHOLD && !(await userHasRealmPermission(tx.db, m.realm_id, m.sender_id, 'can_mention_many_users_group'))) {
        throw new JsonableError('You do not have permission to use channel wildcard mentions in this channel.', { code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED' });
      }
    }
    if (rendered.topicWildcardMentioned) {
      participants = await topicParticipantIds(tx.db, m.recipient_id, m.topic_key);
      if (participants.size > WILDCARD_MENTION_THRESHOLD && !(await userHasRealmPermission(tx.db, m.realm_id, m.sender_id, 'can_mention_many_users_group'))) {
        throw new JsonableError('You do not have permission to use topic wildcard mentions in this topic.', { code: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED' });
      }
    }
  }
  const newFlags = (userId: number, flags: number): number => {
    let f = flags & ~(FLAG_MENTIONED | FLAG_STREAM_WILDCARD | FLAG_TOPIC_WILDCARD);
    if (rendered.mentionedUserIds.has(userId) || groupMembers.has(userId)) f |= FLAG_MENTIONED;
    if (rendered.streamWildcardMentioned) f |= FLAG_STREAM_WILDCARD;
    if (rendered.topicWildcardMentioned && participants.has(userId)) f |= FLAG_TOPIC_WILDCARD;
    return f;
  };
  return { rendered, newFlags };
}

/** Returns the number of messages changed. */
export async function checkUpdateMessage(
  app: AppCtx,
  caller: Caller,
  user: UserRow,
  messageId: number,
  input: EditInput,
  out?: { detachedUploads: AttachmentObject[] },
): Promise<number> {
  return transact(app, async (tx) => {
    const db = tx.db;
    const v = new MessageViewer(db, caller);
    const { message: m, channel: origChannel } = await accessMessage(db, caller, messageId, { forModify: true, viewer: v });
    const realm = (await realmById(db, caller.realmId))!;
    const settings = realmSettings(realm.settings);
    const now = nowSeconds();
    if (input.content !== undefined) checkContentEditAllowed(settings, caller, m, now);
    const plan = planEdit(m, settings, input);

    let target = origChannel;
    if (plan.streamId !== undefined) target = await accessChannelById(db, await loadViewer(db, user), plan.streamId);
    if (origChannel && target) {
      const policy = effectiveTopicsPolicy(target.topics_policy, settings.topics_policy);
      const targetTopic = plan.topic ?? m.topic;
      const display = settings.realm_empty_topic_display_name;
      if (targetTopic === '' && (plan.topic !== undefined || plan.streamId !== undefined) && policy === 'disable_empty_topic') {
        throw badRequest(`Sending messages to the ${display} topic is not allowed in this channel.`);
      }
      if (policy === 'empty_topic_only' && targetTopic !== '') throw badRequest(`Only the ${display} topic is allowed in this channel.`);
    }

    if (plan.topic !== undefined && origChannel) {
      if (plan.resolved || plan.unresolved) {
        if (!(await hasPermission(db, v, 'can_resolve_topics_group', origChannel.can_resolve_topics_group_id))) {
          throw badRequest("You don't have permission to resolve topics in this channel.");
        }
      } else {
        if (!(await hasPermission(db, v, 'can_move_messages_between_topics_group', origChannel.can_move_messages_within_channel_group_id))) {
          throw badRequest("You don't have permission to edit this message");
        }
        const limit = settings.move_messages_within_stream_limit_seconds;
        if (limit !== null && !isModerator(caller.role) && now - m.date_sent > limit + EDIT_LIMIT_BUFFER) {
          throw badRequest("The time limit for editing this message's topic has passed.");
        }
      }
    }

    const mention = plan.content !== undefined ? await remention(app, tx, user, m, settings, plan.content, origChannel) : undefined;

    const channelMoved = plan.streamId !== undefined && target !== null && origChannel !== null && target.id !== origChannel.id;
    const moved = plan.topic !== undefined || channelMoved;
    if (origChannel && target) {
      if (channelMoved) {
        if (!(await hasPermission(db, v, 'can_move_messages_between_channels_group', origChannel.can_move_messages_out_of_channel_group_id))) {
          throw badRequest("You don't have permission to move this message");
        }
        await checkChannelSend(tx, user, target);
        const limit = settings.move_messages_between_streams_limit_seconds;
        if (limit !== null && !isModerator(caller.role) && now - m.date_sent > limit + EDIT_LIMIT_BUFFER) {
          throw badRequest("The time limit for editing this message's channel has passed");
        }
      }
      if (input.propagateMode === 'change_all' && !isModerator(caller.role) && moved && !plan.resolved && !plan.unresolved) {
        await checkChangeAllLimit(db, m, settings, plan.topic !== undefined, channelMoved, now);
      }
      if (moved && !plan.resolved && !plan.unresolved) {
        const targetTopic = plan.topic ?? m.topic;
        if ((await firstTopicMessageId(db, target.recipient_id!, topicKey(targetTopic))) === undefined) await checkCanCreateTopic(db, user, target);
      }
    }

    const changed = await doUpdateMessage(app, tx, caller, m, origChannel, target, plan, input.propagateMode, mention, settings, now, v);
    // Uploads linked by the message follow its content (only looked at when old or new content links one).
    if (mention) {
      const pathIds = uploadPathIds(mention.rendered.links, realmUrl(app.config));
      if (m.has_attachment || pathIds.length) {
        const realmPublic = target !== null && !target.invite_only;
        const detached = await updateMessageAttachments(tx, caller, m.id, pathIds, realmPublic);
        out?.detachedUploads.push(...detached);
      }
    }
    if (origChannel && (plan.topic !== undefined || (target && target.id !== origChannel.id))) {
      const toChannel = target ?? origChannel;
      const newTopic = plan.topic ?? m.topic;
      const remaining = await topicMessages(db, origChannel.recipient_id!, topicKey(m.topic));
      const inTarget = await topicMessages(db, toChannel.recipient_id!, topicKey(newTopic));
      const moved = new Set(changed.ids);
      const outcome: MoveOutcome = {
        actor: user,
        origChannel,
        toChannel,
        origTopic: m.topic,
        newTopic,
        topicEdited: plan.topic !== undefined,
        contentEdited: plan.content !== undefined,
        resolved: plan.resolved,
        unresolved: plan.unresolved,
        changedIds: changed.ids,
        movedAllVisible: remaining.length === 0,
        preexistingInTarget: inTarget.some((r) => !moved.has(r.id)),
        notifyOldThread: input.notifyOldThread ?? false,
        notifyNewThread: input.notifyNewThread ?? true,
      };
      tx.afterPublish(() => sendMoveNotices(app, outcome));
    }
    return changed.ids.length;
  });
}

async function doUpdateMessage(
  app: AppCtx,
  tx: Tx,
  caller: Caller,
  m: MessageRow,
  origChannel: ChannelRow | null,
  target: ChannelRow | null,
  plan: Omit<Plan, 'target'>,
  propagateMode: PropagateMode,
  mention: Awaited<ReturnType<typeof remention>> | undefined,
  settings: RealmSettings,
  now: number,
  v: MessageViewer,
): Promise<{ ids: number[] }> {
  const db = tx.db;
  const event: Record<string, unknown> = { type: 'update_message', user_id: caller.id, edit_timestamp: now, message_id: m.id, rendering_only: false };
  const entry: EditHistoryEntry = { user_id: caller.id, timestamp: now };
  const patch: Record<string, unknown> = { last_edit_time: now };
  const ums = await userMessageRows(db, [m.id]);

  if (plan.content !== undefined && mention) {
    entry.prev_content = m.content;
    entry.prev_rendered_content = m.rendered_content;
    Object.assign(event, {
      orig_content: m.content,
      orig_rendered_content: m.rendered_content,
      content: plan.content,
      rendered_content: mention.rendered.html,
      is_me_message: mention.rendered.isMeMessage,
    });
    Object.assign(patch, {
      content: plan.content,
      rendered_content: mention.rendered.html,
      is_me_message: mention.rendered.isMeMessage ? 1 : 0,
      ...contentTraits(mention.rendered.html, mention.rendered.links),
    });
    const byValue = new Map<number, number[]>();
    for (const um of ums) {
      const f = mention.newFlags(um.user_id, um.flags);
      if (f !== um.flags) {
        byValue.set(f, [...(byValue.get(f) ?? []), um.user_id]);
        um.flags = f;
      }
    }
    await setFlagsExactly(db, m.id, byValue);
  }

  if (!origChannel) {
    patch.edit_history = JSON.stringify([entry, ...parseEditHistory(m.edit_history)]);
    await updateMessage(db, m.id, patch);
    event.message_ids = [m.id];
    emitUpdate(tx, m.realm_id, event, ums, [], settings);
    return { ids: [m.id] };
  }

  const toChannel = target ?? origChannel;
  const channelMoved = toChannel.id !== origChannel.id;
  const origTopic = m.topic;
  const newTopic = plan.topic ?? m.topic;
  event.stream_name = origChannel.name;
  event.stream_id = origChannel.id;
  const movedAny = channelMoved || plan.topic !== undefined;
  if (movedAny) event.propagate_mode = propagateMode;
  if (channelMoved) {
    entry.prev_stream = origChannel.id;
    entry.stream = toChannel.id;
    event.orig_subject = origTopic;
    event.new_stream_id = toChannel.id;
    patch.recipient_id = toChannel.recipient_id;
    patch.stream_id = toChannel.id;
  }
  if (plan.topic !== undefined) {
    entry.prev_topic = origTopic;
    entry.topic = newTopic;
    event.orig_subject = origTopic;
    event.subject = newTopic;
    event.topic_links = topicLinks(newTopic, await linkifiersForRealm(db, m.realm_id));
    patch.topic = newTopic;
    patch.topic_key = topicKey(newTopic);
  }
  patch.edit_history = JSON.stringify([entry, ...parseEditHistory(m.edit_history)]);
  await updateMessage(db, m.id, patch);

  // Other messages of the topic move too (change_later: later ones; change_all: every one the editor may see).
  let changedIds = [m.id];
  if (movedAny && propagateMode !== 'change_one') {
    const others = (await topicMessages(db, origChannel.recipient_id!, m.topic_key)).filter((r) => r.id !== m.id && (propagateMode === 'change_all' || r.id > m.id));
    let ids = others.map((r) => r.id);
    if (ids.length && !(await v.canReadHistory(origChannel))) {
      const mine = new Set((await db.selectFrom('user_messages').select('message_id').where('user_id', '=', caller.id).where('message_id', 'in', ids).execute()).map((r) => r.message_id));
      ids = ids.filter((id) => mine.has(id));
    }
    if (ids.length) {
      const rows = await db.selectFrom('messages').select(['id', 'edit_history']).where('id', 'in', ids).execute();
      const otherEntry: EditHistoryEntry = { user_id: caller.id, timestamp: now };
      if (channelMoved) Object.assign(otherEntry, { prev_stream: origChannel.id, stream: toChannel.id });
      if (plan.topic !== undefined) Object.assign(otherEntry, { prev_topic: origTopic, topic: newTopic });
      for (const r of rows) {
        const p: Record<string, unknown> = { last_edit_time: now, edit_history: JSON.stringify([otherEntry, ...parseEditHistory(r.edit_history)]) };
        if (channelMoved) Object.assign(p, { recipient_id: toChannel.recipient_id, stream_id: toChannel.id });
        if (plan.topic !== undefined) Object.assign(p, { topic: newTopic, topic_key: topicKey(newTopic) });
        await updateMessage(db, r.id, p);
      }
      changedIds = [...changedIds, ...ids].sort((a, b) => a - b);
    }
  }
  event.message_ids = changedIds;

  let losing = new Set<number>();
  let allRows = ums;
  if (channelMoved) {
    losing = await moveAccess(tx, origChannel, toChannel, changedIds);
    if (losing.size) {
      tx.emit(m.realm_id, { type: 'delete_message', message_ids: changedIds, message_type: 'stream', stream_id: origChannel.id, topic: origTopic, __empty_topic_name: settings.realm_empty_topic_display_name }, [...losing].sort((a, b) => a - b));
    }
    allRows = ums.filter((um) => !losing.has(um.user_id));
    for (const ch of [origChannel, toChannel]) {
      const first = await firstMessageIdOf(db, ch.recipient_id!);
      if (first !== ch.first_message_id) await db.updateTable('channels').set({ first_message_id: first }).where('id', '=', ch.id).execute();
    }
  }

  if (movedAny) await moveTopicPolicies(tx, origChannel, origTopic, m.topic_key, toChannel, newTopic, losing);

  // Subscribers who can read the channel's history hear about edits of messages they never received.
  let extra: number[] = [];
  if (origChannel.history_public_to_subscribers) {
    const withRows = new Set(allRows.map((um) => um.user_id));
    const subsOf = async (ch: ChannelRow): Promise<{ user_id: number; role: number }[]> =>
      db
        .selectFrom('subscriptions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .select(['s.user_id', 'u.role'])
        .where('s.channel_id', '=', ch.id)
        .where('s.active', '=', 1)
        .where('u.is_active', '=', 1)
        .execute();
    const targetSubs = await subsOf(toChannel);
    const ids = new Set(targetSubs.map((s) => s.user_id));
    if (channelMoved) {
      const oldSubs = await subsOf(origChannel);
      const oldIds = new Set(oldSubs.map((s) => s.user_id));
      for (const s of oldSubs) ids.add(s.user_id);
      // Guests new to the topic's channel do not get the event (Zulip: their clients would be confused).
      for (const s of targetSubs) if (s.role === ROLE_GUEST && !oldIds.has(s.user_id)) ids.delete(s.user_id);
    }
    extra = [...ids].filter((id) => !withRows.has(id) && !losing.has(id)).sort((a, b) => a - b);
  }
  emitUpdate(tx, m.realm_id, event, allRows, extra, settings);
  return { ids: changedIds };
}

/**
 * Topic visibility policies follow a topic that moved as a whole (Zulip's
 * do_update_message: when no message is left behind in the original topic,
 * each user's policy for it moves to the new topic; a policy the user
 * already had there is kept; users who lost access to the messages just
 * lose the policy). Every change sends the usual user_topic events.
 */
async function moveTopicPolicies(tx: Tx, from: ChannelRow, fromTopic: string, fromKey: string, to: ChannelRow, toTopic: string, losing: ReadonlySet<number>): Promise<void> {
  if (from.id === to.id && fromKey === topicKey(toTopic)) return;
  if ((await topicMessages(tx.db, from.recipient_id!, fromKey)).length > 0) return;
  const rows = await tx.db.selectFrom('user_topics').selectAll().where('channel_id', '=', from.id).where('topic_lower', '=', fromTopic.toLowerCase()).orderBy('user_id').execute();
  for (const r of rows) {
    await doSetUserTopicPolicy(tx, r.user_id, from, r.topic_name, VISIBILITY_INHERIT);
    if (losing.has(r.user_id)) continue;
    const target = await userTopicRow(tx.db, r.user_id, to.id, toTopic);
    if (!target) await doSetUserTopicPolicy(tx, r.user_id, to, toTopic, r.visibility_policy);
  }
}

/**
 * Moving messages to another channel: users who are not subscribers of the
 * new channel lose their rows (and, for a private channel or for guests,
 * access: they get delete_message); with protected history in the new
 * channel every current subscriber gets a (read) row.
 */
async function moveAccess(tx: Tx, from: ChannelRow, to: ChannelRow, messageIds: readonly number[]): Promise<Set<number>> {
  const db = tx.db;
  const oldAll = await db.selectFrom('subscriptions as s').innerJoin('users as u', 'u.id', 's.user_id').select(['s.user_id', 'u.role']).where('s.channel_id', '=', from.id).execute();
  const newCurrent = new Set((await db.selectFrom('subscriptions').select('user_id').where('channel_id', '=', to.id).where('active', '=', 1).execute()).map((r) => r.user_id));
  const losingRows = oldAll.filter((s) => !newCurrent.has(s.user_id));
  const losingAccess = !to.invite_only ? losingRows.filter((s) => s.role === ROLE_GUEST) : losingRows;
  if (!to.history_public_to_subscribers) {
    await insertUserMessagesIgnoringExisting(db, [...newCurrent].flatMap((user_id) => messageIds.map((message_id) => ({ user_id, message_id, flags: FLAG_READ }))));
  }
  await deleteUserMessages(db, losingRows.map((s) => s.user_id), messageIds);
  return new Set(losingAccess.map((s) => s.user_id));
}

function emitUpdate(
  tx: Tx,
  realmId: number,
  event: Record<string, unknown>,
  rows: readonly { user_id: number; flags: number }[],
  extra: readonly number[],
  settings: RealmSettings,
): void {
  const flags: Record<string, string[]> = {};
  for (const um of rows) flags[um.user_id] = flagList(um.flags);
  const recipients = [...rows.map((um) => um.user_id), ...extra];
  tx.emit(realmId, { ...event, __flags: flags, __empty_topic_name: settings.realm_empty_topic_display_name } as never, recipients);
}



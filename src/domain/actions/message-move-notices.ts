import { realmUrl } from '../../config.js';
import type { AppCtx } from '../context.js';
import type { ChannelRow } from '../../store/channels.js';
import type { UserRow } from '../../store/users.js';
import { internalSendChannelMessage, silentMention, topicLink } from './internal-send.js';

/**
 * What Notification Bot says when messages move or a topic is resolved
 * (Zulip's zerver/actions/message_edit.py: maybe_send_resolve_topic_notifications
 * and send_message_moved_breadcrumbs, with the strings of do_update_message).
 * Sent after the edit committed; each starts read for the user who moved.
 */

export interface MoveOutcome {
  readonly actor: UserRow;
  readonly origChannel: ChannelRow;
  readonly toChannel: ChannelRow;
  readonly origTopic: string;
  readonly newTopic: string;
  readonly topicEdited: boolean;
  readonly contentEdited: boolean;
  readonly resolved: boolean;
  readonly unresolved: boolean;
  readonly changedIds: readonly number[];
  /** No message the mover could see is left in the old topic. */
  readonly movedAllVisible: boolean;
  /** The new topic had visible messages before the move. */
  readonly preexistingInTarget: boolean;
  readonly notifyOldThread: boolean;
  readonly notifyNewThread: boolean;
}

/** Zulip's encode_hash_component: percent-encoding with "." for "%" (and "%2E" for "."). */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, '%2E')
    .replace(/%/g, '.');
}

/** Zulip's stream_message_url / near_stream_message_url. */
export function messageUrl(app: AppCtx, channel: { id: number; name: string }, topic: string, messageId: number): string {
  const slug = `${channel.id}-${encodeHashComponent(channel.name.replace(/ /g, '-'))}`;
  return `${realmUrl(app.config)}/#narrow/channel/${slug}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
}

export async function sendMoveNotices(app: AppCtx, o: MoveOutcome): Promise<void> {
  const realmId = o.actor.realm_id;
  const user = silentMention(o.actor);
  const readBy = [o.actor.id];
  const channelMoved = o.origChannel.id !== o.toChannel.id;
  const n = o.changedIds.length;
  if (n === 0) return;
  if (o.topicEdited && !o.contentEdited && !channelMoved && (o.resolved || o.unresolved)) {
    const content = o.resolved ? `${user} has marked this topic as resolved.` : `${user} has marked this topic as unresolved.`;
    await internalSendChannelMessage(app, { realmId, bot: 'notification', channelId: o.toChannel.id, topic: o.newTopic, content, readBy, actingUser: o.actor });
  }
  let newThread: string | null = null;
  if (o.notifyNewThread && (channelMoved || (o.topicEdited && !o.resolved && !o.unresolved))) {
    const from = topicLink(o.origChannel.name, o.origTopic);
    if (!o.preexistingInTarget && o.movedAllVisible) newThread = `This topic was moved here from ${from} by ${user}.`;
    else if (n === 1) newThread = `[A message](${messageUrl(app, o.toChannel, o.newTopic, o.changedIds[0]!)}) was moved here from ${from} by ${user}.`;
    else newThread = `${n} messages were moved here from ${from} by ${user}.`;
  }
  let oldThread: string | null = null;
  if (o.notifyOldThread) {
    const to = topicLink(o.toChannel.name, o.newTopic);
    if (o.movedAllVisible) oldThread = `This topic was moved to ${to} by ${user}.`;
    else if (n === 1) oldThread = `A message was moved from this topic to ${to} by ${user}.`;
    else oldThread = `${n} messages were moved from this topic to ${to} by ${user}.`;
  }
  if (newThread) await internalSendChannelMessage(app, { realmId, bot: 'notification', channelId: o.toChannel.id, topic: o.newTopic, content: newThread, readBy, actingUser: o.actor });
  if (oldThread) await internalSendChannelMessage(app, { realmId, bot: 'notification', channelId: o.origChannel.id, topic: o.origTopic, content: oldThread, readBy, actingUser: o.actor });
}

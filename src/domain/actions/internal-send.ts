import type { AppCtx } from '../context.js';
import type { UserRow } from '../../store/users.js';
import { checkAndSendMessage } from './message-send.js';
import { systemBot, type SystemBotName } from './system-bots.js';

/**
 * The one way a system bot speaks (architecture convention 12): a message
 * sent as Notification Bot or Welcome Bot into an organization, through the
 * ordinary send path with the sender's permission checks skipped and
 * nothing else (Zulip's internal_send_stream_message /
 * internal_send_private_message). Such messages follow a committed action;
 * a failure (say, the announcement channel was archived meanwhile) is
 * logged, never turned into an error of that action.
 */

export interface InternalChannelMessage {
  readonly realmId: number;
  readonly bot: SystemBotName;
  readonly channelId: number;
  readonly topic: string;
  readonly content: string;
  /** Users for whom the message starts read (Zulip's mark_as_read / mark_as_read_for_acting_user). */
  readonly readBy?: readonly number[];
  /** Whose access decides what the Markdown may link to (Zulip's acting_user). */
  readonly actingUser?: UserRow;
}

export interface InternalDirectMessage {
  readonly realmId: number;
  readonly bot: SystemBotName;
  readonly recipientId: number;
  readonly content: string;
  readonly readBy?: readonly number[];
  readonly actingUser?: UserRow;
}

export async function internalSendChannelMessage(app: AppCtx, m: InternalChannelMessage): Promise<number | undefined> {
  try {
    const sender = await systemBot(app, m.bot);
    const r = await checkAndSendMessage(app, sender, {
      type: 'stream',
      to: String(m.channelId),
      topic: m.topic,
      content: m.content,
      client: 'Internal',
      readBySender: false,
      internal: { realmId: m.realmId, readBy: m.readBy ?? [], ...(m.actingUser ? { actingUser: m.actingUser } : {}) },
    });
    return r.id;
  } catch (err) {
    app.log.warn({ err, channelId: m.channelId, topic: m.topic }, 'system bot message not sent');
    return undefined;
  }
}

export async function internalSendDirectMessage(app: AppCtx, m: InternalDirectMessage): Promise<number | undefined> {
  try {
    const sender = await systemBot(app, m.bot);
    const r = await checkAndSendMessage(app, sender, {
      type: 'private',
      to: JSON.stringify([m.recipientId]),
      topic: undefined,
      content: m.content,
      client: 'Internal',
      readBySender: false,
      internal: { realmId: m.realmId, readBy: m.readBy ?? [], ...(m.actingUser ? { actingUser: m.actingUser } : {}) },
    });
    return r.id;
  } catch (err) {
    app.log.warn({ err, recipientId: m.recipientId }, 'system bot message not sent');
    return undefined;
  }
}

// Zulip's Markdown helpers for system messages (zerver/lib/mention.py silent_mention_syntax_for_user,
// zerver/lib/streams.py get_stream_link_syntax / get_stream_topic_link_syntax).
export const silentMention = (u: { id: number; full_name: string }): string => `@_**${u.full_name}|${u.id}**`;
export const channelLink = (name: string): string => `#**${name}**`;
export const topicLink = (channel: string, topic: string): string => `#**${channel}>${topic}**`;

/**
 * Zulip's remove_single_newlines (zerver/lib/message.py): strip outer line
 * breaks; a single line break (not starting a list item) becomes a space.
 */
export function removeSingleNewlines(content: string): string {
  return content.replace(/^\n+|\n+$/g, '').replace(/(?<!\n)\n(?!\n|[-*] |[0-9]+\. ) */g, ' ');
}

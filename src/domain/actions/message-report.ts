import { realmUrl } from '../../config.js';
import type { AppCtx } from '../context.js';
import { badRequest } from '../errors.js';
import { accessMessage } from '../access/messages.js';
import { realmOf } from '../realm-row-cache.js';
import { realmSettings } from '../rules/realm-settings.js';
import { MAX_MESSAGE_LENGTH } from '../rules/limits.js';
import { channelSlug, encodeHashComponent } from '../rules/markdown/index.js';
import { channelById, type ChannelRow } from '../../store/channels.js';
import type { MessageRow } from '../../store/messages.js';
import type { UserRow } from '../../store/users.js';
import { internalSendChannelMessage, internalSendDirectMessage, silentMention } from './internal-send.js';
import { mentionList, messageLink, truncate } from './reminders.js';

/**
 * POST /messages/{message_id}/report (Zulip's views/message_report.py and
 * lib/message_report.py, feature level 382 and later): Notification Bot
 * posts the report into the realm's moderation request channel under
 * "{reported user's name} moderation" (the empty topic when that channel
 * takes only the empty topic), then sends the reporter a confirmation DM.
 * Anyone who can read a message may report it, their own included.
 */

/** Zulip's Realm.REPORT_MESSAGE_REASONS, in its order. */
export const REPORT_TYPES = ['spam', 'harassment', 'inappropriate', 'norms', 'other'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];
const REPORT_REASONS: Record<ReportType, string> = {
  spam: 'Spam',
  harassment: 'Harassment',
  inappropriate: 'Inappropriate content',
  norms: 'Violates community norms',
  other: 'Other reason',
};
/** Zulip's Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** Zulip's MAX_REPORT_MESSAGE_SNIPPET_LENGTH: room left for the description and the frame. */
const MAX_REPORT_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;

/** Zulip's get_unused_fence (lib/markdown/fenced_code.py): longer than any fence opening a line. */
function unusedFence(text: string): string {
  let len = 3;
  for (const m of text.matchAll(/^ {0,3}(`{3,})/gm)) len = Math.max(len, m[1]!.length + 1);
  return '`'.repeat(len);
}

/** Zulip's datetime_to_global_time. */
const globalTime = (sec: number): string => `<time:${new Date(sec * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;

// Zulip's topic_link_util.get_message_link_syntax, with its fallback Markdown link for names the
// #**channel>topic@id** syntax cannot carry.
const BROKEN_LINK_CHARS = /[`>*&[\]]|(\$\$)/g;
const LINK_ESCAPES: Record<string, string> = { '`': '&#96;', '>': '&gt;', '*': '&#42;', '&': '&amp;', $$: '&#36;&#36;', '[': '&#91;', ']': '&#93;' };
function messageLinkSyntax(ch: ChannelRow, topic: string, id: number): string {
  const broken = (s: string): boolean => new RegExp(BROKEN_LINK_CHARS.source).test(s);
  if (!broken(topic) && !broken(ch.name)) return `#**${ch.name}>${topic}@${id}**`;
  const esc = (s: string): string => s.replace(BROKEN_LINK_CHARS, (c) => LINK_ESCAPES[c] ?? c);
  const link = `#narrow/channel/${channelSlug(ch.id, ch.name)}/topic/${encodeHashComponent(topic)}/near/${id}`;
  // Message.EMPTY_TOPIC_FALLBACK_NAME is the empty topic's display name.
  return `[#${esc(ch.name)} > ${esc(topic === '' ? 'general chat' : topic)} @ 💬](${link})`;
}

export async function reportMessage(app: AppCtx, me: UserRow, caller: { id: number; realmId: number; role: number }, messageId: number, reportType: ReportType, description: string): Promise<void> {
  if (reportType === 'other' && description === '') throw badRequest('An explanation is required.');
  const realm = await realmOf(app, me.realm_id);
  const channelId = realmSettings(realm.settings).moderation_request_channel_id;
  const modChannel = channelId === -1 ? undefined : await channelById(app.db, me.realm_id, channelId);
  if (!modChannel || modChannel.deactivated) throw badRequest('Message reporting is not enabled in this organization.');
  const { message, channel } = await accessMessage(app.db, caller, messageId, { forModify: false });

  const dmIds = channel ? [] : (message.dm_key ?? '').split(',').map(Number);
  const ids = [...new Set([message.sender_id, me.id, ...dmIds])];
  const people = new Map((await app.db.selectFrom('users').selectAll().where('id', 'in', ids).execute()).map((u) => [u.id, u]));
  const sender = people.get(message.sender_id)!;
  const when = globalTime(Number(message.date_sent));
  const reporter = silentMention(me);
  const reported = silentMention(sender);
  let header: string;
  if (channel || dmIds.length <= 2) {
    header = `${reporter} reported a message sent by ${reported}`;
    if (!channel && sender.id === me.id) {
      // Reporting one's own 1:1 DM names its recipient (oneself in a DM to oneself).
      const otherId = dmIds.find((id) => id !== me.id);
      header += ` to ${otherId === undefined ? reporter : silentMention(people.get(otherId)!)}`;
    }
    header += ` at ${when}.`;
  } else {
    const others = dmIds.filter((id) => id !== sender.id).sort((a, b) => a - b).map((id) => people.get(id)!);
    header = `${reporter} reported a message sent by ${reported} to ${mentionList(others)} at ${when}.`;
  }
  const original = channel ? `Original message at ${messageLinkSyntax(channel, message.topic, message.id)}` : `[Original message](${messageLink(realmUrl(app.config), message, null)})`;
  const snippet = truncate(message.content, MAX_REPORT_SNIPPET_LENGTH, '\n[message truncated]');
  const fence = unusedFence(snippet);
  const reason = REPORT_REASONS[reportType];
  const content = `${header}\n\`\`\`quote\n**${reason}**. ${description}\n\`\`\`\n\n${fence} spoiler ${original}\n${snippet}\n${fence}`;
  const topic = modChannel.topics_policy === 'empty_topic_only' ? '' : `${sender.full_name} moderation`;
  const sent = await internalSendChannelMessage(app, { realmId: me.realm_id, bot: 'notification', channelId: modChannel.id, topic, content, actingUser: me });
  if (sent === undefined) throw badRequest('Failed to send the message report.');
  await sendConfirmation(app, me, message, channel, reason);
}

/** Zulip's send_report_confirmation_dm. */
async function sendConfirmation(app: AppCtx, me: UserRow, message: MessageRow, channel: ChannelRow | null, reason: string): Promise<void> {
  const url = messageLink(realmUrl(app.config), message, channel);
  await internalSendDirectMessage(app, { realmId: me.realm_id, bot: 'notification', recipientId: me.id, content: `You reported [a message](${url}) for ${reason.toLowerCase()}.` });
}

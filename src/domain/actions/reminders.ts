import { realmUrl } from '../../config.js';
import type { AppCtx, Caller, Tx } from '../context.js';
import { transact } from '../context.js';
import { badRequest, notFound, type JsonableError } from '../errors.js';
import { accessMessage } from '../access/messages.js';
import { checkMessage } from './message-send.js';
import { deliveryTimeNotInFuture } from './scheduled-messages.js';
import { MAX_MESSAGE_LENGTH, MAX_REMINDER_NOTE_LENGTH } from '../rules/limits.js';
import { channelSlug, encodeHashComponent } from '../rules/markdown/index.js';
import { presentReminder } from '../../presenters/scheduled-message.js';
import type { MessageRow } from '../../store/messages.js';
import type { ChannelRow } from '../../store/channels.js';
import { DELIVERY_REMIND } from '../../store/scheduled-messages-schema.js';
import * as store from '../../store/scheduled-messages.js';
import { usersInRealm, type UserRow } from '../../store/users.js';

/**
 * Message reminders (Zulip: zerver/views/reminders.py,
 * zerver/actions/reminders.py, zerver/lib/reminders.py). A reminder is a
 * scheduled direct message to oneself (delivery_type REMIND) that the
 * scheduler delivers from Notification Bot with freshly formatted content.
 */

export const reminderNotFound = (): JsonableError => notFound('Reminder does not exist');

/** Zulip's normalize_note_text. */
export function normalizeNote(note: string): string {
  const body = note.trimEnd().replace(/^\n+/, '');
  if ([...body].length > MAX_REMINDER_NOTE_LENGTH) throw badRequest(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  return body;
}

/** Zulip's silent_mention_syntax_for_user. */
const silentMention = (u: Pick<UserRow, 'full_name' | 'id'>): string => `@_**${u.full_name}|${u.id}**`;

/** The users of a DM as a list for a sentence: "A", "A and B", "A, B, and C". */
export function mentionList(users: readonly Pick<UserRow, 'full_name' | 'id'>[]): string {
  const m = users.map(silentMention);
  if (m.length <= 2) return m.join(' and ');
  return `${m.slice(0, -1).join(', ')}, and ${m[m.length - 1]}`;
}

/** Zulip's get_unused_fence: a backtick fence longer than any run in the text. */
function unusedFence(text: string): string {
  let longest = 0;
  for (const run of text.match(/`{3,}/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** Zulip's truncate_content, in code points. */
export function truncate(text: string, max: number, suffix: string): string {
  const chars = [...text];
  return chars.length > max ? chars.slice(0, Math.max(0, max - [...suffix].length)).join('') + suffix : text;
}

/** Zulip's message_link_url (near link) for a channel message or a DM. */
export function messageLink(base: string, m: MessageRow, channel: ChannelRow | null): string {
  if (channel) return `${base}/#narrow/channel/${channelSlug(channel.id, channel.name)}/topic/${encodeHashComponent(m.topic)}/near/${m.id}`;
  const ids = (m.dm_key ?? '').split(',');
  return `${base}/#narrow/dm/${ids.join(',')}-${ids.length > 2 ? 'group' : 'dm'}/near/${m.id}`;
}

/** Zulip's get_reminder_formatted_content. */
export async function reminderContent(app: AppCtx, me: UserRow, m: MessageRow, channel: ChannelRow | null, note: string | null): Promise<string> {
  const cleanNote = note ? normalizeNote(note) : '';
  const ids = channel ? [m.sender_id] : [...new Set([m.sender_id, ...(m.dm_key ?? '').split(',').map(Number)])];
  const people = new Map((await usersInRealm(app.db, me.realm_id, ids)).map((u) => [u.id, u]));
  const sender = people.get(m.sender_id)!;
  const url = messageLink(realmUrl(app.config), m, channel);
  const what = channel ? 'message' : 'direct message';
  let content = cleanNote ? `You requested a reminder for the following ${what}. Note:\n > ${cleanNote}` : `You requested a reminder for the following ${what}.`;
  content += '\n\n';
  let where: string;
  let widgetWhere: string;
  if (channel) {
    const link = `#**${channel.name}>${m.topic}@${m.id}**`;
    where = `${silentMention(sender)} [said](${url}) in ${link}:`;
    widgetWhere = `in ${link}.`;
  } else {
    let others = (m.dm_key ?? '').split(',').map(Number).filter((id) => id !== m.sender_id).map((id) => people.get(id)!).filter(Boolean);
    if (others.length === 0) others = [sender];
    where = `${silentMention(sender)} [said](${url}) to ${mentionList(others)}:`;
    widgetWhere = `to ${mentionList(others)}.`;
  }
  if (m.content.startsWith('/poll') || m.content.startsWith('/todo')) {
    const widget = m.content.startsWith('/poll') ? 'poll' : 'todo list';
    return content + `${silentMention(sender)} [sent](${url}) a ${widget} ${widgetWhere}`;
  }
  content += where + '\n';
  const fence = unusedFence(content);
  const frame = (body: string): string => `${fence}quote\n${body}\n${fence}`;
  const room = MAX_MESSAGE_LENGTH - [...(content + frame(''))].length;
  return content + frame(truncate(m.content, room, '\n[message truncated]'));
}

/** Zulip's schedule_reminder_for_message: checked now as a DM to oneself, stored, delivered by the scheduler. */
export async function checkCreateReminder(app: AppCtx, me: UserRow, caller: Caller, messageId: number, deliverAt: number, note: string | undefined, client: string, nowSec: number): Promise<number> {
  if (deliverAt <= nowSec) throw deliveryTimeNotInFuture();
  const { message, channel } = await accessMessage(app.db, caller, messageId, { forModify: false });
  const content = await reminderContent(app, me, message, channel, note ?? null);
  const checked = await checkMessage(app, me, { type: 'private', to: JSON.stringify([me.id]), topic: undefined, content });
  return transact(app, async (tx) => {
    const row = await store.insertScheduled(tx.db, {
      realm_id: me.realm_id,
      sender_id: me.id,
      delivery_type: DELIVERY_REMIND,
      type: 'private',
      stream_id: null,
      to_user_ids: JSON.stringify([me.id]),
      topic: '',
      content: checked.content,
      rendered_content: checked.rendered.html,
      scheduled_timestamp: deliverAt,
      read_by_sender: 0,
      sending_client: client,
      delivered: 0,
      failed: 0,
      reminder_target_message_id: message.id,
      reminder_note: note ? normalizeNote(note) : null,
    });
    tx.emit(me.realm_id, { type: 'reminders', op: 'add', reminders: [presentReminder(row)] }, [me.id]);
    tx.afterPublish(() => app.jobs?.wake());
    return row.id;
  });
}

export async function doDeleteReminder(tx: Tx, caller: Caller, id: number): Promise<void> {
  const row = await store.rowOfUser(tx.db, caller.id, DELIVERY_REMIND, id, true);
  if (!row) throw reminderNotFound();
  await store.deleteScheduled(tx.db, id);
  tx.emit(caller.realmId, { type: 'reminders', op: 'remove', reminder_id: id }, [caller.id]);
}

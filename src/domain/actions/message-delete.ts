import type { AppCtx, Caller } from '../context.js';
import { transact } from '../context.js';
import { badRequest } from '../errors.js';
import { accessMessage, eventRecipientIds, MessageViewer } from '../access/messages.js';
import { realmSettings } from '../rules/realm-settings.js';
import { userHasRealmPermission } from '../rules/realm-group-settings.js';
import { nowSeconds } from '../../store/db.js';
import { detachDeletedMessages } from './attachments.js';
import { deleteMessages, firstMessageIdOf, type MessageRow } from '../../store/messages.js';
import { realmById } from '../../store/realms.js';
import type { ChannelRow } from '../../store/channels.js';

/**
 * DELETE /messages/{id} (Zulip's validate_can_delete_message and
 * do_delete_messages): who may delete, then one transaction removing the
 * message with its rows and reactions, and a delete_message event to
 * everyone who could see it.
 */
const noPermission = () => badRequest("You don't have permission to delete this message");

async function checkCanDelete(app: AppCtx, db: Parameters<typeof userHasRealmPermission>[0], v: MessageViewer, caller: Caller, m: MessageRow, ch: ChannelRow | null): Promise<void> {
  if (await userHasRealmPermission(db, caller.realmId, caller.id, 'can_delete_any_message_group')) return;
  if (ch && (await v.groupIds()).has(ch.can_delete_any_message_group_id)) return;
  if (m.sender_id !== caller.id) {
    const sender = await db.selectFrom('users').select('bot_owner_id').where('id', '=', m.sender_id).executeTakeFirst();
    if (sender?.bot_owner_id !== caller.id) throw noPermission();
  }
  if (!(await userHasRealmPermission(db, caller.realmId, caller.id, 'can_delete_own_message_group'))) {
    if (!ch || !(await v.groupIds()).has(ch.can_delete_own_message_group_id)) throw noPermission();
  }
  const realm = (await realmById(db, caller.realmId))!;
  const limit = realmSettings(realm.settings).message_content_delete_limit_seconds;
  if (limit !== null && nowSeconds() - m.date_sent > limit) throw badRequest('The time limit for deleting this message has passed');
}

export async function checkDeleteMessage(app: AppCtx, caller: Caller, messageId: number): Promise<void> {
  await transact(app, async (tx) => {
    const v = new MessageViewer(tx.db, caller);
    const { message: m, channel } = await accessMessage(tx.db, caller, messageId, { forModify: true, viewer: v });
    await checkCanDelete(app, tx.db, v, caller, m, channel);
    const recipients = await eventRecipientIds(tx.db, [m.id], channel);
    if (m.has_attachment) await detachDeletedMessages(tx, [m.id]);
    await deleteMessages(tx.db, [m.id]);
    const event: Record<string, unknown> = { type: 'delete_message', message_ids: [m.id], message_type: channel ? 'stream' : 'private' };
    if (channel) {
      event.stream_id = channel.id;
      event.topic = m.topic;
      if (channel.first_message_id === m.id) {
        await tx.db.updateTable('channels').set({ first_message_id: await firstMessageIdOf(tx.db, channel.recipient_id!) }).where('id', '=', channel.id).execute();
      }
    }
    tx.emit(m.realm_id, event as never, recipients);
  });
}

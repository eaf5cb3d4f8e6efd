import type { AppCtx, Caller } from '../context.js';
import { transact } from '../context.js';
import { badRequest } from '../errors.js';
import { accessMessage, bulkAccessible, eventRecipientIds, MessageViewer } from '../access/messages.js';
import { topicKey } from '../rules/topics.js';
import { realmSettings } from '../rules/realm-settings.js';
import { userHasRealmPermission } from '../rules/realm-group-settings.js';
import { nowSeconds } from '../../store/db.js';
import { detachDeletedMessages } from './attachments.js';
import { deleteMessages, firstMessageIdOf, messagesByIds, topicMessages, userMessagesOf, type MessageRow } from '../../store/messages.js';
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

/** Messages per transaction of delete_topic (Zulip deletes a topic in committed batches). */
export const DELETE_TOPIC_BATCH = 1000;
/** Zulip stops after about 50 seconds and answers complete: false; the client repeats the request. */
export const DELETE_TOPIC_TIME_LIMIT_MS = 50_000;

/**
 * POST /streams/{id}/delete_topic (Zulip's delete_in_topic): the topic's
 * messages the caller can see, newest first, deleted in batches of one
 * transaction each (with their delete_message event), so a huge topic makes
 * progress even if the request stops early. Returns whether it finished.
 */
export async function doDeleteTopic(
  app: AppCtx,
  caller: Caller,
  channel: ChannelRow,
  topic: string,
  opts: { batchSize?: number; timeLimitMs?: number } = {},
): Promise<boolean> {
  const batchSize = opts.batchSize ?? DELETE_TOPIC_BATCH;
  const deadline = Date.now() + (opts.timeLimitMs ?? DELETE_TOPIC_TIME_LIMIT_MS);
  const ids = (await topicMessages(app.db, channel.recipient_id!, topicKey(topic))).map((m) => m.id);
  // Zulip's bulk_access_stream_messages_query: only messages the caller can access.
  const rows = await messagesByIds(app.db, ids);
  const withRows = new Set((await userMessagesOf(app.db, caller.id, ids)).map((r) => r.message_id));
  const deletable = (await bulkAccessible(app.db, caller, rows, withRows)).map((m) => m.id).sort((a, b) => b - a);
  for (let i = 0; i < deletable.length; i += batchSize) {
    const batch = deletable.slice(i, i + batchSize);
    await transact(app, async (tx) => {
      // Still there (another request may have deleted some meanwhile).
      const present = (await tx.db.selectFrom('messages').select(['id', 'topic', 'realm_id']).where('id', 'in', batch).execute()).sort((a, b) => a.id - b.id);
      if (present.length === 0) return;
      const presentIds = present.map((m) => m.id);
      const recipients = await eventRecipientIds(tx.db, presentIds, channel);
      await deleteMessages(tx.db, presentIds);
      const current = await tx.db.selectFrom('channels').select('first_message_id').where('id', '=', channel.id).executeTakeFirst();
      if (current?.first_message_id !== null && current?.first_message_id !== undefined && presentIds.includes(current.first_message_id)) {
        await tx.db.updateTable('channels').set({ first_message_id: await firstMessageIdOf(tx.db, channel.recipient_id!) }).where('id', '=', channel.id).execute();
      }
      tx.emit(
        channel.realm_id,
        { type: 'delete_message', message_ids: presentIds, message_type: 'stream', stream_id: channel.id, topic: present[0]!.topic },
        recipients,
      );
    });
    if (i + batchSize < deletable.length && Date.now() >= deadline) return false;
  }
  return true;
}

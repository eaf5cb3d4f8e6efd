import { sql } from 'kysely';
import type { AppCtx, Caller, Tx, TxDb } from '../context.js';
import { transact } from '../context.js';
import { badRequest } from '../errors.js';
import { bulkAccessible, invalidMessage } from '../access/messages.js';
import { EDITABLE_FLAGS, flagBit, FLAG_MENTIONED, FLAG_READ, FLAG_STREAM_WILDCARD, FLAG_TOPIC_WILDCARD, HISTORICAL_FLAGS, KNOWN_FLAGS } from '../rules/message-flags.js';
import { VISIBILITY_FOLLOWED, VISIBILITY_MUTED, VISIBILITY_UNMUTED } from '../rules/channels.js';
import { realmSettings } from '../rules/realm-settings.js';
import { insertUserMessagesIgnoringExisting, messagesByIds, setUserMessageFlags, userMessagesOf } from '../../store/messages.js';
import { realmById } from '../../store/realms.js';
import { isStorableId } from '../../store/channels.js';

/**
 * Personal message flags (Zulip's zerver/actions/message_flags.py). Every
 * change is one transaction and sends one update_message_flags event to the
 * user's own clients, listing the messages whose flag actually changed.
 */

/** Zulip's checks, in its order: unknown flag, server-only flag, unknown operation. */
export function checkFlagOperation(op: string, flag: string): { add: boolean; bit: number } {
  if (!KNOWN_FLAGS.has(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.has(flag)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw badRequest(`Invalid message flag operation: '${op}'`);
  return { add: op === 'add', bit: flagBit(flag)! };
}

type Details = Record<string, Record<string, unknown>>;

/**
 * message_details of a "mark as unread" event: where each message belongs in
 * unread_msgs (Zulip's format_unread_message_details).
 */
async function unreadDetails(db: TxDb, userId: number, messageIds: readonly number[]): Promise<Details> {
  const out: Details = {};
  if (messageIds.length === 0) return out;
  const rows = await db
    .selectFrom('user_messages as um')
    .innerJoin('messages as m', 'm.id', 'um.message_id')
    .select(['m.id', 'm.stream_id', 'm.topic', 'm.topic_key', 'm.dm_key', 'um.flags'])
    .where('um.user_id', '=', userId)
    .where('um.message_id', 'in', [...messageIds])
    .execute();
  const channelIds = [...new Set(rows.map((r) => r.stream_id).filter((id): id is number => id !== null))];
  const [muted, topics] = await Promise.all([
    channelIds.length
      ? db.selectFrom('subscriptions').select('channel_id').where('user_id', '=', userId).where('is_muted', '=', 1).where('channel_id', 'in', channelIds).execute()
      : Promise.resolve([]),
    channelIds.length
      ? db.selectFrom('user_topics').select(['channel_id', 'topic_lower', 'visibility_policy']).where('user_id', '=', userId).where('channel_id', 'in', channelIds).execute()
      : Promise.resolve([]),
  ]);
  const mutedChannels = new Set(muted.map((r) => r.channel_id));
  const policy = new Map(topics.map((t) => [`${t.channel_id}:${t.topic_lower}`, t.visibility_policy]));
  for (const r of rows) {
    const d: Record<string, unknown> = {};
    const mentioned = (r.flags & FLAG_MENTIONED) !== 0;
    const wildcard = (r.flags & (FLAG_STREAM_WILDCARD | FLAG_TOPIC_WILDCARD)) !== 0;
    if (r.stream_id !== null) {
      const p = policy.get(`${r.stream_id}:${r.topic_key}`) ?? 0;
      const unmuted = mutedChannels.has(r.stream_id) ? p === VISIBILITY_UNMUTED || p === VISIBILITY_FOLLOWED : p !== VISIBILITY_MUTED;
      Object.assign(d, { type: 'stream', stream_id: r.stream_id, topic: r.topic, unmuted_stream_msg: unmuted });
      if (mentioned || (wildcard && unmuted)) d.mentioned = true;
    } else {
      const ids = (r.dm_key ?? String(userId)).split(',').map(Number).filter((id) => id !== userId);
      Object.assign(d, { type: 'private', user_ids: ids });
      if (mentioned || wildcard) d.mentioned = true;
    }
    out[String(r.id)] = d;
  }
  return out;
}

async function emptyTopicName(db: TxDb, realmId: number): Promise<string> {
  return realmSettings((await realmById(db, realmId))!.settings).realm_empty_topic_display_name;
}

/** POST /messages/flags (Zulip's do_update_message_flags); returns how many messages changed. */
export async function doUpdateMessageFlags(app: AppCtx, caller: Caller, op: string, flag: string, requested: readonly number[]): Promise<number> {
  const { add, bit } = checkFlagOperation(op, flag);
  const target = add ? bit : 0;
  return transact(app, async (tx) => {
    let ids = [...requested];
    if (flag === 'read' && !add && ids.some(isStorableId)) {
      // Unread channel messages must be in channels the user is subscribed to.
      const outside = await tx.db
        .selectFrom('messages')
        .select('id')
        .where('id', 'in', ids.filter(isStorableId))
        .where('stream_id', 'is not', null)
        .where('stream_id', 'not in', (eb) =>
          eb.selectFrom('subscriptions').select('channel_id').where('user_id', '=', caller.id).where('active', '=', 1),
        )
        .execute();
      const skip = new Set(outside.map((r) => r.id));
      ids = ids.filter((id) => !skip.has(id));
    }
    const rows = new Map((await userMessagesOf(tx.db, caller.id, ids)).map((r) => [r.message_id, r.flags]));
    ids = ids.filter((id) => ((rows.get(id) ?? HISTORICAL_FLAGS) & bit) !== target);
    const changed = [...new Set(ids)];
    if ((HISTORICAL_FLAGS & bit) !== target) {
      // Flagging a message one never received (a public channel's history) gives one a "historical" row.
      const missing = changed.filter((id) => !rows.has(id));
      if (missing.length) {
        const messages = await messagesByIds(tx.db, missing);
        const ok = await bulkAccessible(tx.db, caller, messages, new Set());
        if (ok.length !== missing.length) throw invalidMessage();
        const flags = (HISTORICAL_FLAGS & ~bit) | target;
        await insertUserMessagesIgnoringExisting(tx.db, missing.map((message_id) => ({ user_id: caller.id, message_id, flags })));
      }
    }
    await setUserMessageFlags(tx.db, caller.id, changed.filter((id) => rows.has(id)), bit, add);
    const event: Record<string, unknown> = { type: 'update_message_flags', op, operation: op, flag, messages: changed, all: false };
    if (flag === 'read' && !add) {
      event.message_details = await unreadDetails(tx.db, caller.id, changed);
      event.__empty_topic_name = await emptyTopicName(tx.db, caller.realmId);
    }
    tx.emit(caller.realmId, event as never, [caller.id]);
    return changed.length;
  });
}

/** Marks these (unread) rows read and tells the user's clients. */
async function markRead(tx: Tx, caller: Caller, where: (q: any) => any): Promise<number[]> {
  const rows = await where(
    tx.db.updateTable('user_messages').set({ flags: sql<number>`flags | ${FLAG_READ}` }).where('user_id', '=', caller.id).where(sql<boolean>`(flags & ${sql.lit(FLAG_READ)}) = 0`),
  )
    .returning('message_id')
    .execute();
  return (rows as { message_id: number }[]).map((r) => r.message_id).sort((a, b) => a - b);
}

/** POST /mark_all_as_read: one event with all=true (clients reload). */
export async function doMarkAllAsRead(app: AppCtx, caller: Caller): Promise<number> {
  return transact(app, async (tx) => {
    const ids = await markRead(tx, caller, (q) => q);
    tx.emit(caller.realmId, { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }, [caller.id]);
    return ids.length;
  });
}

/** POST /mark_stream_as_read and /mark_topic_as_read; no event when nothing changed. */
export async function doMarkChannelAsRead(app: AppCtx, caller: Caller, recipientId: number, topicKey?: string): Promise<number> {
  return transact(app, async (tx) => {
    const ids = await markRead(tx, caller, (q) => {
      let sub = tx.db.selectFrom('messages').select('id').where('recipient_id', '=', recipientId);
      if (topicKey !== undefined) sub = sub.where('topic_key', '=', topicKey);
      return q.where('message_id', 'in', sub);
    });
    if (ids.length) tx.emit(caller.realmId, { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: ids, all: false }, [caller.id]);
    return ids.length;
  });
}

/**
 * Zulip's do_mark_muted_user_messages_as_read: on muting someone, their
 * messages still unread by the muter become read (one event, as a read of
 * exactly those messages); no event when there were none.
 */
export async function doMarkSenderAsRead(tx: Tx, caller: Caller, senderId: number): Promise<number[]> {
  const ids = await markRead(tx, caller, (q) => q.where('message_id', 'in', tx.db.selectFrom('messages').select('id').where('sender_id', '=', senderId)));
  if (ids.length) tx.emit(caller.realmId, { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: ids, all: false }, [caller.id]);
  return ids;
}

import { sql } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/**
 * A channel's topics with their newest message id, newest first (Zulip's
 * get_topic_history_for_stream). Grouped by the exact topic, so the caller
 * can pick the most recent spelling of topics that differ only in case.
 * With `userId`, only messages that user has (channels with protected
 * history); otherwise every message of the channel.
 */
export async function topicHistoryRows(db: AnyDb, realmId: number, channel: { id: number; recipient_id: number | null }, userId: number | null): Promise<{ topic: string; max_id: number }[]> {
  let q = db
    .selectFrom('messages as m')
    .select(['m.topic as topic', sql<number>`max(m.id)`.as('max_id')])
    .where('m.realm_id', '=', realmId);
  q = channel.recipient_id !== null ? q.where('m.recipient_id', '=', channel.recipient_id) : q.where('m.stream_id', '=', channel.id);
  if (userId !== null) q = q.innerJoin('user_messages as um', 'um.message_id', 'm.id').where('um.user_id', '=', userId);
  const rows = await q.groupBy('m.topic').orderBy(sql`max(m.id)`, 'desc').execute();
  return rows.map((r) => ({ topic: r.topic, max_id: Number(r.max_id) }));
}

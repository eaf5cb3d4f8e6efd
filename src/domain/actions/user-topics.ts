import type { Tx } from '../context.js';
import { nowSeconds } from '../../store/db.js';
import { userTopicRow, type UserTopicRow } from '../../store/channel-extras.js';
import { VISIBILITY_INHERIT, VISIBILITY_MUTED } from '../rules/channels.js';
import type { ChannelRow } from '../../store/channels.js';

/**
 * Per-user topic visibility policy (Zulip's do_set_user_topic_visibility_policy).
 * Unchanged policy: nothing written, no event. Otherwise the user's clients
 * get the legacy muted_topics list first (queues that asked for user_topic
 * drop it), then the user_topic event.
 */

/** The legacy muted_topics triples [channel name, topic, date muted], active channels only. */
export async function mutedTopicTriples(db: Tx['db'] | import('../../store/db.js').Db, userId: number): Promise<[string, string, number][]> {
  const rows = await db
    .selectFrom('user_topics')
    .innerJoin('channels', 'channels.id', 'user_topics.channel_id')
    .select(['channels.name', 'user_topics.topic_name', 'user_topics.last_updated'])
    .where('user_topics.user_id', '=', userId)
    .where('user_topics.visibility_policy', '=', VISIBILITY_MUTED)
    .where('channels.deactivated', '=', 0)
    .orderBy('user_topics.id')
    .execute();
  return rows.map((r) => [r.name, r.topic_name, r.last_updated]);
}

export function presentUserTopic(r: Pick<UserTopicRow, 'channel_id' | 'topic_name' | 'last_updated' | 'visibility_policy'>): Record<string, unknown> {
  return { stream_id: r.channel_id, topic_name: r.topic_name, last_updated: r.last_updated, visibility_policy: r.visibility_policy };
}

export async function doSetUserTopicPolicy(tx: Tx, userId: number, ch: ChannelRow, topic: string, policy: number): Promise<boolean> {
  let existing = await userTopicRow(tx.db, userId, ch.id, topic);
  const now = nowSeconds();
  if (!existing && policy !== VISIBILITY_INHERIT) {
    // Two sends by one user to a new topic may both follow it automatically at once: on
    // PostgreSQL both transactions read no row. The loser's insert waits for the winner's
    // commit and inserts nothing; it then goes on from the winner's row (the update path).
    const inserted = await tx.db
      .insertInto('user_topics')
      .values({ realm_id: ch.realm_id, user_id: userId, channel_id: ch.id, topic_name: topic, topic_lower: topic.toLowerCase(), visibility_policy: policy, last_updated: now })
      .onConflict((oc) => oc.columns(['user_id', 'channel_id', 'topic_lower']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) existing = await userTopicRow(tx.db, userId, ch.id, topic);
  }
  if (policy === VISIBILITY_INHERIT) {
    if (!existing) return false;
    await tx.db.deleteFrom('user_topics').where('id', '=', existing.id).execute();
  } else if (existing) {
    if (existing.visibility_policy === policy) return false;
    await tx.db.updateTable('user_topics').set({ visibility_policy: policy, last_updated: now }).where('id', '=', existing.id).execute();
  }
  // The stored spelling of the topic is kept when an existing row changes (matching is case-insensitive).
  const topicName = existing?.topic_name ?? topic;
  tx.emit(ch.realm_id, { type: 'muted_topics', muted_topics: await mutedTopicTriples(tx.db, userId) }, [userId]);
  tx.emit(ch.realm_id, { type: 'user_topic', stream_id: ch.id, topic_name: topicName, last_updated: now, visibility_policy: policy }, [userId]);
  return true;
}

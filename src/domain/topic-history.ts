import { topicForClient } from './rules/topics.js';

/**
 * Zulip's generate_topic_history_from_db_rows: topics differing only in
 * case are one topic, shown with its most recently used spelling and its
 * newest message id; newest topic first. The empty topic is shown by its
 * display name to clients that do not take empty topic names.
 */
export function topicHistory(rows: readonly { topic: string; max_id: number }[], allowEmptyTopicName: boolean, emptyTopicDisplayName: string): { name: string; max_id: number }[] {
  const canonical = new Map<string, { name: string; max_id: number }>();
  for (const r of [...rows].sort((a, b) => a.max_id - b.max_id)) canonical.set(r.topic.toLowerCase(), { name: r.topic, max_id: r.max_id });
  return [...canonical.values()]
    .map((t) => ({ name: topicForClient(t.name, allowEmptyTopicName, emptyTopicDisplayName), max_id: t.max_id }))
    .sort((a, b) => b.max_id - a.max_id);
}

import { htmlDiff } from '../domain/rules/html-diff.js';
import { topicForClient } from '../domain/rules/topics.js';
import type { MessageRow } from '../store/messages.js';
import { parseEditHistory, visibleEditHistory, type EditHistoryPolicy } from './message.js';

/**
 * GET /messages/{id}/history: one snapshot per version, oldest first
 * (Zulip's fill_edit_history_entries). Each snapshot holds the topic and
 * content after that edit; edits also name what they changed, and content
 * edits carry an HTML diff against the version before.
 */
export function messageHistory(m: MessageRow, policy: EditHistoryPolicy, allowEmptyTopic: boolean, emptyTopicName: string): Record<string, unknown>[] {
  const isChannel = m.stream_id !== null;
  const shown = (t: string): string => (isChannel ? topicForClient(t, allowEmptyTopic, emptyTopicName) : '');
  let content = m.content;
  let rendered = m.rendered_content;
  let topic = shown(m.topic);
  const out: Record<string, unknown>[] = [];
  for (const e of parseEditHistory(m.edit_history)) {
    const snap: Record<string, unknown> = { content, rendered_content: rendered, timestamp: e.timestamp, topic, user_id: e.user_id };
    if (e.prev_topic !== undefined) {
      topic = shown(e.prev_topic);
      snap.prev_topic = topic;
    }
    if (e.prev_content !== undefined) {
      snap.prev_content = e.prev_content;
      snap.prev_rendered_content = e.prev_rendered_content ?? '';
      snap.content_html_diff = htmlDiff(e.prev_rendered_content ?? '', rendered);
      content = e.prev_content;
      rendered = e.prev_rendered_content ?? '';
    }
    if (e.prev_stream !== undefined) {
      snap.prev_stream = e.prev_stream;
      snap.stream = e.stream;
    }
    out.push(snap);
  }
  out.push({ content, rendered_content: rendered, timestamp: m.date_sent, topic, user_id: m.sender_id });
  return visibleEditHistory(policy, out).reverse();
}

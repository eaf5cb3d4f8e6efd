import { badRequest } from '../errors.js';
import { MAX_TOPIC_LENGTH, firstUnprintable } from './channels.js';

/** Zulip's RESOLVED_TOPIC_PREFIX: a resolved topic starts with a check mark and a space. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';
const TOPIC_TRUNCATION = '...';
/** The legacy name clients used for the empty topic. */
export const NO_TOPIC = '(no topic)';

/** The key topics are compared and indexed by (topics match case-insensitively). */
export const topicKey = (topic: string): string => topic.toLowerCase();

/** Zulip's check_stream_topic: no unprintable characters. */
export function checkTopic(topic: string): void {
  const bad = firstUnprintable(topic);
  if (bad !== null) throw badRequest(`Invalid character in topic, at position ${bad}!`);
}

/** Zulip's truncate_topic: at most 60 characters (code points), ending in "..." when cut. */
export function truncateTopic(topic: string): string {
  const chars = Array.from(topic);
  if (chars.length <= MAX_TOPIC_LENGTH) return topic;
  return chars.slice(0, MAX_TOPIC_LENGTH - TOPIC_TRUNCATION.length).join('') + TOPIC_TRUNCATION;
}

/**
 * A topic as clients send it: stripped, and "(no topic)" or the realm's
 * display name for the empty topic read as the empty topic (api.md convention 8).
 */
export function incomingTopic(raw: string, emptyTopicDisplayName: string): string {
  const t = raw.trim();
  return t === NO_TOPIC || t === emptyTopicDisplayName ? '' : t;
}

/** The topic as a client without the empty_topic_name capability sees it. */
export const topicForClient = (topic: string, allowEmpty: boolean, displayName: string): string =>
  topic === '' && !allowEmpty ? displayName : topic;

/** Zulip's topic_resolve_toggled: the edit only added or removed the resolved prefix. */
export function resolveToggled(topic: string, prevTopic: string): boolean {
  const p = RESOLVED_TOPIC_PREFIX.length;
  if (prevTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !topic.startsWith(RESOLVED_TOPIC_PREFIX)) return prevTopic.slice(p) === topic;
  if (topic.startsWith(RESOLVED_TOPIC_PREFIX) && !prevTopic.startsWith(RESOLVED_TOPIC_PREFIX)) {
    if (Array.from(prevTopic).length <= MAX_TOPIC_LENGTH - p) return topic.slice(p) === prevTopic;
    if (topic.endsWith(TOPIC_TRUNCATION)) return prevTopic.startsWith(topic.slice(p, -TOPIC_TRUNCATION.length));
  }
  return false;
}

/** Python's str.lstrip(chars): removes any leading characters from the set. */
export function stripResolvedPrefix(topic: string): string {
  let i = 0;
  while (i < topic.length && RESOLVED_TOPIC_PREFIX.includes(topic[i]!)) i++;
  return topic.slice(i);
}

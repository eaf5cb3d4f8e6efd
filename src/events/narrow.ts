import { badRequest } from '../domain/errors.js';

/**
 * The narrow of an event queue: message events reach the queue only when
 * the message matches every term (Zulip's narrow_predicate). Only the
 * operators Zulip supports for events are allowed; they work on the wire
 * message object of a message event, so the predicate needs no database.
 */
export type NarrowTerm = readonly [operator: string, operand: string];

const CHANNEL_OPERATORS = ['channel', 'stream'];
const SUPPORTED = [...CHANNEL_OPERATORS, 'topic', 'exact-topic', 'sender', 'is'];
const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Refuses narrows a queue cannot filter by, with Zulip's messages. */
export function checkNarrowForEvents(narrow: readonly NarrowTerm[]): void {
  for (const [operator, operand] of narrow) {
    if (!SUPPORTED.includes(operator)) throw badRequest(`Operator ${operator} not supported.`);
    if (operator === 'is' && operand === 'followed') throw badRequest(`Operand ${operand} not supported.`);
  }
}

interface WireMessage {
  readonly type?: unknown;
  readonly display_recipient?: unknown;
  readonly subject?: unknown;
  readonly topic?: unknown;
  readonly sender_email?: unknown;
}

function topicOf(m: WireMessage): string {
  const t = m.subject ?? m.topic;
  return typeof t === 'string' ? t : '';
}

function satisfies(operator: string, operand: string, m: WireMessage, flags: readonly string[]): boolean {
  const isChannel = m.type === 'stream';
  if (CHANNEL_OPERATORS.includes(operator)) {
    return isChannel && typeof m.display_recipient === 'string' && m.display_recipient.toLowerCase() === operand.toLowerCase();
  }
  switch (operator) {
    case 'topic': {
      if (!isChannel) return false;
      const topic = topicOf(m).toLowerCase();
      const want = operand.toLowerCase();
      return topic === want || topic.split(/\s+/).includes(want);
    }
    case 'exact-topic':
      return isChannel && topicOf(m) === operand;
    case 'sender':
      return typeof m.sender_email === 'string' && m.sender_email.toLowerCase() === operand.toLowerCase();
    case 'is':
      switch (operand) {
        case 'dm':
        case 'private':
          return m.type === 'private';
        case 'starred':
          return flags.includes('starred');
        case 'unread':
          return !flags.includes('read');
        case 'alerted':
        case 'mentioned':
          return flags.includes('mentioned');
        case 'resolved':
          return isChannel && topicOf(m).startsWith(RESOLVED_TOPIC_PREFIX);
        default:
          return true;
      }
    default:
      return true;
  }
}

/** Does a message event (its `message` and `flags`) pass the narrow? An empty narrow passes everything. */
export function messageMatchesNarrow(narrow: readonly NarrowTerm[], message: unknown, flags: unknown): boolean {
  if (narrow.length === 0) return true;
  const m = (message ?? {}) as WireMessage;
  const f = Array.isArray(flags) ? (flags as string[]) : [];
  return narrow.every(([op, operand]) => satisfies(op, operand, m, f));
}

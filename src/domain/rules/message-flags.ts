/**
 * Per-user message flags, stored as one integer per user_messages row (as
 * Zulip's UserMessage.flags bit field). The bit order is Zulip's, so the
 * API flag lists come out in Zulip's order.
 */
export const FLAG_READ = 1 << 0;
export const FLAG_STARRED = 1 << 1;
export const FLAG_COLLAPSED = 1 << 2;
export const FLAG_MENTIONED = 1 << 3;
export const FLAG_STREAM_WILDCARD = 1 << 4;
export const FLAG_TOPIC_WILDCARD = 1 << 5;
export const FLAG_GROUP_MENTIONED = 1 << 6;
export const FLAG_HAS_ALERT_WORD = 1 << 9;
export const FLAG_HISTORICAL = 1 << 10;
/** Not an API flag: marks direct messages so a user's DMs have their own index. */
export const FLAG_PRIVATE = 1 << 11;

/** Any kind of mention (is:mentioned). */
export const FLAG_MENTION_ANY = FLAG_MENTIONED | FLAG_STREAM_WILDCARD | FLAG_TOPIC_WILDCARD | FLAG_GROUP_MENTIONED;

const API_FLAGS: readonly [string, number][] = [
  ['read', FLAG_READ],
  ['starred', FLAG_STARRED],
  ['collapsed', FLAG_COLLAPSED],
  ['mentioned', FLAG_MENTIONED],
  ['stream_wildcard_mentioned', FLAG_STREAM_WILDCARD],
  ['topic_wildcard_mentioned', FLAG_TOPIC_WILDCARD],
  ['group_mentioned', FLAG_GROUP_MENTIONED],
  ['has_alert_word', FLAG_HAS_ALERT_WORD],
  ['historical', FLAG_HISTORICAL],
];

const BY_NAME = new Map(API_FLAGS);

/** Flags a client may change with POST /messages/flags. */
export const EDITABLE_FLAGS: ReadonlySet<string> = new Set(['read', 'starred', 'collapsed']);
/** Every flag of Zulip's bit field a client may name (valid_flags: all but the internal ones). */
export const KNOWN_FLAGS: ReadonlySet<string> = new Set([
  'read',
  'starred',
  'collapsed',
  'mentioned',
  'stream_wildcard_mentioned',
  'topic_wildcard_mentioned',
  'group_mentioned',
  'force_expand',
  'force_collapse',
  'has_alert_word',
  'historical',
]);

export const flagBit = (name: string): number | undefined => BY_NAME.get(name);

/**
 * The API list for a bitmask, with the deprecated `wildcard_mentioned`
 * added when either wildcard flag is set (as Zulip still does).
 */
export function flagList(bits: number): string[] {
  const out: string[] = [];
  for (const [name, bit] of API_FLAGS) if (bits & bit) out.push(name);
  if (bits & (FLAG_STREAM_WILDCARD | FLAG_TOPIC_WILDCARD)) out.push('wildcard_mentioned');
  return out;
}

/** Flags of a message the user can see but never received (no user_messages row). */
export const HISTORICAL_FLAGS = FLAG_READ | FLAG_HISTORICAL;

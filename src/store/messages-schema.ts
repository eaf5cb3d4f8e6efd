import type { Generated } from 'kysely';

/** Tables of the messages resource (migration 0300). Booleans are 0/1; times are unix seconds. */

/** A set of users exchanging group direct messages (Zulip's DirectMessageGroup). */
export interface DirectMessageGroupTable {
  id: Generated<number>;
  realm_id: number;
  /** The participants' ids, ascending, joined with ",". */
  user_ids_key: string;
  group_size: number;
}

export interface MessageTable {
  id: Generated<number>;
  realm_id: number;
  sender_id: number;
  /** recipients.id: the channel's, the receiving user's personal one, or the group's */
  recipient_id: number;
  /** The channel of a channel message; null for direct messages. */
  stream_id: number | null;
  /** Direct messages: every participant's id, ascending, joined with ","; null for channel messages. */
  dm_key: string | null;
  /** '' for direct messages (and for the empty topic). */
  topic: string;
  /** Lower-cased topic: topics match case-insensitively. */
  topic_key: string;
  /** Raw Markdown, normalized. */
  content: string;
  rendered_content: string;
  date_sent: number;
  sending_client: string;
  is_me_message: number;
  has_link: number;
  has_image: number;
  has_attachment: number;
  /** Last edit or move (Zulip's last_edit_time); null if never edited. */
  last_edit_time: number | null;
  /** JSON list of edit history entries, newest first; null if never edited. */
  edit_history: string | null;
}

export interface UserMessageTable {
  user_id: number;
  message_id: number;
  /** Bitmask, see domain/rules/message-flags.ts. */
  flags: number;
}

export interface ReactionTable {
  id: Generated<number>;
  realm_id: number;
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  /** unicode_emoji | realm_emoji | zulip_extra_emoji */
  reaction_type: string;
}

export interface MessageTables {
  direct_message_groups: DirectMessageGroupTable;
  messages: MessageTable;
  user_messages: UserMessageTable;
  reactions: ReactionTable;
}

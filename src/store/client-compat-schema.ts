import type { Generated } from 'kysely';

/**
 * Tables of issue 10 (migration 0600): presence, custom emoji and linkifiers.
 * Booleans are 0/1, times unix seconds, as everywhere else.
 */

/**
 * A user's presence, as last flushed from memory (domain/presence-state.ts
 * serves presence from memory and writes these rows in batches).
 */
export interface UserPresenceTable {
  user_id: number;
  realm_id: number;
  /** Last time the user was active (null: never, shown as date_joined). */
  last_active_time: number | null;
  /** Last time any client of the user reported in. */
  last_connected_time: number;
  /** The realm's presence sequence value of this row's last change. */
  last_update_id: number;
}

/** Zulip's PresenceSequence: the last presence update id handed out in a realm. */
export interface PresenceSequenceTable {
  realm_id: number;
  last_update_id: number;
}

/** A custom emoji (Zulip's RealmEmoji); deactivated rows stay so old reactions resolve. */
export interface RealmEmojiTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  author_id: number | null;
  /** File name under user_avatars/{realm_id}/emoji/images/ (random stem + extension). */
  file_name: string;
  is_animated: number;
  deactivated: number;
}

/** A linkifier (Zulip's RealmFilter), applied in sort_order. */
export interface RealmLinkifierTable {
  id: Generated<number>;
  realm_id: number;
  pattern: string;
  url_template: string;
  sort_order: number;
}

export interface ClientCompatTables {
  user_presences: UserPresenceTable;
  presence_sequences: PresenceSequenceTable;
  realm_emoji: RealmEmojiTable;
  realm_linkifiers: RealmLinkifierTable;
}

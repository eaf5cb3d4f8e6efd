import type { RealmEmojiRow } from '../store/realm-emoji.js';

/** Zulip's EmojiInfo: a custom emoji as REST, /register and realm_emoji events show it. */
export interface RealmEmojiInfo {
  readonly id: string;
  readonly name: string;
  /** Relative to the realm URL. */
  readonly source_url: string;
  readonly deactivated: boolean;
  readonly author_id: number | null;
  /** First frame of an animated emoji; null otherwise. */
  readonly still_url: string | null;
}

export const emojiImageUrl = (realmId: number, fileName: string): string => `/user_avatars/${realmId}/emoji/images/${fileName}`;

export function presentRealmEmoji(row: RealmEmojiRow): RealmEmojiInfo {
  const stem = row.file_name.replace(/\.[a-z]+$/, '');
  return {
    id: String(row.id),
    name: row.name,
    source_url: emojiImageUrl(row.realm_id, row.file_name),
    deactivated: row.deactivated === 1,
    author_id: row.author_id,
    still_url: row.is_animated === 1 ? `/user_avatars/${row.realm_id}/emoji/images/still/${stem}.png` : null,
  };
}

/** All of a realm's emoji keyed by id (Zulip's get_all_custom_emoji_for_realm). */
export function presentRealmEmojiDict(rows: readonly RealmEmojiRow[]): Record<string, RealmEmojiInfo> {
  const out: Record<string, RealmEmojiInfo> = {};
  for (const r of rows) out[String(r.id)] = presentRealmEmoji(r);
  return out;
}

import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';
import { badRequest } from '../errors.js';
import { RealmCache } from '../realm-cache.js';
import type { CustomEmoji } from '../rules/markdown/index.js';
import { presentRealmEmoji } from '../../presenters/realm-emoji.js';
import { realmEmojiRows, type RealmEmojiRow } from '../../store/realm-emoji.js';

type AnyDb = Db | TxDb;

/**
 * Custom emoji lookups for other resources: the Markdown renderer's
 * context, reactions and user statuses. Cached per realm (one query after
 * each change), so rendering a message costs no query for emoji.
 */

export const realmEmojiCache = new RealmCache<readonly RealmEmojiRow[]>(realmEmojiRows);

/** Every custom emoji of the realm (deactivated included), by id. */
export function allRealmEmoji(db: AnyDb, realmId: number): Promise<readonly RealmEmojiRow[]> {
  return realmEmojiCache.get(db, realmId);
}

/**
 * For MarkdownContext.customEmoji: the realm's active custom emoji by
 * name (Zulip's get_name_keyed_dict_for_active_realm_emoji).
 */
export async function customEmojiByName(db: AnyDb, realmId: number): Promise<{ byName(name: string): CustomEmoji | undefined }> {
  const map = new Map<string, CustomEmoji>();
  for (const row of await allRealmEmoji(db, realmId)) {
    if (row.deactivated) continue;
    const e = presentRealmEmoji(row);
    map.set(e.name, { id: e.id, name: e.name, sourceUrl: e.source_url, stillUrl: e.still_url });
  }
  return { byName: (name) => map.get(name) };
}

/**
 * The realm part of Zulip's get_emoji_data (reactions, statuses): an active
 * custom emoji with this name, as (code, type). Checked before "zulip" and
 * Unicode names, so a custom emoji overrides a built-in one.
 */
export async function realmEmojiDataForName(db: AnyDb, realmId: number, name: string): Promise<{ code: string; type: 'realm_emoji' } | undefined> {
  const row = (await allRealmEmoji(db, realmId)).find((r) => r.name === name && r.deactivated === 0);
  return row ? { code: String(row.id), type: 'realm_emoji' } : undefined;
}

/** The realm_emoji branch of Zulip's check_emoji_request: code is the emoji id, and it must match the name and be active. */
export async function checkRealmEmojiReaction(db: AnyDb, realmId: number, name: string, code: string): Promise<void> {
  const row = (await allRealmEmoji(db, realmId)).find((r) => String(r.id) === code);
  if (!row) throw badRequest('Invalid custom emoji.');
  if (row.name !== name) throw badRequest('Invalid custom emoji name.');
  if (row.deactivated) throw badRequest('This custom emoji has been deactivated.');
}

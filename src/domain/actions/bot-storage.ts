import { badRequest } from '../errors.js';
import type { Tx } from '../context.js';
import { deleteStorageKeys, storageOfUser, upsertStorage } from '../../store/bot-storage.js';

/**
 * Bot storage, as Zulip's zerver/lib/bot_storage.py: string keys and values
 * per user; the size of an entry is len(key) + len(value) in characters, and
 * a write that would take the total beyond the limit is refused whole with
 * "Request exceeds storage limit by N characters. The limit is M characters.".
 * Reading or deleting a key that is not stored is "Key does not exist." (for
 * deletes, Zulip compares the number of rows found with the number of keys
 * asked for, so a repeated key is refused too). No events (Zulip sends none).
 */
const chars = (s: string): number => [...s].length;

export async function doSetBotStorage(tx: Tx, userId: number, limit: number, entries: readonly [string, string][]): Promise<void> {
  const current = new Map((await storageOfUser(tx.db, userId)).map((e) => [e.key, e.value]));
  let size = 0;
  for (const [k, v] of current) size += chars(k) + chars(v);
  // Python iterates a dict: a repeated key cannot occur, the last value wins.
  const wanted = new Map(entries);
  let difference = 0;
  for (const [k, v] of wanted) {
    const old = current.get(k);
    difference += chars(k) + chars(v) - (old === undefined ? 0 : chars(k) + chars(old));
  }
  const total = size + difference;
  if (total > limit) throw badRequest(`Request exceeds storage limit by ${total - limit} characters. The limit is ${limit} characters.`);
  await upsertStorage(tx.db, userId, [...wanted].map(([key, value]) => ({ key, value })), new Set(current.keys()));
}

export async function doRemoveBotStorage(tx: Tx, userId: number, keys: readonly string[] | undefined): Promise<void> {
  const stored = new Set((await storageOfUser(tx.db, userId)).map((e) => e.key));
  const wanted = keys ?? [...stored];
  const found = new Set(wanted.filter((k) => stored.has(k)));
  if (found.size < wanted.length) throw badRequest('Key does not exist.');
  await deleteStorageKeys(tx.db, userId, [...found]);
}

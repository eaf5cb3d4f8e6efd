import type { Tx } from '../context.js';
import { alertWordRowsOfUser, alertWordsOfUser, deleteAlertWordsByIds, insertAlertWords } from '../../store/alert-words.js';

/**
 * Alert words: words or phrases that mark a message as alerted for the user.
 * Matching is case-insensitive, so a word already present in any case is not
 * added again. Both actions send the user's whole new list to their own
 * clients, also when nothing changed (as Zulip does).
 */

function emitList(tx: Tx, realmId: number, userId: number, words: string[]): void {
  tx.emit(realmId, { type: 'alert_words', alert_words: words }, [userId]);
}

export async function doAddAlertWords(tx: Tx, realmId: number, userId: number, words: readonly string[]): Promise<string[]> {
  const existing = new Set((await alertWordsOfUser(tx.db, userId)).map((w) => w.toLowerCase()));
  // Case-insensitively distinct new words; the last spelling of a repeated word wins.
  const fresh = new Map<string, string>();
  for (const w of words) if (!existing.has(w.toLowerCase())) fresh.set(w.toLowerCase(), w);
  await insertAlertWords(tx.db, realmId, userId, [...fresh.values()]);
  const list = await alertWordsOfUser(tx.db, userId);
  emitList(tx, realmId, userId, list);
  return list;
}

export async function doRemoveAlertWords(tx: Tx, realmId: number, userId: number, words: readonly string[]): Promise<string[]> {
  const remove = new Set(words.map((w) => w.toLowerCase()));
  const rows = await alertWordRowsOfUser(tx.db, userId);
  await deleteAlertWordsByIds(
    tx.db,
    rows.filter((r) => remove.has(r.word.toLowerCase())).map((r) => r.id),
  );
  const list = rows.filter((r) => !remove.has(r.word.toLowerCase())).map((r) => r.word);
  emitList(tx, realmId, userId, list);
  return list;
}

import { randomBytes } from 'node:crypto';
import type { AppCtx, Caller, Tx } from '../context.js';
import { transact } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { realmEmojiCache } from '../access/realm-emoji.js';
import type { EmojiImages } from '../rules/realm-emoji.js';
import { isAdminRole } from '../rules/users.js';
import { presentRealmEmoji, presentRealmEmojiDict } from '../../presenters/realm-emoji.js';
import { removeEmojiFiles, writeEmojiFiles } from '../../store/emoji-files.js';
import { activeRealmEmojiByName, deactivateRealmEmoji, insertRealmEmoji, realmEmojiRows, type RealmEmojiRow } from '../../store/realm-emoji.js';
import { activeUserIds } from '../../store/users.js';

/**
 * Adding and deactivating custom emoji (Zulip's zerver/actions/realm_emoji.py).
 *
 * Event, to every active user, after each change: the whole set, as Zulip
 * sends it to clients without the individual_emoji_changes capability:
 *   {type: 'realm_emoji', op: 'update', realm_emoji: {<id>: EmojiInfo, ...}}
 * Clients with it (the mobile app) get only the change instead (shaped per
 * queue in events/delivery.ts from the __individual hint):
 *   {type: 'realm_emoji', op: 'add', emoji: EmojiInfo}
 *   {type: 'realm_emoji', op: 'update_one', emoji_id: '<id>', data: {deactivated: true}}
 */

export const emojiNameTaken = (): JsonableError => badRequest('A custom emoji with this name already exists.');

async function notifyRealmEmoji(app: AppCtx, tx: Tx, realmId: number, individual: Record<string, unknown>): Promise<void> {
  const realmEmoji = presentRealmEmojiDict(await realmEmojiRows(tx.db, realmId));
  tx.emit(realmId, { type: 'realm_emoji', op: 'update', realm_emoji: realmEmoji, __individual: { type: 'realm_emoji', ...individual } }, await activeUserIds(tx.db, realmId));
  realmEmojiCache.invalidate(app.db);
  tx.afterCommit(() => realmEmojiCache.invalidate(app.db));
}

/**
 * Zulip's check_add_realm_emoji. The image files are written first under a
 * fresh random name; if the transaction fails (the name was taken
 * meanwhile, say), they are removed again.
 */
export async function checkAddRealmEmoji(app: AppCtx, author: Caller, name: string, images: EmojiImages): Promise<RealmEmojiRow> {
  const stem = randomBytes(8).toString('hex');
  const fileName = `${stem}.${images.ext}`;
  await writeEmojiFiles(app.config.dataDir, author.realmId, stem, images.ext, images.data, images.still);
  try {
    return await transact(app, async (tx) => {
      if (await activeRealmEmojiByName(tx.db, author.realmId, name)) throw emojiNameTaken();
      const id = await insertRealmEmoji(tx.db, {
        realm_id: author.realmId,
        name,
        author_id: author.id,
        file_name: fileName,
        is_animated: images.still ? 1 : 0,
      });
      const row: RealmEmojiRow = { id, realm_id: author.realmId, name, author_id: author.id, file_name: fileName, is_animated: images.still ? 1 : 0, deactivated: 0 };
      await notifyRealmEmoji(app, tx, author.realmId, { op: 'add', emoji: presentRealmEmoji(row) });
      return row;
    });
  } catch (err) {
    await removeEmojiFiles(app.config.dataDir, author.realmId, fileName);
    throw err;
  }
}

/**
 * DELETE /realm/emoji/{name}: deactivates the active emoji of that name
 * (Zulip's check_remove_custom_emoji + do_remove_realm_emoji). Organization
 * administrators may remove any; others only their own.
 */
export async function checkRemoveRealmEmoji(app: AppCtx, caller: Caller, name: string): Promise<void> {
  await transact(app, async (tx) => {
    const row = await activeRealmEmojiByName(tx.db, caller.realmId, name);
    if (!row) throw new JsonableError(`Emoji '${name}' does not exist`, { status: 404 });
    if (!isAdminRole(caller.role) && row.author_id !== caller.id) throw badRequest('Must be an organization administrator or emoji author');
    await deactivateRealmEmoji(tx.db, row.id);
    await notifyRealmEmoji(app, tx, caller.realmId, { op: 'update_one', emoji_id: String(row.id), data: { deactivated: true } });
  });
}

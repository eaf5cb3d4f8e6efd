import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { AppCtx, Tx } from '../context.js';
import type { AvatarImages } from '../rules/avatar-images.js';
import { removeAvatarFiles, writeAvatarFiles } from '../../store/avatar-files.js';
import type { UserRow } from '../../store/users.js';
import { notifyAvatarChange } from './users.js';

/**
 * Writes a new avatar's files under a fresh random stem, before the
 * transaction that points the user at them. If that transaction fails, call
 * discardAvatarFiles: nothing then remains on disk.
 */
export async function stageAvatarFiles(app: AppCtx, realmId: number, images: AvatarImages): Promise<string> {
  const stem = randomBytes(16).toString('hex');
  try {
    await writeAvatarFiles(app.config.dataDir, realmId, stem, images);
  } catch (err) {
    await removeAvatarFiles(app.config.dataDir, realmId, stem);
    throw err;
  }
  return stem;
}

export const discardAvatarFiles = (app: AppCtx, realmId: number, stem: string): Promise<void> =>
  removeAvatarFiles(app.config.dataDir, realmId, stem);

/**
 * Zulip's do_change_avatar_fields: sets avatar_source ('U' with the staged
 * stem, or 'G' for gravatar), bumps avatar_version, sends the avatar update
 * events, and once committed removes the previous upload's files.
 */
export async function doChangeAvatarFields(app: AppCtx, tx: Tx, user: UserRow, source: 'G' | 'U', stem: string | null): Promise<UserRow> {
  const before = await tx.db.selectFrom('users').select('avatar_file').where('id', '=', user.id).executeTakeFirstOrThrow();
  const row = await tx.db
    .updateTable('users')
    .set({ avatar_source: source, avatar_file: source === 'U' ? stem : null, avatar_version: sql<number>`avatar_version + 1` })
    .where('id', '=', user.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await notifyAvatarChange(tx, row);
  const old = before.avatar_file;
  if (old && old !== row.avatar_file) tx.afterCommit(() => removeAvatarFiles(app.config.dataDir, user.realm_id, old));
  return row;
}

/** Stages the files, runs the writing transaction, and cleans up if it fails. */
export async function withStagedAvatar<T>(app: AppCtx, realmId: number, images: AvatarImages | null, fn: (stem: string | null) => Promise<T>): Promise<T> {
  const stem = images ? await stageAvatarFiles(app, realmId, images) : null;
  try {
    return await fn(stem);
  } catch (err) {
    if (stem) await discardAvatarFiles(app, realmId, stem);
    throw err;
  }
}

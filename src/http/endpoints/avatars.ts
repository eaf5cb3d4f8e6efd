import { transact } from '../../domain/context.js';
import { doChangeAvatarFields, withStagedAvatar } from '../../domain/actions/avatars.js';
import { badRequest } from '../../domain/errors.js';
import { makeAvatarImages, MAX_AVATAR_FILE_SIZE_MIB } from '../../domain/rules/avatar-images.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { isAdminRole } from '../../domain/rules/users.js';
import { avatarUrl } from '../../presenters/user.js';
import { realmById } from '../../store/realms.js';
import type { UploadedFile } from '../endpoint.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import type { AppCtx } from '../../domain/context.js';

async function checkAvatarChangesAllowed(ctx: AuthedCtx): Promise<void> {
  const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
  if (realmSettings(realm.settings).avatar_changes_disabled && !isAdminRole(ctx.user.role)) {
    throw badRequest('Avatar changes are disabled in this organization.');
  }
}

/** Size limit, then content checks and resizing (BAD_IMAGE); nothing is written when either fails. */
export async function avatarImagesFromUpload(file: UploadedFile) {
  if (file.data.length > MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024) {
    throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_AVATAR_FILE_SIZE_MIB} MiB`);
  }
  return makeAvatarImages(file.data);
}

/** Points a user (or bot) at a freshly uploaded avatar, in one transaction; files are removed if it fails. */
export async function setUploadedAvatar(app: AppCtx, userId: number, realmId: number, file: UploadedFile) {
  const images = await avatarImagesFromUpload(file);
  return withStagedAvatar(app, realmId, images, (stem) =>
    transact(app, async (tx) => {
      const row = await tx.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
      return doChangeAvatarFields(app, tx, row, 'U', stem);
    }),
  );
}

export const setOwnAvatar = endpoint({
  method: 'POST',
  path: '/users/me/avatar',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    if (ctx.files.length !== 1) throw badRequest('You must upload exactly one avatar.');
    await checkAvatarChangesAllowed(ctx);
    const row = await setUploadedAvatar(ctx.app, ctx.user.id, ctx.user.realmId, ctx.files[0]!);
    return { avatar_url: avatarUrl(row) };
  },
});

export const deleteOwnAvatar = endpoint({
  method: 'DELETE',
  path: '/users/me/avatar',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    await checkAvatarChangesAllowed(ctx);
    const row = await transact(ctx.app, (tx) => doChangeAvatarFields(ctx.app, tx, ctx.userRow, 'G', null));
    return { avatar_url: avatarUrl(row) };
  },
});

import { allRealmEmoji } from '../../domain/access/realm-emoji.js';
import { checkAddRealmEmoji, checkRemoveRealmEmoji, emojiNameTaken } from '../../domain/actions/realm-emoji.js';
import { badRequest, insufficientPermission } from '../../domain/errors.js';
import { emojiCodeForName } from '../../domain/rules/emoji.js';
import { userHasRealmPermission } from '../../domain/rules/realm-group-settings.js';
import { checkValidEmojiName, makeEmojiImages, MAX_EMOJI_FILE_SIZE_MIB, normalizeEmojiName } from '../../domain/rules/realm-emoji.js';
import { isAdminRole } from '../../domain/rules/users.js';
import { presentRealmEmojiDict } from '../../presenters/realm-emoji.js';
import { activeRealmEmojiByName } from '../../store/realm-emoji.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { requireMemberOrAdmin } from './users.js';

/**
 * Custom emoji (Zulip's zerver/views/realm_emoji.py). The emoji name is the
 * rest of the path, slashes included, so that a name with a slash gets
 * Zulip's "invalid name" error rather than an unknown URL.
 */

/** The list is public to the realm, deactivated emoji included. */
export const listRealmEmoji = endpoint({
  method: 'GET',
  path: '/realm/emoji',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ emoji: presentRealmEmojiDict(await allRealmEmoji(ctx.app.db, ctx.user.realmId)) }),
});

export const uploadRealmEmoji = endpoint({
  method: 'POST',
  path: '/realm/emoji/*',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: { '*': p.pathStr() },
  handler: async (ctx, v) => {
    const name = normalizeEmojiName(v['*']);
    checkValidEmojiName(name);
    const db = ctx.app.db;
    if (!(await userHasRealmPermission(db, ctx.user.realmId, ctx.user.id, 'can_add_custom_emoji_group'))) throw insufficientPermission();
    if (await activeRealmEmojiByName(db, ctx.user.realmId, name)) throw emojiNameTaken();
    if (ctx.files.length !== 1) throw badRequest('You must upload exactly one file.');
    if (emojiCodeForName(name) !== undefined && !isAdminRole(ctx.user.role)) throw badRequest('Only administrators can override default emoji.');
    const file = ctx.files[0]!;
    if (file.data.length > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024) {
      throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_EMOJI_FILE_SIZE_MIB} MiB`);
    }
    const images = await makeEmojiImages(file.data);
    await checkAddRealmEmoji(ctx.app, ctx.user, name, images);
    return {};
  },
});

export const deleteRealmEmoji = endpoint({
  method: 'DELETE',
  path: '/realm/emoji/*',
  auth: 'user',
  params: { '*': p.pathStr() },
  handler: async (ctx, v) => {
    await checkRemoveRealmEmoji(ctx.app, ctx.user, v['*']);
    return {};
  },
});

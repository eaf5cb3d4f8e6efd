import { z } from 'zod';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { firstUnprintable } from '../../domain/rules/channels.js';
import { doCreateChannelFolder, doReorderChannelFolders, doUpdateChannelFolder, invalidFolderId } from '../../domain/actions/channel-folders.js';
import { presentChannelFolder } from '../../presenters/channel-folder.js';
import { activeFolderByName, channelCountInFolder, folderById, foldersInRealm } from '../../store/channel-extras.js';
import { requireAdmin } from './users.js';
import type { AuthedCtx } from '../endpoint.js';

/** Zulip's ChannelFolder limits. */
export const MAX_FOLDER_NAME_LENGTH = 60;
export const MAX_FOLDER_DESCRIPTION_LENGTH = 1024;

/** Zulip's check_channel_folder_name: not blank, printable, unique among non-archived folders (case-insensitive). */
async function checkFolderName(ctx: AuthedCtx, name: string, exceptId = -1): Promise<string> {
  const trimmed = name.trim();
  if (trimmed === '') throw badRequest("Channel folder name can't be empty.");
  const bad = firstUnprintable(trimmed);
  if (bad !== null) throw badRequest(`Invalid character in channel folder name, at position ${bad}.`);
  if (await activeFolderByName(ctx.app.db, ctx.user.realmId, trimmed, exceptId)) throw badRequest('Channel folder name already in use');
  return trimmed;
}

export const createChannelFolder = endpoint({
  method: 'POST',
  path: '/channel_folders/create',
  auth: 'user',
  guard: requireAdmin,
  params: {
    name: p.str(z.string().max(MAX_FOLDER_NAME_LENGTH)),
    description: p.str(z.string().max(MAX_FOLDER_DESCRIPTION_LENGTH)),
  },
  handler: async (ctx, { name, description }) => {
    const checked = await checkFolderName(ctx, name);
    const folder = await transact(ctx.app, (tx) => doCreateChannelFolder(ctx.app, tx, ctx.user.realmId, ctx.user.id, checked, description));
    return { channel_folder_id: folder.id };
  },
});

export const listChannelFolders = endpoint({
  method: 'GET',
  path: '/channel_folders',
  auth: 'user',
  params: { include_archived: p.bool().default(false) },
  handler: async (ctx, { include_archived }) => {
    const rows = await foldersInRealm(ctx.app.db, ctx.user.realmId);
    return { channel_folders: rows.filter((f) => include_archived || !f.is_archived).map(presentChannelFolder) };
  },
});

export const updateChannelFolder = endpoint({
  method: 'PATCH',
  path: '/channel_folders/:channel_folder_id',
  auth: 'user',
  guard: requireAdmin,
  params: {
    channel_folder_id: p.pathId(),
    name: p.str(z.string().max(MAX_FOLDER_NAME_LENGTH)).optional(),
    description: p.str(z.string().max(MAX_FOLDER_DESCRIPTION_LENGTH)).optional(),
    is_archived: p.bool().optional(),
  },
  handler: async (ctx, q) => {
    const folder = await folderById(ctx.app.db, ctx.user.realmId, q.channel_folder_id);
    if (!folder) throw invalidFolderId();
    const name = q.name === undefined || q.name === folder.name ? undefined : await checkFolderName(ctx, q.name, folder.id);
    if (q.is_archived === true && !folder.is_archived && (await channelCountInFolder(ctx.app.db, folder.id)) > 0) {
      throw badRequest('You need to remove all the channels from this folder to archive it.');
    }
    if (q.is_archived === false && folder.is_archived && name === undefined && (await activeFolderByName(ctx.app.db, ctx.user.realmId, folder.name, folder.id))) {
      throw badRequest('Channel folder name already in use');
    }
    await transact(ctx.app, (tx) => doUpdateChannelFolder(ctx.app, tx, folder, { name, description: q.description, isArchived: q.is_archived }));
    return {};
  },
});

export const reorderChannelFolders = endpoint({
  method: 'PATCH',
  path: '/channel_folders',
  auth: 'user',
  guard: requireAdmin,
  params: { order: p.idList() },
  handler: async (ctx, { order }) => {
    const rows = await foldersInRealm(ctx.app.db, ctx.user.realmId);
    const ids = new Set(rows.map((r) => r.id));
    if (order.length !== ids.size || new Set(order).size !== order.length || order.some((id) => !ids.has(id))) {
      throw badRequest('Invalid order mapping.');
    }
    await transact(ctx.app, (tx) => doReorderChannelFolders(tx, ctx.user.realmId, order));
    return {};
  },
});

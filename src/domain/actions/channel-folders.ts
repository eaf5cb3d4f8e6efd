import type { AppCtx, Tx } from '../context.js';
import { badRequest } from '../errors.js';
import { nowSeconds } from '../../store/db.js';
import { activeUserIds } from '../../store/users.js';
import { folderById, insertFolder, updateFolder, type ChannelFolderRow } from '../../store/channel-extras.js';
import { renderChannelDescription } from './channels.js';
import { presentChannelFolder } from '../../presenters/channel-folder.js';

/** Channel folders; every change goes to all active users of the realm (channel_folder events). */

export async function doCreateChannelFolder(app: AppCtx, tx: Tx, realmId: number, creatorId: number, name: string, description: string): Promise<ChannelFolderRow> {
  const rendered = await renderChannelDescription(app, tx.db, realmId, description);
  const id = await insertFolder(tx.db, {
    realm_id: realmId,
    name,
    name_lower: name.toLowerCase(),
    description,
    rendered_description: rendered,
    creator_id: creatorId,
    date_created: nowSeconds(),
    is_archived: 0,
    order: 0,
  });
  // Zulip: a new folder's order is its id.
  await updateFolder(tx.db, id, { order: id });
  const folder = (await folderById(tx.db, realmId, id))!;
  tx.emit(realmId, { type: 'channel_folder', op: 'add', channel_folder: presentChannelFolder(folder) }, await activeUserIds(tx.db, realmId));
  return folder;
}

export async function doUpdateChannelFolder(
  app: AppCtx,
  tx: Tx,
  folder: ChannelFolderRow,
  change: { name?: string; description?: string; isArchived?: boolean },
): Promise<void> {
  const realmId = folder.realm_id;
  const recipients = await activeUserIds(tx.db, realmId);
  const send = (data: Record<string, unknown>) =>
    tx.emit(realmId, { type: 'channel_folder', op: 'update', channel_folder_id: folder.id, data }, recipients);
  if (change.name !== undefined && change.name !== folder.name) {
    await updateFolder(tx.db, folder.id, { name: change.name, name_lower: change.name.toLowerCase() });
    send({ name: change.name });
  }
  if (change.description !== undefined && change.description !== folder.description) {
    const rendered = await renderChannelDescription(app, tx.db, realmId, change.description);
    await updateFolder(tx.db, folder.id, { description: change.description, rendered_description: rendered });
    send({ description: change.description, rendered_description: rendered });
  }
  if (change.isArchived !== undefined && change.isArchived !== (folder.is_archived === 1)) {
    await updateFolder(tx.db, folder.id, { is_archived: change.isArchived ? 1 : 0 });
    send({ is_archived: change.isArchived });
  }
}

export async function doReorderChannelFolders(tx: Tx, realmId: number, order: readonly number[]): Promise<void> {
  for (const [i, id] of order.entries()) await updateFolder(tx.db, id, { order: i });
  tx.emit(realmId, { type: 'channel_folder', op: 'reorder', order: [...order] }, await activeUserIds(tx.db, realmId));
}

export const invalidFolderId = () => badRequest('Invalid channel folder ID');

import type { AppCtx, Caller, Tx } from '../context.js';
import { transact } from '../context.js';
import { JsonableError } from '../errors.js';
import { accessOwnAttachment, canReadUpload } from '../access/attachments.js';
import { realmSettings } from '../rules/realm-settings.js';
import { flagList } from '../rules/message-flags.js';
import { nowSeconds } from '../../store/db.js';
import { realmById } from '../../store/realms.js';
import { userMessageRows } from '../../store/messages.js';
import {
  attachmentIdsOfMessage,
  attachmentsByPathIds,
  deleteAttachments,
  insertAttachment,
  linkedMessages,
  linkMessage,
  realmUploadSpaceUsed,
  unclaimedBefore,
  unlinkMessage,
  type AttachmentRow,
} from '../../store/attachments.js';
import { presentAttachment, type AttachmentObject } from '../../presenters/attachment.js';
import { parsePathId } from '../../files/names.js';
import { thumbnailKeysOf } from '../../files/thumbnails.js';
import type { FileStorage } from '../../files/storage.js';

/**
 * Uploads as attachments (Zulip's zerver/actions/uploads.py and
 * zerver/lib/attachments.py): the row for each upload, the messages that
 * link it (kept on send, edit and delete), the owner's `attachment` events
 *   {type:'attachment', op:'add'|'update', attachment:<to_dict>, upload_space_used}
 *   {type:'attachment', op:'remove', attachment:{id}, upload_space_used}
 * (upload_space_used is the realm's total, as Zulip sends it), and the
 * removal of uploads no message has linked for the grace period.
 */

export const quotaExceeded = (): JsonableError =>
  new JsonableError("Upload would exceed your organization's upload quota.", { code: 'REALM_UPLOAD_QUOTA' });

async function emitAttachment(tx: Tx, realmId: number, ownerId: number, op: 'add' | 'update' | 'remove', attachment: AttachmentObject | { id: number }): Promise<void> {
  const used = await realmUploadSpaceUsed(tx.db, realmId);
  tx.emit(realmId, { type: 'attachment', op, attachment, upload_space_used: used }, [ownerId]);
}

async function emitUpdates(tx: Tx, rows: readonly AttachmentRow[]): Promise<void> {
  if (rows.length === 0) return;
  const linked = await linkedMessages(tx.db, rows.map((r) => r.id));
  for (const r of rows) await emitAttachment(tx, r.realm_id, r.owner_id, 'update', presentAttachment(r, linked.get(r.id) ?? []));
}

export interface NewUpload {
  readonly pathId: string;
  readonly fileName: string;
  readonly size: number;
  readonly contentType: string;
  readonly image: { width: number; height: number; frames: number; thumbnail: boolean } | null;
}

/** Records a stored upload: quota check (Zulip's check_upload_within_quota), row, `add` event. */
export async function doCreateAttachment(tx: Tx, caller: Caller, u: NewUpload): Promise<AttachmentRow> {
  const realm = (await realmById(tx.db, caller.realmId))!;
  const quotaMib = realmSettings(realm.settings).upload_quota_mib;
  if (quotaMib !== null && quotaMib !== undefined) {
    const used = await realmUploadSpaceUsed(tx.db, caller.realmId);
    if (used + u.size > quotaMib * 1024 * 1024) throw quotaExceeded();
  }
  const row = await insertAttachment(tx.db, {
    realm_id: caller.realmId,
    owner_id: caller.id,
    path_id: u.pathId,
    file_name: u.fileName,
    size: u.size,
    content_type: u.contentType,
    create_time: nowSeconds(),
    is_realm_public: 0,
    image_width: u.image?.width ?? null,
    image_height: u.image?.height ?? null,
    image_frames: u.image?.frames ?? null,
    thumbnail_state: u.image ? (u.image.thumbnail ? 1 : 3) : 0,
  });
  await emitAttachment(tx, caller.realmId, caller.id, 'add', presentAttachment(row, []));
  return row;
}

/** Path ids of the uploads a rendered message links (hrefs relative or absolute to this realm). */
export function uploadPathIds(links: readonly string[], realmUrl: string): string[] {
  const out = new Set<string>();
  for (let href of links) {
    if (href.startsWith(realmUrl + '/')) href = href.slice(realmUrl.length);
    href = href.replace(/^\//, '').replace(/[?#].*$/s, '');
    if (!href.startsWith('user_uploads/')) continue;
    let rest = href.slice('user_uploads/'.length);
    try {
      rest = decodeURIComponent(rest);
    } catch {
      continue;
    }
    const parsed = parsePathId(rest);
    if (parsed) out.add(parsed.pathId);
  }
  return [...out];
}

/**
 * Links a message to the uploads it references (Zulip's do_claim_attachments):
 * the sender's own uploads, and others' uploads only if the sender may read
 * them already (so linking a guessed URL grants nobody anything). Owners get
 * an `update` event. Returns the attachments linked.
 */
export async function claimAttachments(tx: Tx, sender: Pick<Caller, 'id' | 'realmId' | 'role'>, messageId: number, pathIds: readonly string[], realmPublic: boolean): Promise<AttachmentRow[]> {
  if (pathIds.length === 0) return [];
  const found = await attachmentsByPathIds(tx.db, sender.realmId, pathIds);
  const claimed: AttachmentRow[] = [];
  for (const a of found) if (a.owner_id === sender.id || (await canReadUpload(tx.db, sender, a))) claimed.push(a);
  await linkMessage(tx.db, claimed.map((a) => a.id), messageId);
  const toPublic = claimed.filter((a) => realmPublic && !a.is_realm_public).map((a) => a.id);
  if (toPublic.length) await tx.db.updateTable('attachments').set({ is_realm_public: 1 }).where('id', 'in', toPublic).execute();
  await emitUpdates(tx, claimed);
  return claimed;
}

/**
 * After a content edit: unlink uploads the new content no longer references,
 * link new ones. Returns Zulip's detached_uploads: the editor's uploads that
 * this edit left linked to no message at all.
 */
export async function updateMessageAttachments(tx: Tx, editor: Pick<Caller, 'id' | 'realmId' | 'role'>, messageId: number, pathIds: readonly string[], realmPublic: boolean): Promise<AttachmentObject[]> {
  const current = await attachmentIdsOfMessage(tx.db, [messageId]);
  const wanted = new Set(pathIds);
  const currentRows = current.length
    ? await tx.db.selectFrom('attachments').selectAll().where('id', 'in', current.map((c) => c.attachment_id)).execute()
    : [];
  const removed = currentRows.filter((a) => !wanted.has(a.path_id));
  const have = new Set(currentRows.map((a) => a.path_id));
  await unlinkMessage(tx.db, removed.map((a) => a.id), messageId);
  await emitUpdates(tx, removed);
  await claimAttachments(tx, editor, messageId, pathIds.filter((p) => !have.has(p)), realmPublic);
  if (removed.length === 0) return [];
  const linked = await linkedMessages(tx.db, removed.map((a) => a.id));
  return removed.filter((a) => a.owner_id === editor.id && !linked.has(a.id)).map((a) => presentAttachment(a, []));
}

/** Before messages are deleted: unlink their uploads and tell the owners. */
export async function detachDeletedMessages(tx: Tx, messageIds: readonly number[]): Promise<void> {
  const links = await attachmentIdsOfMessage(tx.db, messageIds);
  if (links.length === 0) return;
  await tx.db.deleteFrom('attachment_messages').where('message_id', 'in', [...messageIds]).execute();
  const ids = [...new Set(links.map((l) => l.attachment_id))];
  await emitUpdates(tx, await tx.db.selectFrom('attachments').selectAll().where('id', 'in', ids).execute());
}

/** Storage keys of an upload: the file and its thumbnails. */
export const storageKeysOf = (a: Pick<AttachmentRow, 'path_id' | 'thumbnail_state'>): string[] => [a.path_id, ...(a.thumbnail_state === 2 ? thumbnailKeysOf(a.path_id) : [])];

/** DELETE /attachments/{id} (Zulip's do_delete_attachment): the row, the `remove` event, then the files. */
export async function doDeleteAttachment(app: AppCtx, storage: FileStorage, caller: Caller, id: number): Promise<void> {
  await transact(app, async (tx) => {
    const a = await accessOwnAttachment(tx.db, caller, id);
    const deleted = await deleteAttachments(tx.db, [a.id]);
    if (deleted.length === 0) return;
    await emitAttachment(tx, a.realm_id, a.owner_id, 'remove', { id: a.id });
    tx.afterCommit(() => removeFiles(app, storage, deleted));
  });
}

async function removeFiles(app: AppCtx, storage: FileStorage, rows: readonly AttachmentRow[]): Promise<void> {
  try {
    await storage.remove(rows.flatMap((r) => [r.path_id, ...thumbnailKeysOf(r.path_id)]));
  } catch (e) {
    // The row is gone, so nothing serves the file; a later sweep may retry. Never fail the request.
    app.log.warn({ err: (e as Error).message }, 'could not remove uploaded files');
  }
}

/**
 * Removes uploads that no message has linked for graceDays (Zulip's
 * delete_old_unclaimed_attachments). Safe to run in several processes at
 * once: each batch deletes with the "still unclaimed" condition inside the
 * DELETE, so a row is removed (and its event sent) by one process only, and
 * removing an already-removed file is not an error. Returns how many went.
 */
export async function cleanUnclaimedUploads(app: AppCtx, storage: FileStorage, graceDays: number, now = nowSeconds()): Promise<number> {
  const cutoff = now - graceDays * 86_400;
  let total = 0;
  for (;;) {
    const batch = await unclaimedBefore(app.db, cutoff, 200);
    if (batch.length === 0) return total;
    await transact(app, async (tx) => {
      const ids = batch.map((b) => b.id);
      const gone = await tx.db
        .deleteFrom('attachments')
        .where('id', 'in', ids)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('attachment_messages').select('message_id').whereRef('attachment_messages.attachment_id', '=', 'attachments.id'))))
        .returningAll()
        .execute();
      for (const a of gone) await emitAttachment(tx, a.realm_id, a.owner_id, 'remove', { id: a.id });
      total += gone.length;
      tx.afterCommit(() => removeFiles(app, storage, gone));
    });
    if (batch.length < 200) return total;
  }
}

/** Records a thumbnail's outcome and applies `replace` to the messages linking the upload. */
export async function doFinishThumbnail(app: AppCtx, a: AttachmentRow, replace: (html: string) => string, state: number): Promise<void> {
  await transact(app, async (tx) => {
    await tx.db.updateTable('attachments').set({ thumbnail_state: state }).where('id', '=', a.id).execute();
    const links = await tx.db.selectFrom('attachment_messages').select('message_id').where('attachment_id', '=', a.id).execute();
    await doRenderingOnlyUpdate(tx, links.map((l) => l.message_id), replace);
  });
}

/**
 * Changes the rendered form of messages without an edit (thumbnails ready,
 * link previews fetched): Zulip's do_update_embedded_data, an update_message
 * event with user_id null and rendering_only true to everyone with the message.
 */
export async function doRenderingOnlyUpdate(tx: Tx, messageIds: readonly number[], replace: (html: string) => string): Promise<void> {
  if (messageIds.length === 0) return;
  const messages = await tx.db.selectFrom('messages').select(['id', 'realm_id', 'content', 'rendered_content']).where('id', 'in', [...messageIds]).execute();
  for (const m of messages) {
    const html = replace(m.rendered_content);
    if (html === m.rendered_content) continue;
    const settings = realmSettings((await realmById(tx.db, m.realm_id))!.settings);
    await tx.db.updateTable('messages').set({ rendered_content: html }).where('id', '=', m.id).execute();
    const rows = await userMessageRows(tx.db, [m.id]);
    const flags: Record<string, string[]> = {};
    for (const um of rows) flags[um.user_id] = flagList(um.flags);
    const event = {
      type: 'update_message',
      user_id: null,
      edit_timestamp: nowSeconds(),
      message_id: m.id,
      message_ids: [m.id],
      content: m.content,
      rendered_content: html,
      rendering_only: true,
      __flags: flags,
      __empty_topic_name: settings.realm_empty_topic_display_name,
    };
    tx.emit(m.realm_id, event as never, rows.map((r) => r.user_id));
  }
}

/** GET /attachments: the caller's uploads with their messages, and the realm's space used. */
export async function listAttachments(app: AppCtx, caller: Caller): Promise<{ attachments: AttachmentObject[]; upload_space_used: number }> {
  const rows = await app.db.selectFrom('attachments').selectAll().where('owner_id', '=', caller.id).orderBy('id').execute();
  const linked = await linkedMessages(app.db, rows.map((r) => r.id));
  return {
    attachments: rows.map((r) => presentAttachment(r, linked.get(r.id) ?? [])),
    upload_space_used: await realmUploadSpaceUsed(app.db, caller.realmId),
  };
}

import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { AttachmentTable } from './attachments-schema.js';

type AnyDb = Db | TxDb;
export type AttachmentRow = Selectable<AttachmentTable>;

export const THUMBNAIL_NONE = 0;
export const THUMBNAIL_PENDING = 1;
export const THUMBNAIL_DONE = 2;
export const THUMBNAIL_FAILED = 3;

export async function insertAttachment(db: AnyDb, row: Omit<AttachmentRow, 'id'>): Promise<AttachmentRow> {
  return db.insertInto('attachments').values(row).returningAll().executeTakeFirstOrThrow();
}

export function attachmentById(db: AnyDb, id: number): Promise<AttachmentRow | undefined> {
  return db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirst();
}

export function attachmentByPathId(db: AnyDb, pathId: string): Promise<AttachmentRow | undefined> {
  return db.selectFrom('attachments').selectAll().where('path_id', '=', pathId).executeTakeFirst();
}

export async function attachmentsByPathIds(db: AnyDb, realmId: number, pathIds: readonly string[]): Promise<AttachmentRow[]> {
  if (pathIds.length === 0) return [];
  return db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).where('path_id', 'in', [...pathIds]).execute();
}

export function attachmentsOfOwner(db: AnyDb, ownerId: number): Promise<AttachmentRow[]> {
  return db.selectFrom('attachments').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute();
}

/** Message ids and send times linked to each attachment, oldest first. */
export async function linkedMessages(db: AnyDb, attachmentIds: readonly number[]): Promise<Map<number, { id: number; date_sent: number }[]>> {
  const out = new Map<number, { id: number; date_sent: number }[]>();
  if (attachmentIds.length === 0) return out;
  const rows = await db
    .selectFrom('attachment_messages')
    .innerJoin('messages', 'messages.id', 'attachment_messages.message_id')
    .select(['attachment_messages.attachment_id', 'messages.id', 'messages.date_sent'])
    .where('attachment_messages.attachment_id', 'in', [...attachmentIds])
    .orderBy('messages.id')
    .execute();
  for (const r of rows) {
    if (!out.has(r.attachment_id)) out.set(r.attachment_id, []);
    out.get(r.attachment_id)!.push({ id: r.id, date_sent: r.date_sent });
  }
  return out;
}

/** Bytes used by the realm's uploads (Zulip's currently_used_upload_space_bytes). */
export async function realmUploadSpaceUsed(db: AnyDb, realmId: number): Promise<number> {
  const r = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('used'))
    .where('realm_id', '=', realmId)
    .executeTakeFirst();
  return Number(r?.used ?? 0);
}

export async function attachmentIdsOfMessage(db: AnyDb, messageIds: readonly number[]): Promise<{ attachment_id: number; message_id: number }[]> {
  if (messageIds.length === 0) return [];
  return db.selectFrom('attachment_messages').select(['attachment_id', 'message_id']).where('message_id', 'in', [...messageIds]).execute();
}

export async function linkMessage(db: AnyDb, attachmentIds: readonly number[], messageId: number): Promise<void> {
  if (attachmentIds.length === 0) return;
  await db
    .insertInto('attachment_messages')
    .values(attachmentIds.map((attachment_id) => ({ attachment_id, message_id: messageId })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function unlinkMessage(db: AnyDb, attachmentIds: readonly number[], messageId: number): Promise<void> {
  if (attachmentIds.length === 0) return;
  await db.deleteFrom('attachment_messages').where('message_id', '=', messageId).where('attachment_id', 'in', [...attachmentIds]).execute();
}

export async function unlinkMessages(db: AnyDb, messageIds: readonly number[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.deleteFrom('attachment_messages').where('message_id', 'in', [...messageIds]).execute();
}

/** Deletes attachment rows, returning those actually deleted (so concurrent cleaners never double-count). */
export async function deleteAttachments(db: AnyDb, ids: readonly number[]): Promise<AttachmentRow[]> {
  if (ids.length === 0) return [];
  await db.deleteFrom('attachment_messages').where('attachment_id', 'in', [...ids]).execute();
  return db.deleteFrom('attachments').where('id', 'in', [...ids]).returningAll().execute();
}

/** Uploads older than the cutoff that no message links. */
export function unclaimedBefore(db: AnyDb, cutoffSeconds: number, limit: number): Promise<AttachmentRow[]> {
  return db
    .selectFrom('attachments')
    .selectAll()
    .where('create_time', '<', cutoffSeconds)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('attachment_messages').select('message_id').whereRef('attachment_messages.attachment_id', '=', 'attachments.id'))))
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function setImageFacts(db: AnyDb, id: number, facts: { image_width: number | null; image_height: number | null; image_frames: number | null; thumbnail_state: number }): Promise<void> {
  await db.updateTable('attachments').set(facts).where('id', '=', id).execute();
}

/** The file-signing secret, created once (whichever process gets there first wins). */
export async function fileSecret(db: AnyDb, name: string, fresh: string): Promise<string> {
  await db.insertInto('file_secrets').values({ name, value: fresh }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const r = await db.selectFrom('file_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return r.value;
}

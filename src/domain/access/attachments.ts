import type { Db } from '../../store/db.js';
import type { Caller, TxDb } from '../context.js';
import { badRequest, type JsonableError } from '../errors.js';
import { attachmentById, type AttachmentRow } from '../../store/attachments.js';
import { bulkAccessible } from './messages.js';
import type { MessageRow } from '../../store/messages.js';

type AnyDb = Db | TxDb;

/**
 * Who may read an uploaded file, decided here and nowhere else (Zulip's
 * validate_attachment_request): its uploader, and anyone who may read at
 * least one message that links it (the message access rules: public
 * channel history for non-guests, subscriptions and protected history,
 * direct-message participants). Anyone else is answered exactly as for a
 * file that does not exist. Zulip answers 403 for "exists but not yours";
 * we give the missing-file answer so a URL never confirms a file exists.
 */
export async function canReadUpload(db: AnyDb, caller: Pick<Caller, 'id' | 'realmId' | 'role'>, a: AttachmentRow): Promise<boolean> {
  if (a.realm_id !== caller.realmId) return false;
  if (a.owner_id === caller.id) return true;
  const links = await db.selectFrom('attachment_messages').select('message_id').where('attachment_id', '=', a.id).execute();
  if (links.length === 0) return false;
  const ids = links.map((l) => l.message_id);
  const messages = (await db.selectFrom('messages').selectAll().where('id', 'in', ids).execute()) as MessageRow[];
  const rows = await db.selectFrom('user_messages').select('message_id').where('user_id', '=', caller.id).where('message_id', 'in', ids).execute();
  const readable = await bulkAccessible(db, caller, messages, new Set(rows.map((r) => r.message_id)));
  return readable.length > 0;
}

export const invalidAttachment = (): JsonableError => badRequest('Invalid attachment');

/** An attachment the caller owns (Zulip's access_attachment_by_id with needs_owner), else "Invalid attachment". */
export async function accessOwnAttachment(db: AnyDb, caller: Pick<Caller, 'id' | 'realmId'>, id: number): Promise<AttachmentRow> {
  const a = await attachmentById(db, id);
  if (!a || a.owner_id !== caller.id || a.realm_id !== caller.realmId) throw invalidAttachment();
  return a;
}

import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/** Records that these users changed this setting themselves (idempotent). */
export async function markSelfEdited(db: AnyDb, userId: number, settings: readonly string[]): Promise<void> {
  if (settings.length === 0) return;
  await db
    .insertInto('user_setting_self_edits')
    .values(settings.map((setting) => ({ user_id: userId, setting })))
    .onConflict((oc) => oc.columns(['user_id', 'setting']).doNothing())
    .execute();
}

/** Of these users, the ones who changed the setting themselves. */
export async function selfEditedUserIds(db: AnyDb, userIds: readonly number[], setting: string): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('user_setting_self_edits')
    .select('user_id')
    .where('setting', '=', setting)
    .where('user_id', 'in', [...userIds])
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

export interface EmailChangeRow {
  id: number;
  realm_id: number;
  user_id: number;
  old_email: string;
  new_email: string;
  key_hash: string;
  created_at: number;
  status: number;
}

export const EMAIL_CHANGE_PENDING = 0;
export const EMAIL_CHANGE_USED = 1;
export const EMAIL_CHANGE_REVOKED = 2;

/** A new pending request; earlier pending requests of the user are revoked. */
export async function insertEmailChange(db: AnyDb, row: Omit<EmailChangeRow, 'id' | 'status'>): Promise<void> {
  await db
    .updateTable('email_change_requests')
    .set({ status: EMAIL_CHANGE_REVOKED })
    .where('user_id', '=', row.user_id)
    .where('status', '=', EMAIL_CHANGE_PENDING)
    .execute();
  await db.insertInto('email_change_requests').values({ ...row, status: EMAIL_CHANGE_PENDING }).execute();
}

export function emailChangeByKeyHash(db: AnyDb, keyHash: string): Promise<EmailChangeRow | undefined> {
  return db.selectFrom('email_change_requests').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Marks a pending request used; false when it was no longer pending (a concurrent confirmation won). */
export async function claimEmailChange(db: AnyDb, id: number): Promise<boolean> {
  const r = await db
    .updateTable('email_change_requests')
    .set({ status: EMAIL_CHANGE_USED })
    .where('id', '=', id)
    .where('status', '=', EMAIL_CHANGE_PENDING)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

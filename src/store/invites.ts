import type { Insertable, Selectable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { ConfirmationTable, InviteTable } from './join-schema.js';

export type InviteRow = Selectable<InviteTable>;
export type ConfirmationRow = Selectable<ConfirmationTable>;
type AnyDb = Db | TxDb;

export const INVITE_PENDING = 0;
export const INVITE_USED = 1;
export const INVITE_REVOKED = 2;

export async function insertInvite(db: AnyDb, row: Insertable<InviteTable>): Promise<number> {
  const r = await db.insertInto('invites').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export function inviteById(db: AnyDb, realmId: number, id: number): Promise<InviteRow | undefined> {
  return db.selectFrom('invites').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

export function inviteByKeyHash(db: AnyDb, keyHash: string): Promise<InviteRow | undefined> {
  return db.selectFrom('invites').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Pending, unexpired invitations of a realm (optionally of one referrer), oldest first. */
export function validInvites(db: AnyDb, realmId: number, now: number, referrerId?: number): Promise<InviteRow[]> {
  let q = db
    .selectFrom('invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('status', '=', INVITE_PENDING)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  if (referrerId !== undefined) q = q.where('referrer_id', '=', referrerId);
  return q.orderBy('id').execute();
}

export async function setInviteStatus(db: AnyDb, id: number, status: number): Promise<void> {
  await db.updateTable('invites').set({ status }).where('id', '=', id).execute();
}

/** Marks the pending emailed invitations of an address used or revoked once someone joins with it. */
export async function closeInvitesForEmail(db: AnyDb, realmId: number, emailLower: string, exceptId: number | null): Promise<void> {
  let q = db.updateTable('invites').set({ status: INVITE_REVOKED }).where('realm_id', '=', realmId).where('status', '=', INVITE_PENDING).where('is_multiuse', '=', 0);
  q = q.where((eb) => eb(eb.fn('lower', ['email']), '=', emailLower));
  if (exceptId !== null) q = q.where('id', '!=', exceptId);
  await q.execute();
}

export async function insertConfirmation(db: AnyDb, row: Insertable<ConfirmationTable>): Promise<void> {
  await db.insertInto('confirmations').values(row).execute();
}

export function confirmationByKeyHash(db: AnyDb, kind: string, keyHash: string): Promise<ConfirmationRow | undefined> {
  return db.selectFrom('confirmations').selectAll().where('kind', '=', kind).where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Claims an unused confirmation once (false if another request used it first). */
export async function claimConfirmation(db: AnyDb, id: number): Promise<boolean> {
  const r = await db.updateTable('confirmations').set({ used: 1 }).where('id', '=', id).where('used', '=', 0).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

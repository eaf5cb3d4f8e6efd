import { prepared } from './prepared.js';
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from './db.js';
import { dialectOf } from './migrations/helpers.js';
import type { TxDb } from '../domain/context.js';
import type { ScheduledMessageTable } from './scheduled-messages-schema.js';

type AnyDb = Db | TxDb;
export type ScheduledMessageRow = Selectable<ScheduledMessageTable>;

/**
 * One row of this user and kind, delivered or not (Zulip's
 * access_scheduled_message / access_reminder); someone else's is "not
 * found", like a missing one. `forUpdate` locks it (PostgreSQL) against a
 * concurrent delivery.
 */
export async function rowOfUser(db: AnyDb, userId: number, deliveryType: number, id: number, forUpdate = false): Promise<ScheduledMessageRow | undefined> {
  if (id > 2_147_483_647) return undefined;
  let q = db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).where('sender_id', '=', userId).where('delivery_type', '=', deliveryType);
  if (forUpdate && dialectOf(db) === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Zulip's get_undelivered_scheduled_messages / get_undelivered_reminders_for_user: by due time, then id. */
export function pendingOfUserList(db: AnyDb, userId: number, deliveryType: number): Promise<ScheduledMessageRow[]> {
  return db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('sender_id', '=', userId)
    .where('delivery_type', '=', deliveryType)
    .where('delivered', '=', 0)
    .orderBy('scheduled_timestamp')
    .orderBy('id')
    .execute();
}

/** Every undelivered row of the user, both kinds, in the same order (for /register). */
const pendingAllQuery = prepared(1, (db, userId: number) =>
  db.selectFrom('scheduled_messages').selectAll().where('sender_id', '=', userId).where('delivered', '=', 0).orderBy('scheduled_timestamp').orderBy('id'),
);
export function pendingOfUserAll(db: AnyDb, userId: number): Promise<ScheduledMessageRow[]> {
  return pendingAllQuery(db, userId);
}

export async function insertScheduled(db: AnyDb, row: Insertable<ScheduledMessageTable>): Promise<ScheduledMessageRow> {
  return db.insertInto('scheduled_messages').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateScheduled(db: AnyDb, id: number, values: Updateable<ScheduledMessageTable>): Promise<void> {
  await db.updateTable('scheduled_messages').set(values).where('id', '=', id).execute();
}

export async function deleteScheduled(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('scheduled_messages').where('id', '=', id).execute();
}

export function scheduledById(db: AnyDb, id: number): Promise<ScheduledMessageRow | undefined> {
  return db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * When the scheduler should look next (unix seconds; null: nothing pending):
 * the earliest unclaimed due time, or the end of a lease another process
 * holds (if it dies, the row is free again then).
 */
export async function nextDueTimestamp(db: AnyDb, now: number): Promise<number | null> {
  const r = await db
    .selectFrom('scheduled_messages')
    .select((eb) => [
      eb.fn.min(eb.case().when(eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)])).then(eb.ref('scheduled_timestamp')).end()).as('free'),
      eb.fn.min(eb.case().when('claimed_until', '>=', now).then(eb.ref('claimed_until')).end()).as('lease'),
    ])
    .where('delivered', '=', 0)
    .where('failed', '=', 0)
    .executeTakeFirst();
  const times = [r?.free, r?.lease].filter((t) => t !== null && t !== undefined).map(Number);
  return times.length ? Math.min(...times) : null;
}

/**
 * Claims up to `limit` due rows for `leaseSec` seconds. PostgreSQL: the rows
 * are locked with FOR UPDATE SKIP LOCKED in one transaction, so processes
 * scanning at the same moment take disjoint rows without waiting; the lease
 * is written before the locks are released. SQLite (one process per
 * database): a conditional UPDATE per row is the claim.
 */
export async function claimDue(db: Db, dialect: 'sqlite' | 'postgres', now: number, leaseSec: number, limit: number): Promise<ScheduledMessageRow[]> {
  const due = (q: any) =>
    q
      .where('delivered', '=', 0)
      .where('failed', '=', 0)
      .where('scheduled_timestamp', '<=', now)
      .where((eb: any) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]));
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      const rows: { id: number }[] = await due(trx.selectFrom('scheduled_messages').select('id'))
        .orderBy('scheduled_timestamp')
        .orderBy('id')
        .limit(limit)
        .modifyEnd(sql`for update skip locked`)
        .execute();
      if (rows.length === 0) return [];
      return trx
        .updateTable('scheduled_messages')
        .set({ claimed_until: now + leaseSec })
        .where('id', 'in', rows.map((r) => r.id))
        .returningAll()
        .execute();
    });
  }
  const candidates: { id: number }[] = await due(db.selectFrom('scheduled_messages').select('id')).orderBy('scheduled_timestamp').orderBy('id').limit(limit).execute();
  const claimed: ScheduledMessageRow[] = [];
  for (const c of candidates) {
    const row = await due(db.updateTable('scheduled_messages').set({ claimed_until: now + leaseSec }).where('id', '=', c.id)).returningAll().executeTakeFirst();
    if (row) claimed.push(row);
  }
  return claimed.sort((a, b) => a.scheduled_timestamp - b.scheduled_timestamp || a.id - b.id);
}

/**
 * The once-only step, run in the transaction that stores the delivered (or
 * failure-notice) message: flips the row from pending to `values`. On
 * PostgreSQL a concurrent attempt waits for the row lock and then sees
 * delivered/failed already set, so it updates nothing and must roll back.
 */
export async function settlePending(db: AnyDb, id: number, values: Updateable<ScheduledMessageTable>): Promise<boolean> {
  const r = await db.updateTable('scheduled_messages').set(values).where('id', '=', id).where('delivered', '=', 0).where('failed', '=', 0).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

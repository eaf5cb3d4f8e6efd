import { sql, type Selectable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { BotServiceTable, OutgoingWebhookJobTable } from './schema.js';

type AnyDb = Db | TxDb;
export type BotServiceRow = Selectable<BotServiceTable>;
export type OutgoingWebhookJobRow = Selectable<OutgoingWebhookJobTable>;

export async function insertBotService(db: AnyDb, row: Omit<BotServiceRow, 'id'>): Promise<void> {
  await db.insertInto('bot_services').values(row).execute();
}

/** Services of these bots (Zulip's get_service_dicts_for_bots reads them in one query). */
export async function servicesOfBots(db: AnyDb, botIds: readonly number[]): Promise<Map<number, BotServiceRow[]>> {
  const out = new Map<number, BotServiceRow[]>();
  if (botIds.length === 0) return out;
  const rows = await db.selectFrom('bot_services').selectAll().where('user_id', 'in', [...new Set(botIds)]).orderBy('id').execute();
  for (const r of rows) {
    const list = out.get(r.user_id);
    if (list) list.push(r);
    else out.set(r.user_id, [r]);
  }
  return out;
}

export async function updateBotService(db: AnyDb, id: number, values: { base_url: string; interface: number }): Promise<void> {
  await db.updateTable('bot_services').set(values).where('id', '=', id).execute();
}

export async function insertWebhookJobs(db: AnyDb, rows: readonly Omit<OutgoingWebhookJobRow, 'id'>[]): Promise<void> {
  if (rows.length) await db.insertInto('outgoing_webhook_jobs').values([...rows]).execute();
}

/** Earliest due time (unix seconds) of a job nobody holds a live claim on. */
export async function nextWebhookDue(db: Db, now: number): Promise<number | null> {
  const r = await db
    .selectFrom('outgoing_webhook_jobs')
    .select((eb) => eb.fn.min('due_at').as('t'))
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .executeTakeFirst();
  return r?.t === null || r?.t === undefined ? null : Number(r.t);
}

/**
 * Claims due jobs for `leaseSec` (the scheduled-messages pattern): FOR UPDATE
 * SKIP LOCKED on PostgreSQL, one conditional UPDATE per candidate on SQLite,
 * so two processes never hold the same job at once.
 */
export async function claimDueWebhookJobs(db: Db, dialect: 'sqlite' | 'postgres', now: number, leaseSec: number, limit: number): Promise<OutgoingWebhookJobRow[]> {
  const due = (q: any) => q.where('due_at', '<=', now).where((eb: any) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]));
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      const rows: { id: number }[] = await due(trx.selectFrom('outgoing_webhook_jobs').select('id'))
        .orderBy('due_at')
        .orderBy('id')
        .limit(limit)
        .modifyEnd(sql`for update skip locked`)
        .execute();
      if (rows.length === 0) return [];
      const claimed = await trx
        .updateTable('outgoing_webhook_jobs')
        .set({ claimed_until: now + leaseSec })
        .where('id', 'in', rows.map((r) => r.id))
        .returningAll()
        .execute();
      return claimed.sort((a, b) => a.id - b.id);
    });
  }
  const candidates: { id: number }[] = await due(db.selectFrom('outgoing_webhook_jobs').select('id')).orderBy('due_at').orderBy('id').limit(limit).execute();
  const claimed: OutgoingWebhookJobRow[] = [];
  for (const c of candidates) {
    const row = await due(db.updateTable('outgoing_webhook_jobs').set({ claimed_until: now + leaseSec }).where('id', '=', c.id)).returningAll().executeTakeFirst();
    if (row) claimed.push(row);
  }
  return claimed;
}

/**
 * The once-only step: removes a job this process claimed (`claimedUntil` is
 * the lease it got). False when the job is gone or was claimed again by
 * another process after our lease ran out; the caller then rolls back.
 */
export async function settleWebhookJob(db: AnyDb, id: number, claimedUntil: number | null): Promise<boolean> {
  let q = db.deleteFrom('outgoing_webhook_jobs').where('id', '=', id);
  q = claimedUntil === null ? q.where('claimed_until', 'is', null) : q.where('claimed_until', '=', claimedUntil);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Puts a job back in the queue for another try (Zulip's retry_event re-publishes it at once). */
export async function retryWebhookJob(db: AnyDb, id: number, claimedUntil: number | null, failedTries: number, dueAt: number): Promise<boolean> {
  let q = db.updateTable('outgoing_webhook_jobs').set({ failed_tries: failedTries, due_at: dueAt, claimed_until: null }).where('id', '=', id);
  q = claimedUntil === null ? q.where('claimed_until', 'is', null) : q.where('claimed_until', '=', claimedUntil);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

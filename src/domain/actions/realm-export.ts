import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { AppCtx, Caller, Tx, TxDb } from '../context.js';
import { transact } from '../context.js';
import { badRequest } from '../errors.js';
import type { Db } from '../../store/db.js';
import { nowSeconds } from '../../store/db.js';
import { humanAdminIds } from '../../store/bots.js';
import { isStorableId } from '../../store/channels.js';
import { realmUrl } from '../../config.js';
import { tarChunks } from '../../files/tar.js';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { buildRealmExport } from '../export/export-realm.js';
import { STATUS_DELETED, STATUS_FAILED, STATUS_REQUESTED, STATUS_STARTED, STATUS_SUCCEEDED } from '../export/format.js';
import type { JobSource } from '../../jobs/scheduler.js';
import type { RealmExportTable } from '../../store/schema.js';
import type { Selectable } from 'kysely';
import { userSettings } from '../rules/user-settings.js';

/**
 * Organization data exports (Zulip's zerver/views/realm_export.py and
 * zerver/actions/realm_export.py, RealmExport model):
 *   POST /export/realm {export_type: 1 public | 2 full with consent} -> {id}
 *   GET /export/realm -> {exports: [...]}, DELETE /export/realm/{export_id}
 * Administrators only (require_realm_admin). At most 5 exports requested in
 * 7 days ("Exceeded rate limit."). Every change sends the whole list to the
 * realm's human administrators:
 *   {type: 'realm_export', exports: [{id, export_time, acting_user_id,
 *    export_url, deleted_timestamp, failed_timestamp, pending, export_type}]}
 * The export itself runs as a job (RealmExportJobs), never in the request.
 */

export type RealmExportRow = Selectable<RealmExportTable>;

export const EXPORT_LIMIT = 5;
const EXPORT_WINDOW_SECONDS = 7 * 24 * 3600;

export function presentExport(app: AppCtx, row: RealmExportRow): Record<string, unknown> {
  return {
    id: row.id,
    export_time: Number(row.date_requested),
    acting_user_id: row.acting_user_id,
    export_url: row.status === STATUS_SUCCEEDED && row.export_path ? `${realmUrl(app.config)}/user_uploads/${row.export_path}` : null,
    deleted_timestamp: row.date_deleted === null ? null : Number(row.date_deleted),
    failed_timestamp: row.date_failed === null ? null : Number(row.date_failed),
    pending: row.status === STATUS_REQUESTED || row.status === STATUS_STARTED,
    export_type: row.type,
  };
}

export async function realmExports(app: AppCtx, db: Db | TxDb, realmId: number): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom('realm_exports').selectAll().where('realm_id', '=', realmId).where('acting_user_id', 'is not', null).orderBy('id').execute();
  return rows.map((r) => presentExport(app, r));
}

async function notifyRealmExport(app: AppCtx, tx: Tx, realmId: number): Promise<void> {
  tx.emit(realmId, { type: 'realm_export', exports: await realmExports(app, tx.db, realmId) }, await humanAdminIds(tx.db, realmId));
}

export async function doRequestRealmExport(app: AppCtx, caller: Caller, exportType: number): Promise<number> {
  const now = nowSeconds();
  const id = await transact(app, async (tx) => {
    const recent = await tx.db
      .selectFrom('realm_exports')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('realm_id', '=', caller.realmId)
      .where('date_requested', '>=', now - EXPORT_WINDOW_SECONDS)
      .executeTakeFirstOrThrow();
    if (Number(recent.n) >= EXPORT_LIMIT) throw badRequest('Exceeded rate limit.');
    const row = await tx.db
      .insertInto('realm_exports')
      .values({ realm_id: caller.realmId, acting_user_id: caller.id, type: exportType, status: STATUS_REQUESTED, date_requested: now, date_started: null, date_succeeded: null, date_failed: null, date_deleted: null, export_path: null, tarball_size_bytes: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    await notifyRealmExport(app, tx, caller.realmId);
    return row.id;
  });
  app.jobs?.wake();
  return id;
}

export async function doDeleteRealmExport(app: AppCtx, caller: Caller, exportId: number): Promise<void> {
  let path: string | null = null;
  await transact(app, async (tx) => {
    // An id beyond the column's range names nothing (PostgreSQL would refuse the comparison).
    const row = isStorableId(exportId) ? await tx.db.selectFrom('realm_exports').selectAll().where('id', '=', exportId).where('realm_id', '=', caller.realmId).executeTakeFirst() : undefined;
    if (!row) throw badRequest('Invalid data export ID');
    if (row.status === STATUS_DELETED) throw badRequest('Export already deleted');
    if (row.status === STATUS_FAILED) throw badRequest('Export failed, nothing to delete');
    if (row.status === STATUS_REQUESTED || row.status === STATUS_STARTED) throw badRequest('Export still in progress');
    path = row.export_path;
    await tx.db.updateTable('realm_exports').set({ status: STATUS_DELETED, date_deleted: nowSeconds() }).where('id', '=', row.id).execute();
    await notifyRealmExport(app, tx, caller.realmId);
  });
  // The row says "deleted" first: a failure removing the file leaves an unreachable file, never a broken link.
  if (path) await app.files.storage.remove([path]);
}

/** Runs one claimed export to the end: the tarball into storage, then the row (and the event) in one transaction. */
async function runExport(app: AppCtx, row: RealmExportRow): Promise<void> {
  const token = randomBytes(12).toString('base64url');
  const dirName = `zulip-export-${randomBytes(4).toString('hex')}`;
  const key = `exports/${row.realm_id}/${randomBytes(1).toString('hex')}/${token}/${dirName}.tar.gz`;
  let tmp: string | undefined;
  try {
    const { entries } = await buildRealmExport(app, row.realm_id, row.type, dirName);
    // Uploads stream from storage through gzip into a temporary file, then into storage.
    await fs.mkdir(path.join(app.config.dataDir, 'tmp'), { recursive: true });
    tmp = path.join(app.config.dataDir, 'tmp', `${dirName}.tar.gz.part`);
    await pipeline(Readable.from(tarChunks(entries)), createGzip(), createWriteStream(tmp));
    const size = (await fs.stat(tmp)).size;
    await app.files.storage.put(key, createReadStream(tmp), size, 'application/gzip');
    await transact(app, async (tx) => {
      await tx.db.updateTable('realm_exports').set({ status: STATUS_SUCCEEDED, date_succeeded: nowSeconds(), export_path: key, tarball_size_bytes: size }).where('id', '=', row.id).execute();
      await notifyRealmExport(app, tx, row.realm_id);
    });
  } catch (err) {
    app.log.error({ err, exportId: row.id }, 'organization export failed');
    await app.files.storage.remove([key]).catch(() => undefined);
    await transact(app, async (tx) => {
      await tx.db.updateTable('realm_exports').set({ status: STATUS_FAILED, date_failed: nowSeconds() }).where('id', '=', row.id).execute();
      await notifyRealmExport(app, tx, row.realm_id);
    });
  } finally {
    if (tmp) await fs.rm(tmp, { force: true });
  }
}

/**
 * The export job: requested rows are claimed with a conditional UPDATE
 * (requested -> started), so each runs once across processes. A row left
 * "started" by a process that died stays pending (as in Zulip, where the
 * deferred_work queue would retry it); an administrator can request again.
 */
export class RealmExportJobs implements JobSource {
  readonly name = 'realm-exports';
  constructor(private readonly app: AppCtx) {}

  async nextDueAt(): Promise<number | null> {
    const row = await this.app.db.selectFrom('realm_exports').select('id').where('status', '=', STATUS_REQUESTED).limit(1).executeTakeFirst();
    return row ? Date.now() : null;
  }

  async runDue(): Promise<number> {
    let ran = 0;
    for (;;) {
      const next = await this.app.db.selectFrom('realm_exports').selectAll().where('status', '=', STATUS_REQUESTED).orderBy('id').limit(1).executeTakeFirst();
      if (!next) return ran;
      const claimed = await this.app.db.updateTable('realm_exports').set({ status: STATUS_STARTED, date_started: nowSeconds() }).where('id', '=', next.id).where('status', '=', STATUS_REQUESTED).executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) continue;
      await runExport(this.app, { ...next, status: STATUS_STARTED });
      ran++;
    }
  }
}

/** GET /export/realm/consents: active human users' allow_private_data_export (and, since feature level 430, email_address_visibility). */
export async function exportConsents(db: Db, realmId: number): Promise<{ user_id: number; consented: boolean; email_address_visibility: number }[]> {
  const rows = await db.selectFrom('users').select(['id', 'settings']).where('realm_id', '=', realmId).where('is_active', '=', 1).where('is_bot', '=', 0).orderBy('id').execute();
  return rows.map((r) => {
    const s = userSettings(r.settings);
    return { user_id: r.id, consented: s.allow_private_data_export === true, email_address_visibility: Number(s.email_address_visibility) };
  });
}

/** A finished (not deleted) export of this realm stored under this key. */
export function realmExportByPath(db: Db, realmId: number, key: string): Promise<RealmExportRow | undefined> {
  return db.selectFrom('realm_exports').selectAll().where('realm_id', '=', realmId).where('export_path', '=', key).where('status', '=', STATUS_SUCCEEDED).executeTakeFirst();
}

import { sql } from 'kysely';
import { prepared } from './prepared.js';
import { dialectOf } from './migrations/helpers.js';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/** Queries of client devices and legacy push tokens; no rules, no events. */

export async function insertClientDevice(db: AnyDb, userId: number, now: number): Promise<number> {
  const row = await db.insertInto('client_devices').values({ user_id: userId, created_at: now }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Deletes the user's device; false when the user has no such device. */
export async function deleteClientDevice(db: AnyDb, userId: number, deviceId: number): Promise<boolean> {
  const res = await db.deleteFrom('client_devices').where('id', '=', deviceId).where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

const deviceIdsQuery = prepared(1, (db, userId: number) => db.selectFrom('client_devices').select('id').where('user_id', '=', userId).orderBy('id'));
export async function clientDeviceIdsOfUser(db: AnyDb, userId: number): Promise<number[]> {
  const rows = await deviceIdsQuery(db, userId);
  return rows.map((r) => r.id);
}

/**
 * Adds or refreshes a legacy push token (Zulip's add_push_device_token). On
 * PostgreSQL the unique index hashes the token (migration 1700), and the
 * conflict target must name that expression.
 */
export async function upsertPushToken(db: AnyDb, userId: number, kind: number, token: string, iosAppId: string | null, now: number): Promise<void> {
  const postgres = dialectOf(db as never) === 'postgres';
  await db
    .insertInto('push_device_tokens')
    .values({ user_id: userId, kind, token, ios_app_id: iosAppId, last_updated: now })
    .onConflict((oc) =>
      (postgres ? oc.expression(sql`user_id, kind, md5(token)`) : oc.columns(['user_id', 'kind', 'token'])).doUpdateSet({ last_updated: now, ios_app_id: iosAppId }),
    )
    .execute();
}

/** Deletes a legacy push token; false when the user had none such. */
export async function deletePushToken(db: AnyDb, userId: number, kind: number, token: string): Promise<boolean> {
  const res = await db.deleteFrom('push_device_tokens').where('user_id', '=', userId).where('kind', '=', kind).where('token', '=', token).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

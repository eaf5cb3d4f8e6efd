import { prepared } from './prepared.js';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/** Queries of muted users (Zulip's MutedUser); no rules, no events. */

export interface MutedUserItem {
  readonly id: number;
  readonly timestamp: number;
}

/** Zulip's get_user_mutes: whom this user muted, with when; ordered by muted user id. */
const mutesQuery = prepared(1, (db, userId: number) => db.selectFrom('muted_users').select(['muted_user_id', 'date_muted']).where('user_id', '=', userId).orderBy('muted_user_id'));
export async function mutesOfUser(db: AnyDb, userId: number): Promise<MutedUserItem[]> {
  const rows = await mutesQuery(db, userId);
  return rows.map((r) => ({ id: r.muted_user_id, timestamp: Number(r.date_muted) }));
}

export async function isMuted(db: AnyDb, userId: number, mutedUserId: number): Promise<boolean> {
  const row = await db.selectFrom('muted_users').select('user_id').where('user_id', '=', userId).where('muted_user_id', '=', mutedUserId).executeTakeFirst();
  return row !== undefined;
}

/** Inserts the mute; false when it already existed (the primary key refuses it). */
export async function insertMute(db: AnyDb, userId: number, mutedUserId: number, when: number): Promise<boolean> {
  const res = await db
    .insertInto('muted_users')
    .values({ user_id: userId, muted_user_id: mutedUserId, date_muted: when })
    .onConflict((oc) => oc.columns(['user_id', 'muted_user_id']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Deletes the mute; false when there was none. */
export async function deleteMute(db: AnyDb, userId: number, mutedUserId: number): Promise<boolean> {
  const res = await db.deleteFrom('muted_users').where('user_id', '=', userId).where('muted_user_id', '=', mutedUserId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Zulip's get_muting_users: every user who muted this sender (a short list; the caller intersects). */
export async function mutersOf(db: AnyDb, senderId: number): Promise<number[]> {
  const rows = await db.selectFrom('muted_users').select('user_id').where('muted_user_id', '=', senderId).execute();
  return rows.map((r) => r.user_id);
}

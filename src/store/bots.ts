import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { UserRow } from './users.js';

type AnyDb = Db | TxDb;

/** Bots owned by a user (all, or only active ones), oldest first. */
export function botsOwnedBy(db: AnyDb, realmId: number, ownerId: number, opts: { activeOnly?: boolean } = {}): Promise<UserRow[]> {
  let q = db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('is_bot', '=', 1).where('bot_owner_id', '=', ownerId);
  if (opts.activeOnly) q = q.where('is_active', '=', 1);
  return q.orderBy('id').execute();
}

/** Every bot of the realm, deactivated ones included (what realm admins see in realm_bots). */
export function botsInRealm(db: AnyDb, realmId: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('is_bot', '=', 1).orderBy('id').execute();
}

/** Active human administrators (owners included). */
export async function humanAdminIds(db: AnyDb, realmId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('is_bot', '=', 0)
    .where('role', '<=', 200)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Channel names and privacy by id (the channels table of issue 4). */
export async function channelsBrief(db: AnyDb, realmId: number, ids: readonly number[]): Promise<Map<number, { name: string; invite_only: boolean }>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('channels').select(['id', 'name', 'invite_only']).where('realm_id', '=', realmId).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, { name: r.name, invite_only: r.invite_only === 1 }]));
}

/** A channel by name (case-insensitive) with whether the user is an active subscriber. */
export async function channelByNameFor(db: AnyDb, realmId: number, name: string, userId: number) {
  const row = await db
    .selectFrom('channels')
    .select(['id', 'name', 'invite_only', 'deactivated'])
    .where('realm_id', '=', realmId)
    .where('name_lower', '=', name.toLowerCase())
    .executeTakeFirst();
  if (!row) return undefined;
  const sub = await db
    .selectFrom('subscriptions')
    .select('id')
    .where('user_id', '=', userId)
    .where('channel_id', '=', row.id)
    .where('active', '=', 1)
    .executeTakeFirst();
  return { ...row, subscribed: sub !== undefined };
}

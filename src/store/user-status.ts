import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { UserStatusTable } from './schema.js';

type AnyDb = Db | TxDb;
export type UserStatusRow = Selectable<UserStatusTable>;

export function statusOf(db: AnyDb, userId: number): Promise<UserStatusRow | undefined> {
  return db.selectFrom('user_statuses').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** Statuses of the realm's active users, with each user's settings JSON (for presence_enabled). */
export function statusesInRealm(db: AnyDb, realmId: number) {
  return db
    .selectFrom('user_statuses as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.user_id', 's.status_text', 's.emoji_name', 's.emoji_code', 's.reaction_type', 'u.settings'])
    .where('s.realm_id', '=', realmId)
    .where('u.is_active', '=', 1)
    .orderBy('s.user_id')
    .execute();
}

/** Creates the row or changes the given columns (update_or_create). */
export async function upsertStatus(
  db: AnyDb,
  row: { user_id: number; realm_id: number; client: string; timestamp: number },
  changes: Partial<Pick<UserStatusRow, 'status_text' | 'emoji_name' | 'emoji_code' | 'reaction_type'>>,
): Promise<void> {
  await db
    .insertInto('user_statuses')
    .values({
      ...row,
      status_text: changes.status_text ?? '',
      emoji_name: changes.emoji_name ?? '',
      emoji_code: changes.emoji_code ?? '',
      reaction_type: changes.reaction_type ?? 'unicode_emoji',
    })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ client: row.client, timestamp: row.timestamp, ...changes }))
    .execute();
}

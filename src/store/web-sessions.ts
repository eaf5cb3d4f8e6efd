import type { Selectable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { WebSessionTable } from './schema.js';

type AnyDb = Db | TxDb;
export type WebSessionRow = Selectable<WebSessionTable>;

export async function insertWebSession(db: AnyDb, row: WebSessionRow): Promise<void> {
  await db.insertInto('web_sessions').values(row).execute();
}

/** The session with this token hash and its user (with the realm's deactivation flag), if any. */
export function webSessionWithUser(db: AnyDb, tokenHash: string) {
  return db
    .selectFrom('web_sessions')
    .innerJoin('users', 'users.id', 'web_sessions.user_id')
    .innerJoin('realms', 'realms.id', 'users.realm_id')
    .selectAll('users')
    .select([
      'realms.deactivated as realm_deactivated',
      'web_sessions.csrf_token as session_csrf_token',
      'web_sessions.auth_hash as session_auth_hash',
      'web_sessions.expires_at as session_expires_at',
    ])
    .where('web_sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function deleteWebSession(db: AnyDb, tokenHash: string): Promise<void> {
  await db.deleteFrom('web_sessions').where('token_hash', '=', tokenHash).execute();
}

export async function deleteWebSessionsOfUser(db: AnyDb, userId: number): Promise<void> {
  await db.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
}

export async function setWebSessionAuthHash(db: AnyDb, tokenHash: string, authHash: string): Promise<void> {
  await db.updateTable('web_sessions').set({ auth_hash: authHash }).where('token_hash', '=', tokenHash).execute();
}

/** Removes expired sessions (called now and then at sign-in, so the table does not grow without bound). */
export async function deleteExpiredWebSessions(db: AnyDb, now: number): Promise<void> {
  await db.deleteFrom('web_sessions').where('expires_at', '<', now).execute();
}

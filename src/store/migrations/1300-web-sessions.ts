import type { Kysely, Migration } from 'kysely';

/**
 * Issue 14, the web app's sign-in: server-side sessions. Only a SHA-256 hash of
 * the session token is stored, so a leaked database cannot be replayed as
 * cookies. The CSRF token is stored as is: the browser holds it in a cookie
 * readable by scripts anyway, and it is useless without the session cookie.
 */
export const m1300WebSessions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('web_sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('realm_id', 'integer', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      // A fingerprint of the password hash at sign-in: a password change ends the other sessions (as Django's session auth hash does).
      .addColumn('auth_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('web_sessions_user').on('web_sessions').columns(['user_id']).execute();
    await db.schema.createIndex('web_sessions_expires').on('web_sessions').columns(['expires_at']).execute();
  },
};

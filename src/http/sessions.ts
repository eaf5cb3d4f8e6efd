import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppCtx, Caller } from '../domain/context.js';
import { JsonableError, missingArgument } from '../domain/errors.js';
import { nowSeconds } from '../store/db.js';
import type { UserRow } from '../store/users.js';
import {
  deleteExpiredWebSessions,
  deleteWebSession,
  insertWebSession,
  setWebSessionAuthHash,
  webSessionWithUser,
} from '../store/web-sessions.js';
import { userById } from '../store/users.js';
import { callerFromRow } from './auth.js';
import { passwordLogin } from './endpoints/auth.js';

/**
 * The web app's sign-in (issue 14), modelled on Zulip's Django sessions:
 *
 * - POST /accounts/login checks the password with the very function of
 *   /fetch_api_key (same errors, same failed-login limit), then stores a
 *   session row (only the SHA-256 of its token) and sets two cookies:
 *   `sessionid` (HttpOnly: scripts never see it) and `csrftoken` (readable,
 *   the app echoes it in X-CSRFToken). Both SameSite=Lax, Secure behind https.
 * - /json/... (Zulip's mirror of /api/v1 for browsers) accepts only the
 *   session cookie, and every request that is not GET/HEAD must carry the
 *   session's CSRF token in X-CSRFToken. /api/v1 never looks at cookies.
 * - A session ends at logout, after PARLEY_SESSION_DAYS, when the user is
 *   deactivated (Zulip deletes the user's sessions on deactivation), and when
 *   the password changes (Django keeps a hash of the password in the session;
 *   the session that made the change is kept, as update_session_auth_hash
 *   does). Regenerating the API key does not end sessions (in Zulip neither).
 *
 * Zulip's strings: "Not logged in: API authentication or user session
 * required" (MissingAuthenticationError, 401 UNAUTHORIZED, with
 * `WWW-Authenticate: Session realm="zulip"` on /json), and CsrfFailureError:
 * 403 CSRF_FAILED, "CSRF error: {reason}" with a `reason` field carrying
 * Django's reason text.
 */

export const SESSION_COOKIE = 'sessionid';
export const CSRF_COOKIE = 'csrftoken';
const DAY = 86_400;
/** Tokens are 43 characters of base64url; anything much longer is not ours (and not worth hashing). */
const MAX_TOKEN_LENGTH = 100;

export const notLoggedIn = (): JsonableError =>
  new JsonableError('Not logged in: API authentication or user session required', {
    code: 'UNAUTHORIZED',
    status: 401,
    headers: { 'WWW-Authenticate': 'Session realm="zulip"' },
  });

export const csrfFailed = (reason: string): JsonableError =>
  new JsonableError(`CSRF error: ${reason}`, { code: 'CSRF_FAILED', status: 403, data: { reason } });

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    // The first cookie of a name wins (the most specific path, as browsers order them).
    if (name && !out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
/** A fingerprint of the password hash: a password change makes it differ (never the hash itself, to keep it out of this table). */
const authHashOf = (passwordHash: string | null): string => createHash('sha256').update('parley-session\0' + (passwordHash ?? '')).digest('hex');

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface SessionAuth {
  readonly caller: Caller;
  readonly row: UserRow;
  readonly tokenHash: string;
  readonly csrfToken: string;
}

/** The signed-in user of this request's session cookie, or undefined; an ended session is removed. */
export async function sessionOf(app: AppCtx, req: FastifyRequest): Promise<SessionAuth | undefined> {
  const token = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
  if (!token || token.length > MAX_TOKEN_LENGTH) return undefined;
  const tokenHash = hashToken(token);
  const found = await webSessionWithUser(app.db, tokenHash);
  if (!found) return undefined;
  const { session_csrf_token: csrfToken, session_auth_hash: authHash, session_expires_at: expiresAt, ...userRow } = found;
  if (expiresAt <= nowSeconds() || !userRow.is_active || userRow.realm_deactivated || authHash !== authHashOf(userRow.password_hash)) {
    await deleteWebSession(app.db, tokenHash);
    return undefined;
  }
  const { caller, row } = callerFromRow(app, userRow, () => notLoggedIn());
  return { caller, row, tokenHash, csrfToken };
}

export async function requireSession(app: AppCtx, req: FastifyRequest): Promise<SessionAuth> {
  const s = await sessionOf(app, req);
  if (!s) throw notLoggedIn();
  return s;
}

/** Django's CSRF check for a header-carried token (reason texts as Django words them). */
export function checkCsrf(req: FastifyRequest, expected: string | undefined): void {
  if (expected === undefined) throw csrfFailed('CSRF cookie not set.');
  const got = req.headers['x-csrftoken'];
  if (typeof got !== 'string' || got === '') throw csrfFailed('CSRF token missing.');
  if (!sameSecret(got, expected)) throw csrfFailed("CSRF token from the 'X-Csrftoken' HTTP header incorrect.");
}

/**
 * The CSRF check of a /json request that is not GET/HEAD: against the
 * session's token, or for a route open to everyone and no session, against
 * the csrftoken cookie (Django's double-submit check).
 */
export function checkJsonCsrf(req: FastifyRequest, session: SessionAuth | undefined): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  checkCsrf(req, session ? session.csrfToken : parseCookies(req.headers.cookie).get(CSRF_COOKIE));
}

/** After PATCH /json/settings changed the password, keep the session that made the change (Django's update_session_auth_hash). */
export async function keepSessionAfterPasswordChange(app: AppCtx, session: SessionAuth): Promise<void> {
  const fresh = await userById(app.db, session.caller.realmId, session.caller.id);
  if (fresh) await setWebSessionAuthHash(app.db, session.tokenHash, authHashOf(fresh.password_hash));
}

function cookie(app: AppCtx, name: string, value: string, maxAge: number, httpOnly: boolean): string {
  let c = `${name}=${value}; Path=/; Max-Age=${maxAge}; SameSite=Lax`;
  if (httpOnly) c += '; HttpOnly';
  if (app.config.externalScheme === 'https') c += '; Secure';
  return c;
}

/**
 * A browser's form post from another site would carry no X-CSRFToken, but a
 * sign-in has no session yet to hold one: refuse a request whose Origin is
 * another site instead (login CSRF), as Django's origin check does.
 */
function checkOrigin(app: AppCtx, req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  // Behind a proxy the Host header may be the internal one; the configured external host counts too.
  if (host === undefined || (host !== req.headers.host && host !== app.config.externalHost)) throw csrfFailed(`Origin checking failed - ${origin} does not match any trusted origins.`);
}

/**
 * Signs `user` in to the web app: a new server-side session (only its token's
 * hash stored) and its two cookies on `reply`. A previous session of this
 * browser (its cookie's token) ends. Used by /accounts/login and by the
 * sign-up pages (a newcomer lands signed in).
 */
export async function openWebSession(app: AppCtx, reply: FastifyReply, user: Pick<UserRow, 'id' | 'realm_id' | 'password_hash'>, previousToken?: string): Promise<void> {
  const now = nowSeconds();
  const maxAge = app.config.sessionDays * DAY;
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  if (previousToken && previousToken.length <= MAX_TOKEN_LENGTH) await deleteWebSession(app.db, hashToken(previousToken));
  await deleteExpiredWebSessions(app.db, now);
  await insertWebSession(app.db, {
    token_hash: hashToken(token),
    user_id: user.id,
    realm_id: user.realm_id,
    csrf_token: csrfToken,
    auth_hash: authHashOf(user.password_hash),
    created_at: now,
    expires_at: now + maxAge,
  });
  reply.header('set-cookie', [cookie(app, SESSION_COOKIE, token, maxAge, true), cookie(app, CSRF_COOKIE, csrfToken, maxAge, false)]);
}

export interface SessionRouteHelpers {
  readonly sendJson: (reply: FastifyReply, status: number, body: Record<string, unknown>) => FastifyReply;
  /** The per-address limit of unauthenticated API requests, which /fetch_api_key is under too. */
  readonly limitByAddress: (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

export async function registerSessionRoutes(http: FastifyInstance, app: AppCtx, { sendJson, limitByAddress }: SessionRouteHelpers): Promise<void> {
  await http.register(async (scope) => {
    // The server ignores JSON bodies elsewhere (Zulip reads only form fields); the sign-in form may post either.
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(new JsonableError('Malformed JSON', { code: 'INVALID_JSON' }), undefined);
      }
    });
    if (!scope.hasContentTypeParser('application/x-www-form-urlencoded')) await scope.register(formbody);

    scope.post('/accounts/login', async (req, reply) => {
      checkOrigin(app, req);
      await limitByAddress(req, reply);
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
      const username = body.username;
      const password = body.password;
      if (typeof username !== 'string') throw missingArgument('username');
      if (typeof password !== 'string') throw missingArgument('password');
      const user = await passwordLogin(app, username, password);
      await openWebSession(app, reply, user, parseCookies(req.headers.cookie).get(SESSION_COOKIE));
      return sendJson(reply, 200, { result: 'success', msg: '', user_id: user.id, email: user.delivery_email });
    });

    scope.post('/accounts/logout', async (req, reply) => {
      const session = await requireSession(app, req);
      checkCsrf(req, session.csrfToken);
      await deleteWebSession(app.db, session.tokenHash);
      reply.header('set-cookie', [cookie(app, SESSION_COOKIE, '', 0, true), cookie(app, CSRF_COOKIE, '', 0, false)]);
      return sendJson(reply, 200, { result: 'success', msg: '' });
    });
  });
}

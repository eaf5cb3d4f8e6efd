import type { AppCtx, Caller } from '../domain/context.js';
import { JsonableError, realmDeactivated, unauthorized, userDeactivated } from '../domain/errors.js';
import { apiKeysEqual, isWellFormedApiKey } from '../domain/rules/credentials.js';
import { BOT_INCOMING_WEBHOOK } from '../domain/rules/users.js';
import { fakeEmailDomain } from '../config.js';
import { apiEmail } from '../presenters/user.js';
import { userByApiKey, type UserRow } from '../store/users.js';

type AuthRow = NonNullable<Awaited<ReturnType<typeof userByApiKey>>>;

/**
 * API key -> user row, so an authenticated read costs no SQL. Entries are
 * dropped whenever anything writes to users or realms (WriteWatchPlugin, on
 * the write and again after commit), so a deactivation, role change or new
 * key takes effect on the next request. Bounded in size.
 */
export class AuthCache {
  private readonly rows = new Map<string, AuthRow>();
  constructor(private readonly max = 10_000) {}
  get(key: string): AuthRow | undefined {
    return this.rows.get(key);
  }
  set(key: string, row: AuthRow): void {
    if (this.rows.size >= this.max) this.rows.clear();
    this.rows.set(key, row);
  }
  clear(): void {
    this.rows.clear();
  }
}

/**
 * HTTP Basic `email:api_key`. As in Zulip's REST decorator, failures are
 * checked in this order: malformed key, unknown key or email mismatch (401
 * UNAUTHORIZED), realm deactivated (401 REALM_DEACTIVATED), user deactivated
 * (401 USER_DEACTIVATED), webhook-only bot (401 UNAUTHORIZED).
 */
export async function authenticate(app: AppCtx, header: string | undefined): Promise<{ caller: Caller; row: UserRow }> {
  if (!header) throw unauthorized();
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'basic') throw new JsonableError('This endpoint requires HTTP basic authentication.');
  let decoded: string;
  try {
    const b64 = header.slice(space + 1).trim();
    if (!/^[A-Za-z0-9+/=_-]*$/.test(b64)) throw new Error('bad base64');
    decoded = Buffer.from(b64, 'base64').toString('utf8');
  } catch {
    throw unauthorized('Invalid authorization header for basic auth');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw unauthorized('Invalid authorization header for basic auth');
  const email = decoded.slice(0, colon).trim().toLowerCase();
  const key = decoded.slice(colon + 1).trim();
  if (!isWellFormedApiKey(key)) throw unauthorized('Malformed API key');
  let row = app.authCache.get(key);
  if (!row) {
    const before = app.store.userWrites.writes;
    row = await userByApiKey(app.db, key);
    // Cache only if no write to users/realms raced with the read.
    if (row && app.store.userWrites.writes === before) app.authCache.set(key, row);
  }
  if (!row || !apiKeysEqual(row.api_key, key)) throw unauthorized('Invalid API key');
  const api = apiEmail(row, fakeEmailDomain(app.config)).toLowerCase();
  if (email !== row.email_lower && email !== api) throw unauthorized('Invalid API key');
  return callerFromRow(app, row);
}

/**
 * The caller for a user row found by a credential (API key or session): the
 * realm's and the account's state are checked here, once for both. An API
 * key gets Zulip's validate_account_and_subdomain answers (401
 * REALM_DEACTIVATED / USER_DEACTIVATED, so a client can tell them from a bad
 * key); a session passes `fail` to answer its own "not logged in".
 */
export function callerFromRow(app: AppCtx, row: UserRow & { realm_deactivated: number | boolean }, fail?: (msg: string) => JsonableError): { caller: Caller; row: UserRow } {
  if (row.realm_deactivated) throw fail ? fail('This organization has been deactivated') : realmDeactivated();
  if (!row.is_active) throw fail ? fail('Account is deactivated') : userDeactivated();
  if (row.bot_type === BOT_INCOMING_WEBHOOK) throw (fail ?? unauthorized)('This API is not available to incoming webhook bots.');
  return withCaller(app, row);
}

/**
 * Zulip's webhook_view: the key comes from the `api_key` parameter (or, as
 * a convenience, HTTP Basic credentials) and is checked by validate_api_key
 * with allow_webhook_access, so its own errors pass through unconverted:
 * "Malformed API key" / "Invalid API key" 401 INVALID_API_KEY, then the
 * realm and user deactivation errors (401 REALM_DEACTIVATED / USER_DEACTIVATED).
 * Any active user's key is accepted, incoming-webhook bots included.
 */
export async function authenticateWebhook(app: AppCtx, apiKey: string | undefined, header: string | undefined): Promise<{ caller: Caller; row: UserRow }> {
  let key = apiKey?.trim();
  let email: string | undefined;
  if (key === undefined && header && /^basic\s/i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0) {
      email = decoded.slice(0, colon).trim().toLowerCase();
      key = decoded.slice(colon + 1).trim();
    }
  }
  if (key === undefined) throw new JsonableError("Missing 'api_key' argument", { code: 'REQUEST_VARIABLE_MISSING', data: { var_name: 'api_key' } });
  if (!isWellFormedApiKey(key)) throw new JsonableError('Malformed API key', { code: 'INVALID_API_KEY', status: 401 });
  const row = await userByApiKey(app.db, key);
  if (!row || !apiKeysEqual(row.api_key, key)) throw new JsonableError('Invalid API key', { code: 'INVALID_API_KEY', status: 401 });
  if (email !== undefined && email !== row.email_lower && email !== apiEmail(row, fakeEmailDomain(app.config)).toLowerCase()) {
    throw new JsonableError('Invalid API key', { code: 'INVALID_API_KEY', status: 401 });
  }
  if (row.realm_deactivated) throw realmDeactivated();
  if (!row.is_active) throw userDeactivated();
  return withCaller(app, row);
}

/** The request's caller, built from its user row (the realm flag of the credential lookup dropped). */
function withCaller(app: AppCtx, row: UserRow & { realm_deactivated: number | boolean }): { caller: Caller; row: UserRow } {
  const { realm_deactivated: _ignored, ...user } = row;
  return {
    row: user,
    caller: {
      id: user.id,
      realmId: user.realm_id,
      role: user.role,
      isBot: user.is_bot === 1,
      botType: user.bot_type,
      email: apiEmail(user, fakeEmailDomain(app.config)),
      deliveryEmail: user.delivery_email,
      fullName: user.full_name,
    },
  };
}

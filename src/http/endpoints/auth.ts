import { z } from 'zod';
import { transact, type AppCtx } from '../../domain/context.js';
import {
  authenticationFailed,
  badRequest,
  JsonableError,
  passwordResetRequired,
  rateLimited,
  realmDeactivated,
  userDeactivated,
} from '../../domain/errors.js';
import { doFirstLogin } from '../../domain/actions/users.js';
import { verifyPassword } from '../../domain/rules/credentials.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { isValidEmail } from '../../domain/rules/users.js';
import { defaultRealm } from '../../store/realms.js';
import { userByEmail, type UserRow } from '../../store/users.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** A password hash that marks "must reset before password login" (set by admins/CLI). */
export const RESET_REQUIRED_HASH = '!reset';

/**
 * The password check of POST /fetch_api_key and of the web app's POST
 * /accounts/login (one function, so both answer the same errors). Failed
 * attempts are counted per username (Zulip: 5 per 30 minutes); past the
 * limit every attempt, right or wrong, gets 429 until the window passes.
 */
export async function passwordLogin(app: AppCtx, username: string, password: string): Promise<UserRow> {
  const limitKey = `login:${username.trim().toLowerCase()}`;
  const { loginFailLimit, loginFailWindowSec } = app.config;
  const wait = await app.limiter.retryAfter(limitKey, loginFailLimit, loginFailWindowSec);
  if (wait > 0) throw rateLimited(wait);
  if (!isValidEmail(username.trim())) throw badRequest('Enter a valid email address.');
  const realm = await defaultRealm(app.db);
  if (!realm) throw new JsonableError('Invalid subdomain', { code: 'NONEXISTENT_SUBDOMAIN', status: 404 });
  if (realm.deactivated) throw realmDeactivated();
  if (!realmSettings(realm.settings).password_auth_enabled) {
    throw new JsonableError('Password authentication is disabled in this organization', { code: 'PASSWORD_AUTH_DISABLED', status: 401 });
  }
  const user = await userByEmail(app.db, realm.id, username);
  if (user?.password_hash === RESET_REQUIRED_HASH) throw passwordResetRequired();
  // The password is verified before revealing anything about the account.
  const ok = user !== undefined && !user.is_bot && (await verifyPassword(user.password_hash, password));
  if (!ok) {
    await app.limiter.hit(limitKey, loginFailWindowSec);
    throw authenticationFailed();
  }
  if (!user.is_active) throw userDeactivated();
  await transact(app, (tx) => doFirstLogin(tx, user));
  return user;
}

/** POST /fetch_api_key: username + password -> API key. */
export const fetchApiKey = endpoint({
  method: 'POST',
  path: '/fetch_api_key',
  auth: 'none',
  params: { username: p.str(z.string()), password: p.str(z.string()) },
  handler: async ({ app }, { username, password }) => {
    const user = await passwordLogin(app, username, password);
    return { api_key: user.api_key, email: user.delivery_email, user_id: user.id };
  },
});

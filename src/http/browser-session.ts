import type { FastifyReply } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import type { UserRow } from '../store/users.js';

/**
 * THE place where a person who just signed up (or reset their password) is
 * signed in to the web app. Parley has no browser sessions yet: the web
 * app's server-side sessions (the `sessionid` cookie) are being built
 * separately. Until they are connected here, this starts nothing and
 * returns false, and the caller shows a page naming the new account
 * instead of redirecting to the web app at `/`.
 *
 * To connect: create the session for `user`, set its cookie on `reply`,
 * and return true; callers then redirect to `/`.
 */
export async function startBrowserSession(_app: AppCtx, _reply: FastifyReply, _user: UserRow): Promise<boolean> {
  return false;
}

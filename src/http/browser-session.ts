import type { FastifyReply } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import type { UserRow } from '../store/users.js';
import { openWebSession } from './sessions.js';

/**
 * THE place where a person who just signed up is signed in to the web app:
 * a web session with its cookies (sessions.ts), so the sign-up page can send
 * them straight to the app at `/`. Returns whether a session was started.
 */
export async function startBrowserSession(app: AppCtx, reply: FastifyReply, user: UserRow): Promise<boolean> {
  await openWebSession(app, reply, user);
  return true;
}

import type { AppCtx } from '../domain/context.js';
import { realmDomainRows } from '../store/channel-extras.js';
import { prepared } from '../store/prepared.js';

/**
 * The newest message the user received, or -1 (the same statement as
 * store/messages.ts's maxMessageIdForUser, prepared once: GET /users/me runs
 * it on every call, performance target P1).
 */
const newestUserMessage = prepared(1, (db, userId: number) =>
  db.selectFrom('user_messages').select('message_id').where('user_id', '=', userId).orderBy('message_id', 'desc').limit(1),
);
async function maxMessageIdQuery(app: AppCtx, userId: number): Promise<number> {
  const rows = await newestUserMessage(app.db, userId);
  return rows.length ? rows[0]!.message_id : -1;
}

/**
 * Values other resources own but user endpoints report. Each resource
 * replaces its hook when it lands (messages: max_message_id; realm domains:
 * allowed domains), so the user endpoints need not import those modules.
 */
export const userExtras = {
  maxMessageId: (app: AppCtx, userId: number): Promise<number> => maxMessageIdQuery(app, userId),
  realmDomains: async (app: AppCtx, realmId: number): Promise<{ domain: string; allow_subdomains: boolean }[]> =>
    (await realmDomainRows(app.db, realmId)).map((r) => ({ domain: r.domain, allow_subdomains: r.allow_subdomains === 1 })),
};

export const maxMessageIdForUser = (app: AppCtx, userId: number): Promise<number> => userExtras.maxMessageId(app, userId);
export const realmDomains = (app: AppCtx, realmId: number) => userExtras.realmDomains(app, realmId);

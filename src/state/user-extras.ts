import type { AppCtx } from '../domain/context.js';
import { realmDomainRows } from '../store/channel-extras.js';
import { maxMessageIdForUser as maxMessageIdQuery } from '../store/messages.js';

/**
 * Values other resources own but user endpoints report. Each resource
 * replaces its hook when it lands (messages: max_message_id; realm domains:
 * allowed domains), so the user endpoints need not import those modules.
 */
export const userExtras = {
  maxMessageId: (app: AppCtx, userId: number): Promise<number> => maxMessageIdQuery(app.db, userId),
  realmDomains: async (app: AppCtx, realmId: number): Promise<{ domain: string; allow_subdomains: boolean }[]> =>
    (await realmDomainRows(app.db, realmId)).map((r) => ({ domain: r.domain, allow_subdomains: r.allow_subdomains === 1 })),
};

export const maxMessageIdForUser = (app: AppCtx, userId: number): Promise<number> => userExtras.maxMessageId(app, userId);
export const realmDomains = (app: AppCtx, realmId: number) => userExtras.realmDomains(app, realmId);

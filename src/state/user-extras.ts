import type { AppCtx } from '../domain/context.js';

/**
 * Values other resources own but user endpoints report. Each resource
 * replaces its hook when it lands (messages: max_message_id; realm domains:
 * allowed domains), so the user endpoints need not import those modules.
 */
export const userExtras = {
  maxMessageId: async (_app: AppCtx, _userId: number): Promise<number> => -1,
  realmDomains: async (_app: AppCtx, _realmId: number): Promise<{ domain: string; allow_subdomains: boolean }[]> => [],
};

export const maxMessageIdForUser = (app: AppCtx, userId: number): Promise<number> => userExtras.maxMessageId(app, userId);
export const realmDomains = (app: AppCtx, realmId: number) => userExtras.realmDomains(app, realmId);

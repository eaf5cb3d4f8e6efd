import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { basicAuth, createPgDatabase, formBody, storeKind } from './server.js';

/** A server on a new, empty database (no organization): what `parley import` starts from. */
export interface ImportTarget {
  readonly app: App;
  /** The Authorization header of an imported user (their new API key), by id. */
  auth(userId: number): Promise<string>;
  get(userId: number, url: string): Promise<any>;
  /** POST with form parameters (values JSON-encoded unless strings). */
  post(userId: number, url: string, params?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export async function emptyTarget(): Promise<ImportTarget> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-import-'));
  let databaseUrl: string | undefined;
  let drop = async (): Promise<void> => {};
  if (storeKind() === 'postgres') {
    const created = await createPgDatabase('parley_imp');
    databaseUrl = created.url;
    drop = created.drop;
  }
  const config = loadConfig({}, { dataDir, databaseUrl, externalHost: 'zulip.testserver', passwordHashCost: 'fast', logLevel: 'silent', rateLimitPerUser: 0, rateLimitPerIp: 0, schedulerEnabled: false });
  const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
  const auth = async (userId: number): Promise<string> => {
    const u = await app.ctx.db.selectFrom('users').select(['delivery_email', 'api_key']).where('id', '=', userId).executeTakeFirstOrThrow();
    return basicAuth({ email: u.delivery_email, apiKey: u.api_key });
  };
  return {
    app,
    auth,
    async get(userId, url) {
      const res = await app.http.inject({ method: 'GET', url: '/api/v1' + url, headers: { authorization: await auth(userId) } });
      return JSON.parse(res.body);
    },
    async post(userId, url, params = {}) {
      const payload = formBody(params as any);
      const res = await app.http.inject({ method: 'POST', url: '/api/v1' + url, headers: { authorization: await auth(userId), 'content-type': 'application/x-www-form-urlencoded' }, payload });
      return JSON.parse(res.body);
    },
    async close() {
      await app.close();
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Row counts of the tables an import writes (to prove a refused import wrote nothing). */
export async function tableCounts(app: App): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ['realms', 'users', 'user_groups', 'recipients', 'channels', 'subscriptions', 'messages', 'user_messages', 'reactions', 'attachments', 'realm_emoji']) {
    const r = await (app.ctx.db as any).selectFrom(t).select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirst();
    out[t] = Number(r.n);
  }
  return out;
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { expect } from 'vitest';
import { bootstrapRealm, buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { transact } from '../../src/domain/context.js';
import { doCreateUser } from '../../src/domain/actions/users.js';
import { ensureSystemBots } from '../../src/domain/actions/system-bots.js';
import { hashPassword } from '../../src/domain/rules/credentials.js';
import { BOT_GENERIC, ROLE_ADMIN, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR } from '../../src/domain/rules/users.js';
import type { EventDelivery } from '../../src/events/types.js';
import { openStore } from '../../src/store/db.js';
import { purgeRedisPrefix } from '../../src/scale/redis.js';
import { userById, type UserRow } from '../../src/store/users.js';

export const PG_ADMIN_URL = process.env.PARLEY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const storeKind = (): 'sqlite' | 'postgres' => (process.env.PARLEY_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite');
/** PARLEY_TEST_EVENTS=redis (the `redis` project): queues, bus and rate limits in Redis, each server under its own key prefix. */
export const eventsKind = (): 'memory' | 'redis' => (process.env.PARLEY_TEST_EVENTS === 'redis' ? 'redis' : 'memory');
export const TEST_REDIS_URL = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fixture user: its row (as created) and credentials. */
export interface TestUser {
  readonly id: number;
  readonly email: string;
  readonly apiKey: string;
  readonly password: string;
  readonly role: number;
  readonly name: string;
}

export type FixtureName = 'owner' | 'iago' | 'shiva' | 'hamlet' | 'cordelia' | 'othello' | 'polonius' | 'bot';

export interface Res {
  readonly status: number;
  readonly body: any;
  readonly headers: Record<string, string | string[] | undefined>;
}

type Params = Record<string, unknown>;

/** Encodes a value as Zulip clients do: strings raw, everything else JSON. */
export function encodeParam(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function formBody(params: Params): string {
  const usp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) usp.append(k, encodeParam(v));
  return usp.toString();
}

export interface TestServer {
  readonly app: App;
  readonly config: Config;
  readonly users: Record<FixtureName, TestUser>;
  readonly realmId: number;
  /** Authenticated request as a fixture user (or any TestUser); null user means no credentials. */
  request(method: string, url: string, params?: Params, as?: TestUser | FixtureName | null, headers?: Record<string, string>): Promise<Res>;
  get(url: string, params?: Params, as?: TestUser | FixtureName | null): Promise<Res>;
  post(url: string, params?: Params, as?: TestUser | FixtureName | null): Promise<Res>;
  patch(url: string, params?: Params, as?: TestUser | FixtureName | null): Promise<Res>;
  delete(url: string, params?: Params, as?: TestUser | FixtureName | null): Promise<Res>;
  /** Creates another user through the actions layer. */
  createUser(opts: { email: string; fullName: string; role?: number; password?: string }): Promise<TestUser>;
  row(id: number): Promise<UserRow>;
  /** Runs fn and returns every event delivery it published (after commit). */
  captureEvents(fn: () => Promise<unknown>): Promise<EventDelivery[]>;
  /** Starts listening on a random loopback port (for real clients); returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export function basicAuth(user: { email: string; apiKey: string }): string {
  return 'Basic ' + Buffer.from(`${user.email}:${user.apiKey}`).toString('base64');
}

const FIXTURES: { name: FixtureName; email: string; fullName: string; role: number; bot?: boolean }[] = [
  { name: 'iago', email: 'iago@zulip.com', fullName: 'Iago', role: ROLE_ADMIN },
  { name: 'shiva', email: 'shiva@zulip.com', fullName: 'Shiva', role: ROLE_MODERATOR },
  { name: 'hamlet', email: 'hamlet@zulip.com', fullName: 'King Hamlet', role: ROLE_MEMBER },
  { name: 'cordelia', email: 'cordelia@zulip.com', fullName: 'Cordelia, Lear\'s daughter', role: ROLE_MEMBER },
  { name: 'othello', email: 'othello@zulip.com', fullName: 'Othello, the Moor of Venice', role: ROLE_MEMBER },
  { name: 'polonius', email: 'polonius@zulip.com', fullName: 'Polonius', role: ROLE_GUEST },
];

export const FIXTURE_PASSWORD = 'fixture-Pa55word!';

/** A new, empty PostgreSQL database on the test server's cluster; `prefix` names what made it. */
export async function createPgDatabase(prefix = 'parley_t'): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = '/' + name;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * A full server on a fresh database (SQLite file or a new PostgreSQL
 * database, per PARLEY_TEST_STORE) with the named fixture users.
 */
export async function startTestServer(
  overrides: Partial<Config> = {},
  opts: { logger?: pino.Logger; /** The first-start channels and messages (default: an empty realm). */ initialContent?: boolean } = {},
): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
  let dropDb: (() => Promise<void>) | undefined;
  let databaseUrl: string | undefined;
  if (storeKind() === 'postgres') {
    const created = await createPgDatabase();
    databaseUrl = created.url;
    dropDb = created.drop;
  }
  const config = loadConfig(
    {},
    {
      dataDir,
      databaseUrl,
      externalHost: 'zulip.testserver',
      passwordHashCost: 'fast',
      ownerEmail: 'desdemona@zulip.com',
      ownerPassword: FIXTURE_PASSWORD,
      logLevel: 'silent',
      heartbeatMinMs: 1000,
      heartbeatJitterMs: 0,
      // Fixture-heavy test files make hundreds of requests a minute; rate limits have their own test.
      rateLimitPerUser: 0,
      rateLimitPerIp: 0,
      // The scheduler still wakes at each due time and after each local write; without the idle
      // poll, no statement runs on a timer in the middle of a test's exact statement counts.
      schedulerPollMs: 3_600_000,
      ...(eventsKind() === 'redis' ? { redisUrl: TEST_REDIS_URL, redisKeyPrefix: `parley:test:${process.pid}:${randomBytes(6).toString('hex')}:` } : {}),
      ...overrides,
    },
  );
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir, poolSize: 4 });
  const app = await buildApp(config, { logger: opts.logger ?? pino({ level: 'silent' }), store });
  // Tests start from an empty organization (no channels, no messages) so their exact
  // assertions stay about what they do; initialContent: true gives the real first start.
  const boot = await bootstrapRealm(app.ctx, { announce: false, initialContent: opts.initialContent ?? false });
  const hash = await hashPassword(FIXTURE_PASSWORD, 'fast');
  const users = {} as Record<FixtureName, TestUser>;
  users.owner = { id: 1, email: boot.ownerEmail!, apiKey: boot.ownerApiKey!, password: FIXTURE_PASSWORD, role: 100, name: 'Organization Owner' };
  for (const f of FIXTURES) {
    const row = await transact(app.ctx, (tx) => doCreateUser(app.ctx, tx, boot.realmId, { email: f.email, fullName: f.fullName, passwordHash: hash, role: f.role }));
    users[f.name] = { id: row.id, email: row.delivery_email, apiKey: row.api_key, password: FIXTURE_PASSWORD, role: f.role, name: f.fullName };
  }
  const botRow = await transact(app.ctx, (tx) =>
    doCreateUser(app.ctx, tx, boot.realmId, { email: 'test-bot@zulip.testserver', fullName: 'Test Bot', passwordHash: null, botType: BOT_GENERIC, botOwnerId: users.hamlet.id }),
  );
  users.bot = { id: botRow.id, email: botRow.delivery_email, apiKey: botRow.api_key, password: '', role: ROLE_MEMBER, name: 'Test Bot' };
  // The system bots come after the fixtures, so fixture ids are the same as before they existed.
  await ensureSystemBots(app.ctx);

  const who = (as: TestUser | FixtureName | null | undefined): TestUser | null =>
    as === null ? null : typeof as === 'string' ? users[as] : as ?? users.hamlet;

  const request: TestServer['request'] = async (method, url, params = {}, as, headers = {}) => {
    const user = who(as);
    const h: Record<string, string> = { ...headers };
    if (user) h.authorization = basicAuth(user);
    let fullUrl = '/api/v1' + url;
    let payload: string | undefined;
    if (method === 'GET') {
      const q = formBody(params);
      if (q) fullUrl += (fullUrl.includes('?') ? '&' : '?') + q;
    } else {
      payload = formBody(params);
      h['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await app.http.inject({ method: method as 'GET', url: fullUrl, headers: h, payload });
    let body: unknown = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      /* non-JSON body */
    }
    return { status: res.statusCode, body, headers: res.headers as Res['headers'] };
  };

  let listening = false;
  return {
    app,
    config,
    users,
    realmId: boot.realmId,
    request,
    get: (u, p, as) => request('GET', u, p, as),
    post: (u, p, as) => request('POST', u, p, as),
    patch: (u, p, as) => request('PATCH', u, p, as),
    delete: (u, p, as) => request('DELETE', u, p, as),
    async createUser(opts) {
      const password = opts.password ?? FIXTURE_PASSWORD;
      const h = await hashPassword(password, 'fast');
      const row = await transact(app.ctx, (tx) =>
        doCreateUser(app.ctx, tx, boot.realmId, { email: opts.email, fullName: opts.fullName, passwordHash: h, role: opts.role ?? ROLE_MEMBER }),
      );
      return { id: row.id, email: row.delivery_email, apiKey: row.api_key, password, role: row.role, name: row.full_name };
    },
    async row(id) {
      return (await userById(app.ctx.db, boot.realmId, id))!;
    },
    async captureEvents(fn) {
      const got: EventDelivery[] = [];
      const off = app.ctx.bus.subscribe((d) => {
        got.push(...d);
      });
      try {
        await fn();
      } finally {
        off();
      }
      return got;
    },
    async listen() {
      if (!listening) {
        await app.http.listen({ host: '127.0.0.1', port: 0 });
        listening = true;
      }
      const addr = app.http.server.address();
      if (!addr || typeof addr === 'string') throw new Error('not listening');
      return `http://127.0.0.1:${addr.port}`;
    },
    async close() {
      await app.close();
      if (config.redisUrl) await purgeRedisPrefix(config.redisUrl, config.redisKeyPrefix);
      if (dropDb) await dropDb();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Asserts a Zulip error response exactly: status, code and msg (and optional extra fields). */
export function expectError(res: Res, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): void {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: { result: 'error', msg, code, ...extra } });
}

/** Asserts success and returns the body. */
export function expectSuccess(res: Res): any {
  if (res.status !== 200 || res.body?.result !== 'success') {
    throw new Error(`expected success, got ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return res.body;
}

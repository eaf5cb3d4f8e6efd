import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { realmUrl, type Config } from './config.js';
import type { AppCtx } from './domain/context.js';
import { transact } from './domain/context.js';
import { doCreateRealm } from './domain/actions/realm.js';
import { doCreateUser } from './domain/actions/users.js';
import { announceNewHumanUser } from './domain/actions/onboarding.js';
import { createInitialRealmContent } from './domain/actions/realm-content.js';
import { ensureSystemBots } from './domain/actions/system-bots.js';
import { generatePassword, hashPassword } from './domain/rules/credentials.js';
import { MemoryRateLimiter } from './domain/rules/rate-limit.js';
import { LineBatch } from './http/logging.js';
import { ROLE_OWNER } from './domain/rules/users.js';
import { InProcessBus, type EventBus } from './events/bus.js';
import { withUserAccess } from './domain/access/user-access-delivery.js';
import { EventQueues } from './events/queues.js';
import { MemoryQueueStore, type QueueStore } from './events/queue-store.js';
import type { RateLimiter } from './domain/rules/rate-limit.js';
import { Health, registerHealthRoutes } from './scale/health.js';
import { openRedisServices, type RedisServices } from './scale/redis.js';
import { buildHttpServer } from './http/server.js';
import { closeMail } from './mail/send.js';
import { registerPageRoutes } from './http/pages.js';
import { registerSignupPages } from './http/signup-pages.js';
import { registerPasswordResetPages } from './http/password-reset-pages.js';
import { AuthCache } from './http/auth.js';
import { createStorage, FileService } from './files/service.js';
import { migrate, openStore, type Store } from './store/db.js';
import { defaultRealm } from './store/realms.js';
import { JobWaker, Scheduler } from './jobs/scheduler.js';
import { ScheduledDelivery } from './jobs/scheduled-delivery.js';
import { OutgoingWebhookDelivery } from './jobs/outgoing-webhooks.js';
import { RealmExportJobs } from './domain/actions/realm-export.js';
import { presenceOf } from './domain/presence-state.js';

export interface App {
  readonly ctx: AppCtx;
  readonly http: FastifyInstance;
  /** Readiness (GET /ready) and the draining flag set on SIGTERM. */
  readonly health: Health;
  /** Present when PARLEY_REDIS_URL is set (several processes). */
  readonly redis: RedisServices | undefined;
  /** Scheduled messages and reminders; tests call scheduler.runDueNow(). */
  readonly scheduler: Scheduler;
  close(): Promise<void>;
}

export interface BuildOptions {
  readonly logger?: Logger;
  readonly store?: Store;
  readonly bus?: EventBus;
  /** Print and write first-start credentials (false in tests). */
  readonly announce?: boolean;
}

export interface Bootstrap {
  readonly realmId: number;
  readonly created: boolean;
  readonly ownerEmail?: string;
  readonly ownerPassword?: string;
  readonly ownerApiKey?: string;
  /**
   * With `initialContent: 'after-listen'` on a new organization: posts its first channels and
   * Welcome Bot's messages. The caller runs it once the server answers (src/main.ts).
   */
  readonly postInitialContent?: () => Promise<void>;
}

/** Composition root: store, bus and HTTP wired with plain functions. */
export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<App> {
  // Asynchronous, buffered log writes: lines collect until 32 KB (or for at
  // most a second) and go out in one write(), instead of a write handed to
  // libuv's thread pool per request line (about 10 us of CPU per request at
  // P1 rates, docs/performance.md); pino flushes what is pending on exit.
  // The lines are encoded into one buffer per batch before SonicBoom sees them (LineBatch, http/logging.ts).
  let logDest: LineBatch | undefined;
  let logFlush: NodeJS.Timeout | undefined;
  if (!opts.logger) {
    const dest = LineBatch.onFd(1);
    logFlush = setInterval(() => dest.flush(), 1000).unref();
    logDest = dest;
  }
  const log = opts.logger ?? pino({ level: config.logLevel }, logDest);
  const store = opts.store ?? openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrate(store.db);
  // On an empty database, the owner's password hash (argon2id: 16 ms of CPU at the default
  // cost) runs on libuv's thread pool while the server is built below, rather than after it,
  // when bootstrapRealm would otherwise start it and wait (P10, docs/performance.md).
  const ownerHash = (await defaultRealm(store.db)) ? undefined : startOwnerHash(config);
  const authCache = new AuthCache();
  store.userWrites.onWrite(() => authCache.clear());
  // Scale-out: queues, bus, rate limits and cache invalidation in Redis; queues then outlive any process (no snapshot file).
  const redis = config.redisUrl
    ? await openRedisServices({
        url: config.redisUrl,
        prefix: config.redisKeyPrefix,
        maxEvents: config.eventQueueMaxEvents,
        store,
        db: store.db,
        clearAuthCache: () => authCache.clear(),
        log,
      })
    : undefined;
  // Restricted user access is applied to every batch on its way in (domain/access/user-access-delivery.ts).
  const bus = withUserAccess(opts.bus ?? redis?.bus ?? new InProcessBus(), () => ctx);
  const queueStore: QueueStore = redis?.queueStore ?? new MemoryQueueStore(config.eventQueueMaxEvents);
  const limiter: RateLimiter = redis?.limiter ?? new MemoryRateLimiter();
  const queues = new EventQueues(queueStore, {
    heartbeatMinMs: config.heartbeatMinMs,
    heartbeatJitterMs: config.heartbeatJitterMs,
    dataDir: redis ? null : config.dataDir,
    log,
  });
  await queues.restore();
  queues.attach(bus);
  const jobs = new JobWaker();
  // The file service works through the context it belongs to: built in two steps.
  const base: Omit<AppCtx, 'files'> = { config, store, db: store.db, bus, log, limiter, authCache, queues, jobs };
  const ctx = base as AppCtx;
  if (ownerHash) ownerHashes.set(ctx, ownerHash);
  const files = new FileService(ctx, createStorage(config));
  (ctx as { files: FileService }).files = files;
  // Several processes: presence reports are shared through Redis (a report to one is seen by all).
  if (redis) presenceOf(ctx).share(redis.presence);
  files.start();
  const scheduler = new Scheduler([new ScheduledDelivery(ctx), new OutgoingWebhookDelivery(ctx), new RealmExportJobs(ctx)], { pollMs: config.schedulerPollMs, log });
  jobs.listen(() => scheduler.wake());
  const http = await buildHttpServer(ctx, { logger: false });
  registerPageRoutes(http, ctx);
  registerSignupPages(http, ctx);
  registerPasswordResetPages(http, ctx);
  const health = new Health(store.db, redis ? () => redis.ping() : undefined);
  registerHealthRoutes(http, health);
  // Jobs that fell due while no process ran are delivered by the first scan.
  if (config.schedulerEnabled) scheduler.start();
  return {
    ctx,
    http,
    health,
    redis,
    scheduler,
    async close() {
      health.draining = true;
      // No new deliveries start; one in progress finishes (its transaction commits or rolls back whole).
      await scheduler.stop();
      // Parked polls get an answer first; then the server stops and the queues are saved.
      await queues.drain();
      await http.close();
      await queues.persist();
      await files.close();
      await bus.close();
      await redis?.close();
      closeMail(config);
      await store.close();
      // What is still buffered is written by pino's exit handler.
      if (logFlush) clearInterval(logFlush);
      logDest?.close();
    },
  };
}

/** The owner's password and its hash, started by buildApp on an empty database; taken by bootstrapRealm. */
const ownerHashes = new WeakMap<AppCtx, Promise<{ password: string; hash: string }>>();

function startOwnerHash(config: Config): Promise<{ password: string; hash: string }> {
  const password = config.ownerPassword ?? generatePassword();
  const pending = hashPassword(password, config.passwordHashCost).then((hash) => ({ password, hash }));
  // bootstrapRealm awaits it and so sees any failure; a server that never bootstraps must not
  // report an unhandled rejection for it.
  pending.catch(() => undefined);
  return pending;
}

/**
 * On an empty database: create the organization and its owner (allowed to
 * create users), and write a zuliprc for the owner. Idempotent.
 *
 * `initialContent`: the new organization's channels and Welcome Bot's messages
 * (true, the default), none (false: the test server), or left to the caller
 * ('after-listen': returned as postInitialContent). The server itself uses the
 * last: the organization, its owner and the system bots exist before it answers
 * anything, and the content (three channels, 12 messages with Markdown and a
 * highlighted code block, the owner's welcome: about 40-55 ms, 15% of a cold
 * start, P10 in docs/performance.md) is posted right after, through the same
 * actions and events as ever. A client that registers in between gets a
 * consistent snapshot and then the channels and messages as events, as if
 * Welcome Bot had posted them a moment later.
 */
export async function bootstrapRealm(ctx: AppCtx, opts: { announce: boolean; initialContent?: boolean | 'after-listen' }): Promise<Bootstrap> {
  const existing = await defaultRealm(ctx.db);
  if (existing) {
    // Databases from before the system bots get them now (after every existing id).
    await ensureSystemBots(ctx);
    return { realmId: existing.id, created: false };
  }
  const early = ownerHashes.get(ctx);
  ownerHashes.delete(ctx);
  const { password, hash } = await (early ?? startOwnerHash(ctx.config));
  const { realmId, owner } = await transact(ctx, async (tx) => {
    const realmId = await doCreateRealm(tx.db, { stringId: '', name: ctx.config.realmName });
    const owner = await doCreateUser(ctx, tx, realmId, {
      email: ctx.config.ownerEmail,
      fullName: 'Organization Owner',
      passwordHash: hash,
      role: ROLE_OWNER,
      canCreateUsers: true,
    });
    return { realmId, owner };
  });
  // A new organization starts alive (Zulip's do_create_realm): system bots, the
  // default channels with Welcome Bot's first messages, and the owner's welcome.
  // The test server leaves it out (initialContent: false) to start from an empty realm.
  const content = opts.initialContent ?? true;
  let postInitialContent: (() => Promise<void>) | undefined;
  if (content !== false) {
    await ensureSystemBots(ctx);
    const post = async (): Promise<void> => {
      await createInitialRealmContent(ctx, realmId, owner);
      await announceNewHumanUser(ctx, owner, { channelIds: [], includeDefaults: true, referrerId: null, notifyReferrer: false }, { firstUser: true });
    };
    if (content === 'after-listen') postInitialContent = post;
    else await post();
  }
  if (opts.announce) {
    const rc = path.join(ctx.config.dataDir, 'zuliprc');
    fs.mkdirSync(ctx.config.dataDir, { recursive: true });
    fs.writeFileSync(rc, `[api]\nemail=${owner.delivery_email}\nkey=${owner.api_key}\nsite=${realmUrl(ctx.config)}\n`, { mode: 0o600 });
    const lines = [
      'Parley: created the organization and its owner.',
      `  web app:  ${realmUrl(ctx.config)}/  (sign in with this email and password)`,
      `  email:    ${owner.delivery_email}`,
      ctx.config.ownerPassword ? '  password: (from PARLEY_OWNER_PASSWORD)' : `  password: ${password}`,
      `  API key:  ${owner.api_key}`,
      `  zuliprc:  ${rc}`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  }
  return { realmId, created: true, ownerEmail: owner.delivery_email, ownerPassword: password, ownerApiKey: owner.api_key, ...(postInitialContent ? { postInitialContent } : {}) };
}

import path from 'node:path';

/** Typed configuration, read once from PARLEY_* environment variables. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** undefined: SQLite file in dataDir; "postgres://...": PostgreSQL. */
  readonly databaseUrl: string | undefined;
  readonly ownerEmail: string;
  readonly ownerPassword: string | undefined;
  /** host[:port] clients use to reach the server; used in realm_url and dummy emails. */
  readonly externalHost: string;
  /** http or https, for realm_url. */
  readonly externalScheme: string;
  readonly realmName: string;
  readonly logLevel: string;
  /** Password hashing cost: "default" for production, "fast" for tests only. */
  readonly passwordHashCost: 'default' | 'fast';
  /** Long-poll heartbeat bounds in milliseconds (Zulip: 45 s + up to 10 s jitter). */
  readonly heartbeatMinMs: number;
  readonly heartbeatJitterMs: number;
  /** Events a queue may hold unacknowledged; past it the queue is dropped and its client re-registers. */
  readonly eventQueueMaxEvents: number;
  /** smtp://user:pass@host:port or smtps://... for outgoing mail (email-change confirmations); unset: mail is logged. */
  readonly smtpUrl: string | undefined;
  /** The From address of outgoing mail. */
  readonly smtpFrom: string;
  /** redis://host:port/db: event queues, event bus, rate limits and cache invalidation shared by several processes. */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key and channel (several installations or test runs may share one Redis). */
  readonly redisKeyPrefix: string;
  /** On SIGTERM, how long /ready answers 503 before the server stops taking requests (load balancer notice). */
  readonly drainDelayMs: number;
  /** API requests per user per minute (Zulip: 200); 0 disables. */
  readonly rateLimitPerUser: number;
  /** Characters (keys + values) a bot may keep in bot storage (Zulip's USER_STATE_SIZE_LIMIT: 10000000). */
  readonly botStorageLimit: number;
  /** Unauthenticated requests per client address per minute (Zulip: 100); 0 disables. */
  readonly rateLimitPerIp: number;
  /** Failed logins allowed per username per window before 429 (Zulip: 5 per 1800 s). */
  readonly loginFailLimit: number;
  readonly loginFailWindowSec: number;
  /** Serve Prometheus metrics at GET /metrics (PARLEY_METRICS=0 turns it off). */
  readonly metricsEnabled: boolean;
  /** If set, GET /metrics requires `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const host = env.PARLEY_HOST || '127.0.0.1';
  const port = int(env, 'PARLEY_PORT', 9991);
  const externalHost = env.PARLEY_EXTERNAL_HOST || `${host}:${overrides.port ?? port}`;
  const cost = env.PARLEY_PASSWORD_HASH_COST === 'fast' ? 'fast' : 'default';
  return {
    host,
    port,
    dataDir: path.resolve(env.PARLEY_DATA_DIR || './data'),
    databaseUrl: env.PARLEY_DATABASE_URL || undefined,
    ownerEmail: env.PARLEY_OWNER_EMAIL || 'owner@example.com',
    ownerPassword: env.PARLEY_OWNER_PASSWORD || undefined,
    externalHost,
    externalScheme: env.PARLEY_EXTERNAL_SCHEME === 'https' ? 'https' : 'http',
    realmName: env.PARLEY_REALM_NAME || 'Parley',
    logLevel: env.PARLEY_LOG_LEVEL || 'info',
    passwordHashCost: cost,
    heartbeatMinMs: int(env, 'PARLEY_HEARTBEAT_MS', 45_000),
    heartbeatJitterMs: int(env, 'PARLEY_HEARTBEAT_JITTER_MS', 10_000),
    eventQueueMaxEvents: int(env, 'PARLEY_EVENT_QUEUE_MAX_EVENTS', 2000),
    smtpUrl: env.PARLEY_SMTP_URL || undefined,
    smtpFrom: env.PARLEY_SMTP_FROM || `noreply@${externalHost.split(':')[0]}`,
    redisUrl: env.PARLEY_REDIS_URL || undefined,
    redisKeyPrefix: env.PARLEY_REDIS_PREFIX || 'parley:',
    drainDelayMs: int(env, 'PARLEY_DRAIN_DELAY_MS', 0),
    rateLimitPerUser: int(env, 'PARLEY_RATE_LIMIT_PER_USER', 200),
    botStorageLimit: int(env, 'PARLEY_BOT_STORAGE_LIMIT', 10_000_000),
    rateLimitPerIp: int(env, 'PARLEY_RATE_LIMIT_PER_IP', 100),
    loginFailLimit: int(env, 'PARLEY_LOGIN_FAIL_LIMIT', 5),
    loginFailWindowSec: int(env, 'PARLEY_LOGIN_FAIL_WINDOW_SEC', 1800),
    metricsEnabled: env.PARLEY_METRICS !== '0' && env.PARLEY_METRICS !== 'false',
    metricsToken: env.PARLEY_METRICS_TOKEN || undefined,
    ...overrides,
  };
}

/** The realm's base URL, e.g. http://127.0.0.1:9991 */
export function realmUrl(config: Config): string {
  return `${config.externalScheme}://${config.externalHost}`;
}

/** Domain of dummy API emails user{id}@{domain}: the external host without its port. */
export function fakeEmailDomain(config: Config): string {
  const h = config.externalHost;
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':')[0]!;
}

import fs from 'node:fs';
import path from 'node:path';
import { isValidEmailDomain } from './domain/rules/users.js';
import { fileURLToPath } from 'node:url';

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
  /**
   * Domain of bot and dummy API emails when the external host cannot form an
   * email address (an IP address such as the default 127.0.0.1): Zulip's
   * FAKE_EMAIL_DOMAIN.
   */
  readonly fakeEmailDomain: string;
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
  /** The From address of outgoing mail, optionally with a display name: `Parley <noreply@example.com>`. */
  readonly smtpFrom: string;
  /** smtp:// only: STARTTLS when the server offers it (auto), always (require), or never. */
  readonly smtpStartTls: 'auto' | 'require' | 'never';
  /** Verify the SMTP server's TLS certificate (PARLEY_SMTP_TLS_VERIFY=0 for a self-signed relay). */
  readonly smtpTlsVerify: boolean;
  /** Connection, greeting and socket time-out of SMTP, in milliseconds. */
  readonly smtpTimeoutMs: number;
  /** Pooled SMTP connections kept open; 0: a new connection per mail. */
  readonly smtpPoolSize: number;
  /** redis://host:port/db: event queues, event bus, rate limits and cache invalidation shared by several processes. */
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key and channel (several installations or test runs may share one Redis). */
  readonly redisKeyPrefix: string;
  /** On SIGTERM, how long /ready answers 503 before the server stops taking requests (load balancer notice). */
  readonly drainDelayMs: number;
  /** A full garbage collection once the server goes quiet after its heap grew, and the quiet scavenges that promote parked polls (src/idle-gc.ts); PARLEY_IDLE_GC=0 turns both off. */
  readonly idleGc: boolean;
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
  /** Issue 15: largest accepted upload in MiB (Zulip's MAX_FILE_UPLOAD_SIZE, default 25); /register's max_file_upload_size_mib. */
  readonly maxFileUploadSizeMib: number;
  /** S3-compatible storage for uploads; unset bucket: files on local disk under dataDir/uploads. */
  readonly s3: {
    readonly bucket: string | undefined;
    readonly endpoint: string | undefined;
    readonly region: string;
    readonly accessKeyId: string | undefined;
    readonly secretAccessKey: string | undefined;
    readonly forcePathStyle: boolean;
    readonly prefix: string;
  };
  /** Days an upload no message links may stay before the cleaner removes it (Zulip: DELETE_UNCLAIMED_ATTACHMENTS weeks). */
  readonly uploadGraceDays: number;
  /** How often the unclaimed-upload cleaner runs (ms); 0 turns it off. */
  readonly uploadCleanerIntervalMs: number;
  /** Lifetime of /user_uploads/temporary/... URLs in seconds (Zulip: 60). */
  readonly temporaryUrlSeconds: number;
  /** Fetch remote pages for link previews (message_embed); off by default. */
  readonly linkPreviews: boolean;
  /** Link preview fetch limits: total time (ms) and bytes read. */
  readonly linkPreviewTimeoutMs: number;
  readonly linkPreviewMaxBytes: number;
  /** Web app sign-ins last this many days (PARLEY_SESSION_DAYS, Zulip's SESSION_COOKIE_AGE is two weeks too). */
  readonly sessionDays: number;
  /** The built web app (index.html and static/), written by web/build.mjs; PARLEY_WEB_DIR overrides. */
  readonly webDir: string;
  /** Run the job scheduler (scheduled messages, reminders) in this process (PARLEY_SCHEDULER=0 turns it off). */
  readonly schedulerEnabled: boolean;
  /** Longest the scheduler sleeps between scans; bounds how late another process's new job is seen. */
  readonly schedulerPollMs: number;
  /** Time limit of one outgoing-webhook request (PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS; Zulip's OUTGOING_WEBHOOK_TIMEOUT_SECONDS is 10). */
  readonly outgoingWebhookTimeoutMs: number;
  /**
   * Outgoing webhooks may reach loopback, private, link-local and other
   * non-public addresses (PARLEY_OUTGOING_WEBHOOK_ALLOW_PRIVATE=1); off by default.
   */
  readonly outgoingWebhookAllowPrivate: boolean;
  /** Non-public addresses outgoing webhooks may reach even so (PARLEY_OUTGOING_WEBHOOK_ALLOWED_ADDRESSES, comma list of IPs). */
  readonly outgoingWebhookAllowedAddresses: readonly string[];
}

/** dist/web of the package this module belongs to (src/config.ts in tests, dist/src/config.js when built). */
function defaultWebDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'web');
    dir = path.dirname(dir);
  }
  return path.resolve('dist/web');
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * The fallback fake email domain. Zulip's default is the host itself (useless
 * when the host is an IP address) and its test servers use zulip.testserver;
 * we take a name under the reserved .invalid TLD, which no mail can reach.
 */
export const DEFAULT_FAKE_EMAIL_DOMAIN = 'parley.invalid';

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const host = env.PARLEY_HOST || '127.0.0.1';
  const port = int(env, 'PARLEY_PORT', 9991);
  const externalHost = env.PARLEY_EXTERNAL_HOST || `${host}:${overrides.port ?? port}`;
  const fakeDomain = env.PARLEY_FAKE_EMAIL_DOMAIN || DEFAULT_FAKE_EMAIL_DOMAIN;
  // Zulip's get_fake_email_domain refuses a fallback that cannot form an address; we refuse it at start.
  if (!isValidEmailDomain(fakeDomain)) throw new Error(`PARLEY_FAKE_EMAIL_DOMAIN: ${JSON.stringify(fakeDomain)} is not a valid email domain`);
  const cost = env.PARLEY_PASSWORD_HASH_COST === 'fast' ? 'fast' : 'default';
  return {
    host,
    port,
    dataDir: path.resolve(env.PARLEY_DATA_DIR || './data'),
    databaseUrl: env.PARLEY_DATABASE_URL || undefined,
    ownerEmail: env.PARLEY_OWNER_EMAIL || 'owner@example.com',
    ownerPassword: env.PARLEY_OWNER_PASSWORD || undefined,
    externalHost,
    fakeEmailDomain: fakeDomain,
    externalScheme: env.PARLEY_EXTERNAL_SCHEME === 'https' ? 'https' : 'http',
    realmName: env.PARLEY_REALM_NAME || 'Parley',
    logLevel: env.PARLEY_LOG_LEVEL || 'info',
    passwordHashCost: cost,
    heartbeatMinMs: int(env, 'PARLEY_HEARTBEAT_MS', 45_000),
    heartbeatJitterMs: int(env, 'PARLEY_HEARTBEAT_JITTER_MS', 10_000),
    eventQueueMaxEvents: int(env, 'PARLEY_EVENT_QUEUE_MAX_EVENTS', 2000),
    smtpUrl: env.PARLEY_SMTP_URL || undefined,
    smtpFrom: env.PARLEY_SMTP_FROM || `noreply@${externalHost.split(':')[0]}`,
    smtpStartTls: env.PARLEY_SMTP_STARTTLS === 'require' || env.PARLEY_SMTP_STARTTLS === 'never' ? env.PARLEY_SMTP_STARTTLS : 'auto',
    smtpTlsVerify: env.PARLEY_SMTP_TLS_VERIFY !== '0' && env.PARLEY_SMTP_TLS_VERIFY !== 'false',
    smtpTimeoutMs: int(env, 'PARLEY_SMTP_TIMEOUT_MS', 30_000),
    smtpPoolSize: int(env, 'PARLEY_SMTP_POOL_SIZE', 2),
    redisUrl: env.PARLEY_REDIS_URL || undefined,
    redisKeyPrefix: env.PARLEY_REDIS_PREFIX || 'parley:',
    drainDelayMs: int(env, 'PARLEY_DRAIN_DELAY_MS', 0),
    idleGc: env.PARLEY_IDLE_GC !== '0' && env.PARLEY_IDLE_GC !== 'false',
    rateLimitPerUser: int(env, 'PARLEY_RATE_LIMIT_PER_USER', 200),
    botStorageLimit: int(env, 'PARLEY_BOT_STORAGE_LIMIT', 10_000_000),
    rateLimitPerIp: int(env, 'PARLEY_RATE_LIMIT_PER_IP', 100),
    loginFailLimit: int(env, 'PARLEY_LOGIN_FAIL_LIMIT', 5),
    loginFailWindowSec: int(env, 'PARLEY_LOGIN_FAIL_WINDOW_SEC', 1800),
    metricsEnabled: env.PARLEY_METRICS !== '0' && env.PARLEY_METRICS !== 'false',
    metricsToken: env.PARLEY_METRICS_TOKEN || undefined,
    maxFileUploadSizeMib: int(env, 'PARLEY_MAX_FILE_UPLOAD_SIZE_MIB', 25),
    s3: {
      bucket: env.PARLEY_S3_BUCKET || undefined,
      endpoint: env.PARLEY_S3_ENDPOINT || undefined,
      region: env.PARLEY_S3_REGION || 'us-east-1',
      accessKeyId: env.PARLEY_S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.PARLEY_S3_SECRET_ACCESS_KEY || undefined,
      forcePathStyle: env.PARLEY_S3_FORCE_PATH_STYLE === '1' || env.PARLEY_S3_FORCE_PATH_STYLE === 'true',
      prefix: env.PARLEY_S3_PREFIX ?? '',
    },
    uploadGraceDays: int(env, 'PARLEY_UPLOAD_GRACE_DAYS', 21),
    uploadCleanerIntervalMs: int(env, 'PARLEY_UPLOAD_CLEANER_INTERVAL_MS', 3_600_000),
    temporaryUrlSeconds: int(env, 'PARLEY_TEMPORARY_URL_SECONDS', 60),
    linkPreviews: env.PARLEY_LINK_PREVIEWS === '1' || env.PARLEY_LINK_PREVIEWS === 'true',
    linkPreviewTimeoutMs: int(env, 'PARLEY_LINK_PREVIEW_TIMEOUT_MS', 5000),
    linkPreviewMaxBytes: int(env, 'PARLEY_LINK_PREVIEW_MAX_BYTES', 1_048_576),
    sessionDays: int(env, 'PARLEY_SESSION_DAYS', 14),
    webDir: env.PARLEY_WEB_DIR ? path.resolve(env.PARLEY_WEB_DIR) : defaultWebDir(),
    schedulerEnabled: env.PARLEY_SCHEDULER !== '0' && env.PARLEY_SCHEDULER !== 'false',
    schedulerPollMs: int(env, 'PARLEY_SCHEDULER_POLL_MS', 5000),
    outgoingWebhookTimeoutMs: int(env, 'PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS', 10_000),
    outgoingWebhookAllowPrivate: env.PARLEY_OUTGOING_WEBHOOK_ALLOW_PRIVATE === '1' || env.PARLEY_OUTGOING_WEBHOOK_ALLOW_PRIVATE === 'true',
    outgoingWebhookAllowedAddresses: (env.PARLEY_OUTGOING_WEBHOOK_ALLOWED_ADDRESSES ?? '')
      .split(',')
      .map((a) => a.trim().toLowerCase())
      .filter((a) => a !== ''),
    ...overrides,
  };
}

/** The realm's base URL, e.g. http://127.0.0.1:9991 */
export function realmUrl(config: Config): string {
  return `${config.externalScheme}://${config.externalHost}`;
}

/**
 * Domain of bot emails and dummy API emails user{id}@{domain}, as Zulip's
 * get_fake_email_domain: the external host without its port when
 * "bot@{host}" is a valid address (a name, or `localhost`), else
 * PARLEY_FAKE_EMAIL_DOMAIN (an IP address such as 127.0.0.1 cannot form one).
 */
export function fakeEmailDomain(config: Config): string {
  const h = config.externalHost;
  // Every presented user needs it: remember the answer for the last host and fallback.
  if (h === lastFake.host && config.fakeEmailDomain === lastFake.fallback) return lastFake.domain;
  const host = h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.split(':')[0]!;
  const domain = isValidEmailDomain(host) ? host : config.fakeEmailDomain;
  lastFake = { host: h, fallback: config.fakeEmailDomain, domain };
  return domain;
}
let lastFake: { readonly host: string | undefined; readonly fallback: string | undefined; readonly domain: string } = { host: undefined, fallback: undefined, domain: '' };

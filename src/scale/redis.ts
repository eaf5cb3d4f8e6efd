import type { Redis } from 'ioredis';
import { lazyRequire } from '../lazy.js';

// Loaded only in Redis mode (PARLEY_REDIS_URL).
const ioredis = lazyRequire<typeof import('ioredis')>('ioredis');
import type { Logger } from 'pino';
import { linkifierCache } from '../domain/access/linkifiers.js';
import { realmEmojiCache } from '../domain/access/realm-emoji.js';
import { RedisRateLimiter } from '../domain/rules/rate-limit-redis.js';
import { RedisBus } from '../events/redis-bus.js';
import { RedisQueueStore } from '../events/redis-queue-store.js';
import { RedisPresence } from './redis-presence.js';
import type { Db, Store } from '../store/db.js';

/**
 * Scale-out wiring (PARLEY_REDIS_URL): the event queues, the event bus, rate
 * limits and cache invalidation go through Redis, so any number of identical
 * processes on one PostgreSQL database serve any request, including any
 * queue's GET /events, and presence. Three connections per process: commands, and two in
 * subscriber mode (queue growth, bus broadcast).
 */
export interface RedisServices {
  readonly queueStore: RedisQueueStore;
  readonly bus: RedisBus;
  readonly limiter: RedisRateLimiter;
  /** Presence shared by the processes (domain/presence-state.ts keeps a replica). */
  readonly presence: RedisPresence;
  /** Resolves when Redis answers PING (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

function connect(url: string, log: Logger, role: string): Redis {
  // Commands wait (queued by ioredis) while Redis restarts or fails over, then run.
  // Auto-pipelining: the commands of one tick (e.g. a fan-out's 1,000 parked polls reading their queues) share one round trip.
  const r = new (ioredis().Redis)(url, { maxRetriesPerRequest: 20, enableAutoPipelining: true, connectionName: `parley-${role}` });
  r.on('error', (err: Error) => log.warn({ err: err.message, role }, 'redis connection error'));
  return r;
}

export async function openRedisServices(opts: {
  readonly url: string;
  readonly prefix: string;
  readonly maxEvents: number;
  readonly store: Store;
  readonly db: Db;
  readonly clearAuthCache: () => void;
  readonly log: Logger;
}): Promise<RedisServices> {
  const cmd = connect(opts.url, opts.log, 'cmd');
  const queueSub = connect(opts.url, opts.log, 'queues');
  const busSub = connect(opts.url, opts.log, 'bus');
  const queueStore = new RedisQueueStore(cmd, queueSub, opts.prefix, opts.maxEvents);
  const bus = new RedisBus(cmd, busSub, opts.prefix, {
    // Another process wrote users/realms: the same as a local write (auth cache, realm row, presence directory).
    onRemoteWrite: () => {
      opts.store.userWrites.notify();
      opts.clearAuthCache();
    },
    watchWrites: (fn) => opts.store.userWrites.onWrite(fn),
    log: opts.log,
  });
  // Per-realm caches that their owning actions invalidate: forget them when another process changed them.
  bus.subscribe((deliveries, origin) => {
    if (origin !== 'remote') return;
    for (const d of deliveries) {
      if (d.event.type === 'realm_linkifiers') linkifierCache.invalidate(opts.db);
      if (d.event.type === 'realm_emoji') realmEmojiCache.invalidate(opts.db);
    }
  });
  await Promise.all([queueStore.ready(), bus.ready()]);
  return {
    queueStore,
    bus,
    limiter: new RedisRateLimiter(cmd, opts.prefix),
    presence: new RedisPresence(cmd, opts.prefix),
    async ping() {
      await cmd.ping();
    },
    async close() {
      // Acknowledgements and connection times taken from owned-queue copies and not yet written.
      await queueStore.flush().catch(() => undefined);
      await Promise.all([cmd, queueSub, busSub].map((r) => r.quit().catch(() => r.disconnect())));
    },
  };
}

/** Deletes every key under a prefix (tests and benchmarks clean up their own namespace). */
export async function purgeRedisPrefix(url: string, prefix: string): Promise<number> {
  const r = new (ioredis().Redis)(url, { maxRetriesPerRequest: 3 });
  let n = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) n += await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
  return n;
}

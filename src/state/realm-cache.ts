import type { AppCtx } from '../domain/context.js';
import type { RegisterContext } from './types.js';

/**
 * Realm-wide reads of POST /register (the realm's users, channels, groups,
 * group memberships and subscriber counts: what every client of the realm
 * reads alike), kept between registrations (performance.md P3: they were
 * two thirds of its SQL time).
 *
 * Invalidation, exact by construction rather than by each write path:
 * - every INSERT/UPDATE/DELETE through this process's Kysely handle on a
 *   table the values derive from moves store.realmWrites (store/db.ts
 *   REALM_CACHE_TABLES, a write-watch plugin, as the auth cache's);
 * - a commit by any other connection to the SQLite file (another worker in
 *   Redis mode, the CLI) moves PRAGMA data_version, read once per registration.
 * An entry is used only while both are what they were before it was read, so
 * a write racing with the read leaves it stale-marked, never served.
 *
 * PostgreSQL has no counterpart of data_version (other processes' commits
 * cannot be seen without a round trip of their own): there every read runs,
 * as before. Values are frozen: they are shared by concurrent registrations.
 */

interface Entry {
  readonly generation: string;
  readonly value: Promise<unknown>;
}

const caches = new WeakMap<AppCtx, Map<string, Entry>>();

/** What the cache needs of a registration: the app, the realm, the registration's memo. */
type CacheScope = Pick<RegisterContext, 'app' | 'shared'> & { readonly user: { readonly realmId: number } };

/** The generation this registration's reads belong to, or undefined when nothing may be cached. */
function generationOf(ctx: CacheScope): string | undefined {
  const store = ctx.app.store;
  if (!store.dataVersion || !ctx.shared) return undefined;
  let gen = ctx.shared.get('realmCacheGeneration') as string | undefined;
  if (gen === undefined) {
    // Read after the queue exists (registerClient): anything committed since is in the queue.
    // undefined while this connection has a transaction open: reads may then come from the last
    // committed state (store/db.ts) while the write counter already counts uncommitted writes.
    const version = store.dataVersion();
    gen = version === undefined ? '' : `${store.realmWrites.writes}:${version}`;
    ctx.shared.set('realmCacheGeneration', gen as unknown as Promise<unknown>);
  }
  return gen === '' ? undefined : gen;
}

/**
 * `read()` for the caller's realm under `key`, from the cache while the
 * generation is unchanged. A read that fails is not kept.
 */
export function realmCached<T>(ctx: RegisterContext, key: string, read: () => Promise<T>): Promise<T> {
  // Memoized per registration like state/shared.ts once() (modules run concurrently).
  const memoKey = `realm:${key}`;
  const memo = ctx.shared?.get(memoKey) as Promise<T> | undefined;
  if (memo) return memo;
  const p = cachedRead(ctx, key, read);
  ctx.shared?.set(memoKey, p);
  return p;
}

function cachedRead<T>(ctx: CacheScope, key: string, read: () => Promise<T>): Promise<T> {
  const generation = generationOf(ctx);
  if (generation === undefined) return read();
  let byKey = caches.get(ctx.app);
  if (!byKey) caches.set(ctx.app, (byKey = new Map()));
  const full = `${ctx.user.realmId}:${key}`;
  const hit = byKey.get(full);
  if (hit && hit.generation === generation) return hit.value as Promise<T>;
  const writesBefore = ctx.app.store.realmWrites.writes;
  const value = read().then((v) => deepFreeze(v));
  const entry: Entry = { generation, value };
  byKey.set(full, entry);
  // A local write while reading: the entry may hold pre-write rows under the old generation, which
  // the moved counter already makes unusable; drop it now rather than keep it until the next miss.
  value.then(
    () => {
      if (ctx.app.store.realmWrites.writes !== writesBefore && byKey.get(full) === entry) byKey.delete(full);
    },
    () => {
      if (byKey.get(full) === entry) byKey.delete(full);
    },
  );
  return value;
}

/**
 * The value cached under `key` if it is current for this registration (the
 * same generation rule), without reading on a miss; undefined otherwise.
 */
export function peekRealmCache<T>(ctx: CacheScope, key: string): Promise<T> | undefined {
  const generation = generationOf(ctx);
  if (generation === undefined) return undefined;
  const hit = caches.get(ctx.app)?.get(`${ctx.user.realmId}:${key}`);
  return hit && hit.generation === generation ? (hit.value as Promise<T>) : undefined;
}

/**
 * Drops the caller's realm's value under `key` (a value that is only valid
 * for a time, e.g. the presented channels, once that time has passed).
 */
export function forgetRealmCache(ctx: CacheScope, key: string): void {
  caches.get(ctx.app)?.delete(`${ctx.user.realmId}:${key}`);
}

/** Drops every cached value of an app (tests compare with a fresh read). */
export function clearRealmCache(app: AppCtx): void {
  caches.delete(app);
}

/** Freezes rows, arrays and objects; a Map cannot be frozen, so only its values are. */
function deepFreeze<T>(v: T): T {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
  if (v instanceof Map) {
    for (const x of v.values()) deepFreeze(x);
    return v;
  }
  Object.freeze(v);
  for (const x of Object.values(v as object)) deepFreeze(x);
  return v;
}

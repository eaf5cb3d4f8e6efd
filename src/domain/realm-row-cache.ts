import type { AppCtx } from './context.js';
import { realmById, type RealmRow } from '../store/realms.js';

/**
 * The realm row, read once and reused until anything writes to `realms` or
 * `users`: the store's write watch counts those writes (it also drops the
 * auth cache), so a cached row is valid exactly while the counter has not
 * moved. Message sends and fetches read the realm's settings on every request.
 */
const cache = new WeakMap<AppCtx, Map<number, { writes: number; row: RealmRow }>>();

export async function realmOf(app: AppCtx, realmId: number): Promise<RealmRow> {
  let byRealm = cache.get(app);
  if (!byRealm) cache.set(app, (byRealm = new Map()));
  const writes = app.store.userWrites.writes;
  const hit = byRealm.get(realmId);
  if (hit && hit.writes === writes) return hit.row;
  const row = await realmById(app.db, realmId);
  if (!row) throw new Error(`realm ${realmId} not found`);
  // Only cache when no write happened while reading.
  if (app.store.userWrites.writes === writes) byRealm.set(realmId, { writes, row });
  return row;
}

/** The cached realm row if it is current, without reading (safe inside a transaction). */
export function peekRealm(app: AppCtx, realmId: number): RealmRow | undefined {
  const hit = cache.get(app)?.get(realmId);
  return hit && hit.writes === app.store.userWrites.writes ? hit.row : undefined;
}

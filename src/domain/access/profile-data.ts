import type { AppCtx } from '../context.js';
import { profileDataByUser, type ProfileData } from '../../store/profile-fields.js';

/**
 * GET /users/me carries the caller's profile_data, and that endpoint is the
 * cheapest authenticated read (performance target P1: no SQL once the key is
 * cached). So each process remembers users' profile_data, and forgets it
 * when the event bus carries a profile change (custom_profile_fields, or a
 * realm_user update with custom_profile_field): every change is an action,
 * every action's events go through the bus, and the bus reaches every
 * process. A generation counter keeps a read that raced with a change from
 * caching the old value.
 */
interface Cache {
  readonly data: Map<number, ProfileData>;
  generation: number;
}

const caches = new WeakMap<AppCtx, Cache>();
const MAX_ENTRIES = 10_000;

function cacheFor(app: AppCtx): Cache {
  let cache = caches.get(app);
  if (!cache) {
    const created: Cache = { data: new Map(), generation: 0 };
    app.bus.subscribe((deliveries) => {
      for (const d of deliveries) {
        const person = d.event.person as { custom_profile_field?: unknown } | undefined;
        if (d.event.type === 'custom_profile_fields' || (d.event.type === 'realm_user' && person?.custom_profile_field !== undefined)) {
          created.generation++;
          created.data.clear();
          return;
        }
      }
    });
    caches.set(app, created);
    cache = created;
  }
  return cache;
}

/** The cached profile_data of a user, if this process has it (no promise: GET /users/me's fast path). */
export function cachedOwnProfileData(app: AppCtx, userId: number): ProfileData | undefined {
  return cacheFor(app).data.get(userId);
}

export async function ownProfileData(app: AppCtx, realmId: number, userId: number): Promise<ProfileData> {
  const cache = cacheFor(app);
  const hit = cache.data.get(userId);
  if (hit) return hit;
  const generation = cache.generation;
  const data = (await profileDataByUser(app.db, realmId, [userId])).get(userId) ?? {};
  if (cache.generation === generation) {
    if (cache.data.size >= MAX_ENTRIES) cache.data.clear();
    cache.data.set(userId, data);
  }
  return data;
}

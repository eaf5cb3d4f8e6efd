import { z } from 'zod';
import { doRemoveBotStorage, doSetBotStorage } from '../../domain/actions/bot-storage.js';
import { transact } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { storageOfUser } from '../../store/bot-storage.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/**
 * GET/PUT/DELETE /bot_storage (Zulip's zerver/views/storage.py). Zulip's
 * views check no role: any authenticated user (in practice a generic or
 * embedded bot using its own key) reads and writes its own storage; an
 * incoming-webhook bot is refused by authentication, as for every REST route.
 * `keys` absent or empty means every stored key (Zulip's `keys or ...`).
 * Checked against zerver/views/storage.py: no role check there.
 */
const keyList = z.array(z.string());

export const getBotStorage = endpoint({
  method: 'GET',
  path: '/bot_storage',
  auth: 'user',
  params: { keys: p.json(keyList).optional() },
  handler: async (ctx, { keys }) => {
    const stored = new Map((await storageOfUser(ctx.app.db, ctx.user.id)).map((e) => [e.key, e.value]));
    const storage: Record<string, string> = {};
    // Zulip: `keys or all keys`, so an empty list means every key too.
    for (const key of keys && keys.length > 0 ? keys : [...stored.keys()]) {
      const value = stored.get(key);
      if (value === undefined) throw badRequest('Key does not exist.');
      storage[key] = value;
    }
    return { storage };
  },
});

export const updateBotStorage = endpoint({
  method: 'PUT',
  path: '/bot_storage',
  auth: 'user',
  params: { storage: p.json(z.record(z.string(), z.string())) },
  handler: async (ctx, { storage }) => {
    await transact(ctx.app, (tx) => doSetBotStorage(tx, ctx.user.id, ctx.app.config.botStorageLimit, Object.entries(storage)));
    return {};
  },
});

export const removeBotStorage = endpoint({
  method: 'DELETE',
  path: '/bot_storage',
  auth: 'user',
  params: { keys: p.json(keyList).optional() },
  handler: async (ctx, { keys }) => {
    await transact(ctx.app, (tx) => doRemoveBotStorage(tx, ctx.user.id, keys && keys.length > 0 ? keys : undefined));
    return {};
  },
});

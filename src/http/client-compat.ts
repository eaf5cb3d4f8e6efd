import fs from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import { notFound } from '../domain/errors.js';
import { presenceOf } from '../domain/presence-state.js';
import { emojiFilePath } from '../store/emoji-files.js';

/**
 * Issue 10's pieces outside the route table:
 * - custom emoji images, GET /user_avatars/{realm_id}/emoji/images/{file}
 *   and .../images/still/{file}, served without authentication as Zulip
 *   serves them (the random file names keep them from being enumerated);
 * - the presence state's lifecycle: read back from the database when the
 *   server gets ready, written through periodically, and flushed when the
 *   server closes (before the store does).
 */
export function registerClientCompat(fastify: FastifyInstance, app: AppCtx): void {
  const serve = (still: boolean) => async (req: { params: unknown }, reply: import('fastify').FastifyReply) => {
    const { realm_id: realmId, file } = req.params as { realm_id: string; file: string };
    const found = emojiFilePath(app.config.dataDir, realmId, file, still);
    let data: Buffer;
    try {
      if (!found) throw notFound();
      data = await fs.readFile(found.file);
    } catch {
      throw notFound();
    }
    return reply.code(200).header('content-type', found!.type).header('cache-control', 'public, max-age=31536000, immutable').send(data);
  };
  fastify.get('/user_avatars/:realm_id/emoji/images/:file', serve(false));
  fastify.get('/user_avatars/:realm_id/emoji/images/still/:file', serve(true));

  const presence = presenceOf(app);
  fastify.addHook('onReady', async () => presence.start());
  fastify.addHook('onClose', async () => presence.stop());
}

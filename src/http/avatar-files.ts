import fs from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import { notFound } from '../domain/errors.js';
import { avatarFilePath } from '../store/avatar-files.js';

/**
 * GET /user_avatars/{realm_id}/{stem}.png and {stem}-medium.png: uploaded
 * avatars, served without authentication as Zulip serves them (the random
 * stem is what keeps them from being enumerated). Only names Parley writes
 * are looked up; anything else is a 404.
 */
export function registerAvatarFiles(fastify: FastifyInstance, app: AppCtx): void {
  fastify.get('/user_avatars/:realm_id/:file', async (req, reply) => {
    const { realm_id: realmId, file } = req.params as { realm_id: string; file: string };
    const full = avatarFilePath(app.config.dataDir, realmId, file);
    let data: Buffer;
    try {
      if (!full) throw notFound();
      data = await fs.readFile(full);
    } catch {
      throw notFound();
    }
    return reply.code(200).header('content-type', 'image/png').send(data);
  });
}

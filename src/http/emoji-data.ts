import type { FastifyInstance } from 'fastify';
import { serverEmojiDataBody, serverEmojiDataPath } from '../domain/rules/server-emoji-data.js';

/**
 * GET {server_emoji_data_url}: the Unicode emoji names, without
 * authentication (the mobile app fetches it with useAuth: false), as a plain
 * JSON document with no result/msg envelope, like Zulip's static file. The
 * URL carries a content hash, so it may be cached for a year.
 */
export function registerEmojiData(fastify: FastifyInstance): void {
  fastify.get(serverEmojiDataPath(), async (_req, reply) =>
    reply.code(200).header('content-type', 'application/json').header('cache-control', 'public, max-age=31536000, immutable').send(serverEmojiDataBody()),
  );
}

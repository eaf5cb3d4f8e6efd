import type { FastifyInstance } from 'fastify';
import { notFound } from '../domain/errors.js';
import { serverEmojiDataBody, serverEmojiDataPath } from '../domain/rules/server-emoji-data.js';

const DIR = '/static/generated/emoji/';

/**
 * GET {server_emoji_data_url}: the Unicode emoji names, without
 * authentication (the mobile app fetches it with useAuth: false), as a plain
 * JSON document with no result/msg envelope, like Zulip's static file. The
 * URL carries a content hash, so it may be cached for a year.
 *
 * The route takes any file name in the directory and compares it with the
 * current one, rather than being registered under that name: the name needs the
 * document and its hash, built from the emoji table at the first request that
 * wants either (this one or a /register) instead of at every start (P10). Any
 * other name is a missing static file, as under /static/* (http/web.ts).
 */
export function registerEmojiData(fastify: FastifyInstance): void {
  fastify.get<{ Params: { file: string } }>(`${DIR}:file`, async (req, reply) => {
    if (DIR + req.params.file !== serverEmojiDataPath()) throw notFound();
    return reply.code(200).header('content-type', 'application/json').header('cache-control', 'public, max-age=31536000, immutable').send(serverEmojiDataBody());
  });
}

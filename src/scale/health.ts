import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../store/db.js';

/**
 * Load-balancer probes, outside /api/v1 (no auth, no rate limit):
 *   GET /health -> 200 {"status":"up"} while the process serves HTTP;
 *   GET /ready  -> 200 when the database (and Redis, when configured) answer,
 *                  503 while draining for shutdown or when a dependency fails.
 */
export class Health {
  draining = false;
  constructor(
    private readonly db: Db,
    private readonly redisPing: (() => Promise<void>) | undefined,
  ) {}

  async check(): Promise<{ ok: boolean; database: string; redis: string; draining: boolean }> {
    const timeout = <T>(p: Promise<T>): Promise<T> =>
      Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
    const database = await timeout(sql`select 1`.execute(this.db)).then(
      () => 'ok',
      (err: Error) => `error: ${err.message}`,
    );
    const redis = this.redisPing
      ? await timeout(this.redisPing()).then(
          () => 'ok',
          (err: Error) => `error: ${err.message}`,
        )
      : 'not configured';
    const ok = !this.draining && database === 'ok' && (redis === 'ok' || redis === 'not configured');
    return { ok, database, redis, draining: this.draining };
  }
}

export function registerHealthRoutes(fastify: FastifyInstance, health: Health): void {
  const headers = { 'content-type': 'application/json', 'cache-control': 'no-store' };
  fastify.get('/health', async (_req, reply) => reply.code(200).headers(headers).send('{"status":"up"}\n'));
  fastify.get('/ready', async (_req, reply) => {
    const r = await health.check();
    return reply
      .code(r.ok ? 200 : 503)
      .headers(headers)
      .send(JSON.stringify({ status: r.ok ? 'ready' : r.draining ? 'draining' : 'unavailable', database: r.database, redis: r.redis }) + '\n');
  });
}

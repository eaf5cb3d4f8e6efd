import { buildApp, bootstrapRealm } from './app.js';
import { loadConfig, realmUrl } from './config.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  await bootstrapRealm(app.ctx, { announce: true });
  await app.http.listen({ host: config.host, port: config.port });
  app.ctx.log.info({ url: realmUrl(config), store: app.ctx.store.dialect }, 'Parley is serving the web app at / and the API at /api/v1');

  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    app.ctx.log.info({ signal }, 'shutting down');
    try {
      // Readiness goes 503 first, so a load balancer stops sending new requests before the server closes.
      app.health.draining = true;
      if (config.drainDelayMs > 0) await new Promise((r) => setTimeout(r, config.drainDelayMs));
      await app.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`Parley failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});

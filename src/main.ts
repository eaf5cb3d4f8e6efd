// First: it holds the young generation small while the server's modules load and it starts (src/start-heap.ts).
import { startupDone } from './start-heap.js';
// Second: one of node's tick objects held for good, while V8 can still share their maps (src/tick-shape.ts).
import './tick-shape.js';

async function main(): Promise<void> {
  // Loaded after the line above has taken effect (static imports would all be loaded before it runs).
  const [{ buildApp, bootstrapRealm }, { loadConfig, realmUrl }] = await Promise.all([import('./app.js'), import('./config.js')]);
  const config = loadConfig();
  const app = await buildApp(config);
  const boot = await bootstrapRealm(app.ctx, { announce: true, initialContent: 'after-listen' });
  await app.http.listen({ host: config.host, port: config.port });
  // A new organization's channels and Welcome Bot's messages, once the server answers (app.ts).
  // A failure is logged: the organization and its owner exist, and the server keeps serving.
  const post = boot.postInitialContent;
  const posting = post && new Promise<void>((resolve) => setImmediate(resolve)).then(post).catch((err: unknown) => app.ctx.log.error({ err }, 'the initial channels and messages could not be posted'));
  // The start ends with them: until then the young generation stays small (P7, start-heap.ts).
  if (posting) void posting.then(startupDone);
  else startupDone();

  // Set in the same turn as the listen: no request can be answered before a stop is graceful.
  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return;
    closing = true;
    app.ctx.log.info({ signal }, 'shutting down');
    try {
      // Readiness goes 503 first, so a load balancer stops sending new requests before the server closes.
      app.health.draining = true;
      if (config.drainDelayMs > 0) await new Promise((r) => setTimeout(r, config.drainDelayMs));
      // A stop right after the first start lets Welcome Bot finish before the database closes.
      await posting;
      await app.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // Memory back after bursts, and parked polls promoted, once the server is quiet (P4, P6/P7); server processes only, never in tests.
  if (config.idleGc) (await import('./idle-gc.js')).startIdleGc();
  app.ctx.log.info({ url: realmUrl(config), store: app.ctx.store.dialect }, 'Parley is serving the web app at / and the API at /api/v1');
}

main().catch((err: unknown) => {
  process.stderr.write(`Parley failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});

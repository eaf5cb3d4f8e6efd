// The built Parley server (dist/) in a process that can be asked to collect
// garbage: each line "gc" on stdin runs two full GCs and prints
// process.memoryUsage() as one JSON line. Used by P6 to measure retained memory.
// Start with: node --expose-gc bench/support/gc-server.mjs  (env as for dist/src/main.js)
import readline from 'node:readline';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const { buildApp, bootstrapRealm } = await import(pathToFileURL(path.join(root, 'dist/src/app.js')).href);
const { loadConfig } = await import(pathToFileURL(path.join(root, 'dist/src/config.js')).href);

const config = loadConfig();
const app = await buildApp(config);
await bootstrapRealm(app.ctx, { announce: true });
await app.http.listen({ host: config.host, port: config.port });

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'gc') return;
  globalThis.gc();
  globalThis.gc();
  process.stdout.write(JSON.stringify({ ...process.memoryUsage(), parked: app.ctx.queues.parkedPolls }) + '\n');
});
process.on('SIGTERM', async () => {
  await app.close();
  process.exit(0);
});

import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config.js';
import { withServerNodeFlags } from '../node-flags.js';

/** What each worker runs: the server (main.js) with this process's node flags and the server's own (src/node-flags.ts). */
export function workerSettings(execArgv: readonly string[] = process.execArgv): { exec: string; execArgv: string[] } {
  return { exec: fileURLToPath(new URL('../main.js', import.meta.url)), execArgv: withServerNodeFlags(execArgv) };
}

/**
 * `parley cluster --workers N`: N identical server processes sharing one
 * port (node:cluster hands connections to the workers in turn). Needs
 * PARLEY_REDIS_URL when N > 1 (queues, bus, rate limits shared through
 * Redis); PostgreSQL is the intended store. The first worker starts alone
 * (migrations, first-start organization), the others once it listens. A
 * worker that dies is replaced; SIGTERM/SIGINT drain every worker (each
 * answers its parked polls and finishes in-flight requests) and then exit.
 */
export async function runCluster(workers: number): Promise<void> {
  const config = loadConfig();
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new Error('--workers must be an integer from 1 to 256');
  if (workers > 1 && !config.redisUrl) throw new Error('several workers need PARLEY_REDIS_URL (shared event queues and rate limits)');
  if (workers > 1 && !config.databaseUrl) process.stderr.write('parley: warning: several workers on SQLite serialize their writes; use PostgreSQL (PARLEY_DATABASE_URL)\n');
  cluster.setupPrimary(workerSettings());
  let stopping = false;
  const fork = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const w = cluster.fork();
      w.once('listening', () => resolve());
      w.once('exit', (code) => {
        if (!stopping) reject(new Error(`worker exited with code ${code} before listening`));
      });
    });
  await fork();
  await Promise.all(Array.from({ length: workers - 1 }, fork));
  process.stdout.write(`parley: ${workers} worker(s) serving on ${config.host}:${config.port}\n`);
  cluster.on('exit', (w, code, signal) => {
    if (stopping) return;
    process.stderr.write(`parley: worker ${w.process.pid} died (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    const live = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    let left = live.length;
    if (left === 0) process.exit(0);
    for (const w of live) {
      w.once('exit', () => {
        if (--left === 0) process.exit(0);
      });
      w.process.kill(signal);
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGTERM'));
}

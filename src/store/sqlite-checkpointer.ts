import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/**
 * WAL checkpoints off the event loop (issue 20, P8).
 *
 * better-sqlite3 is synchronous: with SQLite's automatic checkpoint, every
 * ~1,000 WAL pages one COMMIT also copies those pages into the database file
 * and fsyncs both files, and the whole server waits for it. A send to a
 * 50-subscriber channel dirties ~125 pages (a leaf per recipient in
 * user_messages and in its unread index), so under sustained sends that was
 * every ~8th commit, and the longest stalls of the p99.
 *
 * Once the WAL has grown past START_BYTES (an idle or small server never
 * gets there, so it costs no thread and no memory: P7), a worker thread
 * opens its own connection to the same file and runs PASSIVE checkpoints
 * every INTERVAL_MS. PASSIVE never takes the writer lock and never waits,
 * so the main connection is never blocked by it; the main connection keeps
 * an automatic checkpoint only as a backstop at BACKSTOP_PAGES (if the
 * worker cannot keep up, or dies: then the default comes back).
 */
const START_BYTES = 4 * 2 ** 20;
const WATCH_MS = 1000;
const INTERVAL_MS = 100;
const BACKSTOP_PAGES = 16_384;
const DEFAULT_PAGES = 1000;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    /* busy or locked: the next tick tries again */
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage('ready');
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(sqlite: SQLite.Database, file: string): Checkpointer {
  let worker: Worker | undefined;
  let stopped = false;
  let starting = false;
  const backToDefault = (): void => {
    if (!stopped && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
  };
  const start = (): void => {
    starting = true;
    const w = new Worker(WORKER, {
      eval: true,
      workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file, intervalMs: INTERVAL_MS },
    });
    w.unref();
    worker = w;
    w.once('message', () => {
      if (stopped || worker !== w || !sqlite.open) return;
      sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    });
    const gone = (): void => {
      if (worker === w) worker = undefined;
      backToDefault();
    };
    w.once('error', gone);
    w.once('exit', gone);
  };
  const watch = setInterval(() => {
    if (starting) return clearInterval(watch);
    fs.stat(file + '-wal', (err, st) => {
      if (!sqlite.open) return clearInterval(watch);
      if (!err && !starting && !stopped && st.size >= START_BYTES) {
        clearInterval(watch);
        start();
      }
    });
  }, WATCH_MS);
  watch.unref();
  return {
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(watch);
      const w = worker;
      worker = undefined;
      if (!w) return;
      await new Promise<void>((resolve) => {
        w.once('exit', () => resolve());
        w.once('error', () => resolve());
        w.postMessage('stop');
      });
    },
  };
}

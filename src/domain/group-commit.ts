import type { AppCtx, Tx } from './context.js';
import { oneStatement, transact } from './context.js';

/**
 * Group commit for independent writes that arrive together (message sends).
 * A commit costs far more than the rows it writes (SQLite rewrites every
 * touched page into the WAL; PostgreSQL flushes its WAL), and a message to a
 * channel touches one page per recipient in the per-user indexes. Sends that
 * queue up while a transaction runs therefore go into the next transaction
 * together: each unit still commits atomically (all of a batch or none), its
 * events still go out only after that commit, and if a batch fails, its units
 * are retried one transaction each so that one failure fails only its own
 * request.
 */
type Work<T> = (tx: Tx) => Promise<T>;
interface Pending {
  readonly work: Work<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

const MAX_BATCH = 64;
/**
 * Longest a batch waits for units still being prepared (their reads need the connection too).
 * SQLite: 4 ms. It has one writer, and a commit costs more than the rows it writes, so a batch
 * waits for the sends being checked to join it.
 * PostgreSQL: no wait. It runs several batches at once, and its own commit path flushes the WAL
 * of concurrent commits together. Measured with P9 at the maximum rate, 8 connections,
 * alternated builds, 2026-11-28 (docs/performance.md, "tenth session"): 501-577 msg/s
 * waiting 4 ms, 614-668 msg/s without the wait, with the same CPU per send.
 */
const MAX_WAIT_MS = { sqlite: 4, postgres: 0 } as const;

class Committer {
  private readonly pending: Pending[] = [];
  /** Batches in flight. SQLite has one connection (one at a time); PostgreSQL runs several. */
  private running = 0;
  private readonly maxRunning: number;
  private readonly maxWaitMs: number;
  /** Units announced (being checked) but not submitted yet. */
  private preparing = 0;
  constructor(private readonly app: AppCtx) {
    this.maxRunning = app.store.dialect === 'postgres' ? 4 : 1;
    this.maxWaitMs = MAX_WAIT_MS[app.store.dialect];
  }

  /** A unit is on its way: its checks run now and it will submit (or give up) soon. */
  announce(): () => void {
    this.preparing++;
    let done = false;
    return () => {
      if (!done) this.preparing--;
      done = true;
    };
  }

  /** Under load, give units that are still reading a moment to join the batch. */
  private async gather(): Promise<void> {
    const until = Date.now() + this.maxWaitMs;
    while (this.preparing > 0 && this.pending.length < MAX_BATCH && Date.now() < until) {
      await new Promise((r) => setImmediate(r));
    }
  }

  submit<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (this.running < this.maxRunning) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.pending.length) {
        await this.gather();
        const batch = this.pending.splice(0, MAX_BATCH);
        let results: unknown[] | undefined;
        try {
          results = await transact(this.app, async (tx) => {
            const out: unknown[] = [];
            for (const p of batch) out.push(await p.work(tx));
            return out;
          });
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else {
            for (const p of batch) {
              try {
                p.resolve(await transact(this.app, p.work));
              } catch (e) {
                p.reject(e);
              }
            }
          }
          continue;
        }
        batch.forEach((p, i) => p.resolve(results![i]));
      }
    } finally {
      this.running--;
    }
  }
}

const committers = new WeakMap<AppCtx, Committer>();

function committer(app: AppCtx): Committer {
  let c = committers.get(app);
  if (!c) committers.set(app, (c = new Committer(app)));
  return c;
}

/**
 * Announces a unit that will be submitted after its checks; call the returned
 * function when it is submitted or abandoned (a finally block).
 */
export const announceGroupCommit = (app: AppCtx): (() => void) => committer(app).announce();

/**
 * Runs `work` in a transaction, shared with other units submitted meanwhile.
 *
 * `oneStatement`: the caller guarantees that `work` writes with exactly one statement. On
 * PostgreSQL such a unit runs at once on its own, outside a transaction block (context.ts
 * oneStatement): the statement is atomic by itself, and a batch's BEGIN and COMMIT are two
 * round trips to the server (a channel send there is otherwise its channel read, BEGIN, the
 * insert and COMMIT). Measured with P9 at the maximum, 2026-11-28, a prototype of this path
 * switched on and off in one build, three rounds: 609-630 -> 641-718 msg/s, 952-1,028 -> 805-889
 * us of the server's CPU per send (docs/performance.md, "tenth session"). On SQLite it joins a batch as
 * any unit (a commit there costs far more than a statement, and statements cost no round trip).
 */
export function groupCommit<T>(app: AppCtx, work: Work<T>, announced?: () => void, opts?: { readonly oneStatement?: boolean }): Promise<T> {
  if (opts?.oneStatement && app.store.dialect === 'postgres') {
    announced?.();
    return oneStatement(app, work);
  }
  const c = committer(app);
  const p = c.submit(work);
  announced?.();
  return p;
}

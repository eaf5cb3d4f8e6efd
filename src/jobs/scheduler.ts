import type { Logger } from 'pino';

/**
 * Work that runs at a time: scheduled messages, reminders and outgoing-webhook requests. Each
 * kind of job is a JobSource over a table; the scheduler only decides WHEN
 * to look. Correctness across processes lives in the sources: a due row is
 * claimed (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: a conditional UPDATE)
 * and its effect commits together with the flag that marks it done, so each
 * job runs once however many processes scan the table. Nothing is kept in
 * memory that a restart could lose: at start, and on every wake-up, the
 * table says what is due.
 */
export interface JobSource {
  readonly name: string;
  /** Earliest due time (unix ms) of work still to do; null when none. */
  nextDueAt(): Promise<number | null>;
  /** Claims and runs what is due at `nowMs`; returns how many jobs it ran. */
  runDue(nowMs: number): Promise<number>;
}

export interface SchedulerOptions {
  /** Injectable clock (unix ms) for tests. */
  readonly now?: () => number;
  /**
   * Longest sleep between scans. Other processes' inserts are seen at the
   * latest after this long (this process's own inserts wake it at once).
   */
  readonly pollMs: number;
  readonly log: Logger;
}

/** Wakes the scheduler early: actions call it after committing new or changed jobs. */
export class JobWaker {
  private listener: (() => void) | undefined;
  listen(fn: () => void): void {
    this.listener = fn;
  }
  wake(): void {
    this.listener?.();
  }
}

export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private readonly now: () => number;

  constructor(
    private readonly sources: readonly JobSource[],
    private readonly opts: SchedulerOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Starts the loop: a first scan at once (jobs that fell due while no process ran are sent now). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  /** A job was added or moved: rescan now instead of at the planned time. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.cycle().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.wake();
      }
    });
  }

  /**
   * Runs every job due at `nowMs` (default: the clock) to completion and
   * returns how many ran. Tests call this instead of waiting.
   */
  async runDueNow(nowMs: number = this.now()): Promise<number> {
    // Sources run side by side: an outgoing webhook waiting for a slow bot server
    // does not hold up a scheduled message that falls due meanwhile.
    const counts = await Promise.all(
      this.sources.map(async (s) => {
        try {
          return await s.runDue(nowMs);
        } catch (err) {
          this.opts.log.error({ err, source: s.name }, 'scheduled jobs failed');
          return 0;
        }
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /** Stops waking; waits for a scan in progress so nothing is cut off half-way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async cycle(): Promise<void> {
    await this.runDueNow();
    if (this.stopped) return;
    let next: number | null = null;
    for (const s of this.sources) {
      try {
        const t = await s.nextDueAt();
        if (t !== null && (next === null || t < next)) next = t;
      } catch (err) {
        this.opts.log.error({ err, source: s.name }, 'reading the next due job failed');
      }
    }
    if (this.stopped) return;
    const now = this.now();
    const delay = next === null ? this.opts.pollMs : Math.max(0, Math.min(this.opts.pollMs, next - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, delay);
    this.timer.unref();
  }
}

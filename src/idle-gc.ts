import v8 from 'node:v8';
import vm from 'node:vm';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * Gives memory back once the server goes quiet (performance.md P6, P7).
 *
 * V8 collects its old generation only when it grows past a limit, so after a
 * burst (thousands of clients registering and parking their polls, a
 * reconnect storm) the garbage of that burst stays resident, possibly for
 * hours if the server then idles: measured, an idle client cost 20.9 KB of
 * RSS as left by the burst against 10.1 KB once collected. Browsers have a
 * "memory reducer" for this; node does not run one. This is ours: every
 * INTERVAL_MS it looks at the event loop's utilization over the interval and
 * the heap's growth since the last full collection, and when the loop was
 * nearly idle for growthTicks intervals in a row and the heap grew by
 * GROWTH_BYTES it runs one full collection. A busy server is never interrupted
 * (the collection waits for quiet), and an idle server that has not grown is
 * never collected again.
 */
export interface IdleGcSource {
  /** Event-loop utilization (0..1) since the previous call. */
  utilization(): number;
  /** Bytes of JS heap in use. */
  heapUsed(): number;
  /** A full garbage collection. */
  collect(): void;
  /** Bytes the young generation holds (grown by bursts, given back only by a full collection at a low allocation rate). */
  youngSize?(): number;
  /** A monotonic clock, ms (for opts.settleShare). */
  now?(): number;
}

/**
 * `afterStart`: full collections at the first quiet interval, whatever the growth. The
 * start (modules, routes, migrations, the first organization) leaves some 4 MB of
 * garbage in the old generation that no collection would otherwise reclaim while the
 * server idles; two collections back to back give those pages back (measured: one
 * alone frees the objects but not yet the pages; performance.md P7).
 */
export const IDLE_GC_DEFAULTS: IdleGcOptions = { intervalMs: 500, growthBytes: 8 * 2 ** 20, idleUtilization: 0.05, growthTicks: 4, afterStart: 2, settleTicks: 12, settleShare: 0.01 };

export interface IdleGcOptions {
  readonly intervalMs: number;
  readonly growthBytes: number;
  readonly idleUtilization: number;
  /**
   * Quiet intervals in a row before a growth collection (default 1: the first quiet interval).
   * A server with bursts of work a few hundred ms apart (a fan-out to parked polls, then the
   * re-polls) has a quiet interval between most bursts; collecting in each one ran V8's full
   * collections every two or three bursts, and each one dropped optimized code whose embedded
   * maps had no live object between bursts: the next burst ran on recompiled and deoptimized
   * code, the recompiling on V8's helper threads (measured, docs/performance.md, "2026-12-02,
   * night"). Several quiet intervals in a row mean the server has gone quiet.
   */
  readonly growthTicks?: number;
  readonly afterStart?: number;
  /**
   * Quiet intervals in a row after which, when the young generation is larger than the
   * smallest seen, one more full collection runs (once per busy period). A burst grows
   * V8's young generation to its maximum (2 x 16 MB, all resident), and V8 gives it back
   * only at a full collection that finds the allocation rate of the last 5 s low, which
   * the collection right after the burst is too early for. Measured (P6): 3,000 idle
   * clients left it at 31.5 MB resident against 11.3 before the burst, some 8 KB per
   * client that was no client's. 0: never.
   */
  readonly settleTicks?: number;
  /**
   * The largest share of the time settling collections may take: after one that paused the
   * server d ms, the next waits at least d / settleShare ms (a full collection pauses in
   * proportion to the heap, so a large server busy in bursts a few seconds apart does not pause
   * after every burst). Needs the source's clock. Default: no spacing.
   */
  readonly settleShare?: number;
}

export class IdleCollector {
  /** Heap in use right after the last collection (or at start). */
  private base: number;
  /** Collections still due at the first quiet interval (opts.afterStart). */
  private startPending: number;
  /** Quiet intervals in a row. */
  private quiet = 0;
  /** Whether the loop was busy (or a growth collection ran) since the last settling collection. */
  private armed = false;
  /** When the next settling collection may run (opts.settleShare), in the source's clock. */
  private settleAfter = -Infinity;
  /** The smallest young generation seen. */
  private youngMin: number;
  collections = 0;
  constructor(
    private readonly source: IdleGcSource,
    private readonly opts: IdleGcOptions = IDLE_GC_DEFAULTS,
  ) {
    this.base = source.heapUsed();
    this.startPending = opts.afterStart ?? 0;
    this.youngMin = source.youngSize?.() ?? 0;
  }

  /** One look: collects when the last interval was idle and the heap grew enough (or the start's or the settling collection is due). */
  tick(): boolean {
    const busy = this.source.utilization();
    const used = this.source.heapUsed();
    if (used < this.base) this.base = used;
    if (busy > this.opts.idleUtilization) {
      this.quiet = 0;
      this.armed = true;
      return false;
    }
    this.quiet++;
    if (this.startPending > 0) {
      this.collectTimes(this.startPending);
      this.startPending = 0;
      this.quiet = 0;
      return true;
    }
    if (this.quiet >= (this.opts.growthTicks ?? 1) && used - this.base >= this.opts.growthBytes) {
      // The quiet count goes on: settleTicks are counted from the end of the busy period.
      this.armed = true;
      this.collectTimes(1);
      return true;
    }
    const settleTicks = this.opts.settleTicks ?? 0;
    if (!this.armed || settleTicks === 0 || this.quiet < settleTicks || !this.source.youngSize) return false;
    const share = this.opts.settleShare;
    const clock = share !== undefined && this.source.now !== undefined;
    if (clock && this.source.now!() < this.settleAfter) return false;
    this.armed = false;
    const young = this.source.youngSize();
    if (young < this.youngMin) this.youngMin = young;
    if (young <= this.youngMin) return false;
    const started = clock ? this.source.now!() : 0;
    this.collectTimes(1);
    if (clock) {
      const ended = this.source.now!();
      this.settleAfter = ended + (ended - started) / share!;
    }
    const after = this.source.youngSize();
    if (after < this.youngMin) this.youngMin = after;
    return true;
  }

  private collectTimes(times: number): void {
    for (let i = 0; i < times; i++) this.source.collect();
    this.collections += times;
    this.base = this.source.heapUsed();
    // The collection's own pause (20-50 ms of a 500 ms interval) is not load: without this read the
    // next tick saw the interval as busy, restarted the quiet count and re-armed the settling collection.
    this.source.utilization();
  }
}

/**
 * Long-lived young objects promoted while the server is quiet (performance.md P4).
 *
 * A parked long poll lives until its queue gets an event or a heartbeat, seconds to
 * minutes, and all of it (node's request, response and socket state, the queue's
 * waiter) starts in V8's young generation. After a fan-out every client polls again
 * at once, so thousands of such objects are young together, and V8 copies them at
 * the next two scavenges: once within the young generation, then into the old one.
 * Those scavenges come when the young generation fills, which is during the next
 * burst of work, typically the next fan-out, because the server allocates little
 * while it waits. Measured on the P4 bench (1,000 clients): a scavenge inside most
 * fan-out windows, 12-45 ms each on a slow spell of the host, copying 2-4.7 MB of
 * parked polls to the old generation while the clients waited for their answers.
 *
 * This runs those two scavenges when the loop has been quiet for an interval and the
 * young generation holds at least `youngBytes`, so the copying happens while nobody
 * waits. A scavenge costs in proportion to what survives it, so one run early costs
 * what it would have cost later, less what would have died meanwhile (little, when
 * the server is quiet). A busy server is never interrupted: it scavenges as V8 would.
 */
export interface QuietScavengeSource {
  /** Event-loop utilization (0..1) since the previous call. */
  utilization(): number;
  /** Bytes in use in the young generation. */
  youngUsed(): number;
  /** One young-generation collection (a scavenge). */
  scavenge(): void;
}

export interface QuietScavengeOptions {
  readonly intervalMs: number;
  readonly idleUtilization: number;
  readonly youngBytes: number;
}

export const QUIET_SCAVENGE_DEFAULTS: QuietScavengeOptions = { intervalMs: 100, idleUtilization: 0.05, youngBytes: 2 ** 20 };

export class QuietScavenger {
  scavenges = 0;
  constructor(
    private readonly source: QuietScavengeSource,
    private readonly opts: QuietScavengeOptions = QUIET_SCAVENGE_DEFAULTS,
  ) {}

  /** One look: two scavenges (what promotes a surviving young object) when the last interval was quiet and the young generation holds enough. */
  tick(): boolean {
    if (this.source.utilization() > this.opts.idleUtilization) return false;
    if (this.source.youngUsed() < this.opts.youngBytes) return false;
    this.source.scavenge();
    this.source.scavenge();
    this.scavenges += 2;
    return true;
  }
}

/**
 * V8's own gc() without starting node with --expose-gc: the flag is set only
 * while a fresh context picks the function up, then restored (V8's code
 * cache, src/code-cache.ts, is keyed by the flags in force).
 */
type V8Gc = (options?: { type: 'major' | 'minor' }) => void;
function v8Gc(): V8Gc {
  const existing = (globalThis as { gc?: V8Gc }).gc;
  if (typeof existing === 'function') return existing;
  v8.setFlagsFromString('--expose-gc');
  try {
    return vm.runInNewContext('gc') as V8Gc;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

/** V8's young generation (its heap space statistics). */
const newSpace = (): v8.HeapSpaceInfo | undefined => v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');

/** Event-loop utilization since the previous call of the function returned. */
function utilizationSince(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

/**
 * Starts the idle collector and the quiet scavenger of a server process (main.ts); the
 * timers never keep the process alive.
 */
export function startIdleGc(opts = IDLE_GC_DEFAULTS, quiet: QuietScavengeOptions | null = QUIET_SCAVENGE_DEFAULTS): { collector: IdleCollector; scavenger: QuietScavenger | undefined; stop(): void } {
  // Made at the first collection, not at start: it creates a V8 context (about 1 ms), and this
  // runs right after the server starts listening, ahead of its first requests (P10).
  let gc: V8Gc | undefined;
  const collect = (): void => (gc ??= v8Gc())();
  const collector = new IdleCollector(
    {
      utilization: utilizationSince(),
      heapUsed: () => v8.getHeapStatistics().used_heap_size,
      collect,
      youngSize: () => newSpace()?.space_size ?? 0,
      now: () => performance.now(),
    },
    opts,
  );
  const timer = setInterval(() => collector.tick(), opts.intervalMs);
  timer.unref();
  const scavenger =
    quiet === null
      ? undefined
      : new QuietScavenger(
          {
            utilization: utilizationSince(),
            youngUsed: () => newSpace()?.space_used_size ?? 0,
            scavenge: () => (gc ??= v8Gc())({ type: 'minor' }),
          },
          quiet,
        );
  const quietTimer = scavenger && setInterval(() => scavenger.tick(), quiet!.intervalMs).unref();
  return {
    collector,
    scavenger,
    stop: () => {
      clearInterval(timer);
      clearInterval(quietTimer);
    },
  };
}

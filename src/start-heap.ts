import v8 from 'node:v8';

/**
 * Idle memory (performance.md P7). Loading and starting the server
 * allocates some 40 MB that survive, and V8 answers survivors by doubling
 * the young generation up to its maximum (2 x 16 MB) and keeping it, so an
 * idle server would hold 30 MB of mostly empty young generation. Imported
 * first by main.ts (so it runs before any other module is evaluated), this
 * holds the young generation at its starting size while the server starts;
 * once it listens, normal growth is back, so a loaded server sizes it as V8
 * would (measured: 15 MB less resident memory when idle, the same start
 * time; see docs/performance.md, "Start").
 */
const DEFAULT_GROWTH_FACTOR = 2;

/**
 * V8's optimizing compiler (TurboFan) is off while the server starts, too:
 * start-up runs most of its code once (route registration, schemas), and
 * optimizing what merely looked hot there cost some 15% of the start's CPU and
 * 10 MB of resident memory for good (the compiler's zones, allocated on V8's
 * worker threads, stay in their malloc arenas). Once the server listens,
 * TurboFan is back and optimizes what requests make hot, as it always would.
 * Left alone when node was started without it (--no-turbofan, --jitless).
 */
const turbofanByUs = !/--(no-turbofan|no-opt|jitless)\b/.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);

v8.setFlagsFromString('--semi-space-growth-factor=1');
if (turbofanByUs) v8.setFlagsFromString('--no-turbofan');

/** Called once the server listens. */
export function startupDone(): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  if (turbofanByUs) v8.setFlagsFromString('--turbofan');
  // The bundle's loader (src/code-cache.ts) writes V8's code cache now, with V8's flags
  // back to the defaults it compiled under (V8 rejects a cache made under other flags).
  const cacheHook = (globalThis as Record<symbol, unknown>)[Symbol.for('parley.startupDone')];
  if (typeof cacheHook === 'function') cacheHook();
}

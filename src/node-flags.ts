/**
 * Node flags the server is meant to run with: `npm start` (package.json) and the
 * workers of `parley cluster` pass them, and the benchmarks start the server with
 * them. A process manager running `node dist/src/main.js` should pass them too;
 * the server works without them.
 *
 * `--max-semi-space-size=32`: V8's young generation may grow to 2 x 32 MB (node 20's
 * default maximum is 2 x 16 MB). A fan-out to 5,000 parked polls allocates about
 * 23 MB in one loop (4.7 KB per answer: the body, node's header block and write
 * state, measured with the sampling heap profiler), so with the default one or two
 * scavenges ran inside every such loop, each copying the answers still being
 * written: 9.5-18 ms apiece, 21-34 ms of a fan-out that took 160-235 ms. With room for the
 * whole loop the scavenge comes after it, when those answers are garbage (P4,
 * docs/performance.md, "2026-11-30"). The space grows only as the load needs it:
 * an idle server keeps its small young generation (src/start-heap.ts, P7).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/** `flags` with those of SERVER_NODE_FLAGS whose option `flags` does not already set. */
export function withServerNodeFlags(flags: readonly string[]): string[] {
  const name = (f: string): string => f.split('=')[0]!.replace(/_/g, '-');
  const given = new Set(flags.map(name));
  return [...flags, ...SERVER_NODE_FLAGS.filter((f) => !given.has(name(f)))];
}

import { AsyncResource } from 'node:async_hooks';

/**
 * Keeps an object with the map of node's tick objects alive for the life of
 * the process (P1, P4, P5; docs/performance.md, "fourth session" and "fifth
 * session").
 *
 * process.nextTick makes every tick object from one literal,
 * `{ [async_id_symbol]: ..., [trigger_async_id_symbol]: ..., callback, args }`.
 * V8 adds its two computed keys through map transitions that start at the root
 * map all 4-property object literals share. Transitions are weak: at a full
 * collection with no tick object alive, V8 drops them, and the next tick object
 * builds its maps again. A program of this server's size has used up V8's
 * transition limit on that root map (each 4-property literal with a first key of
 * its own adds a transition), so maps built after such a collection are no longer
 * shared: every tick object gets maps of its own, the store of its keys turns
 * megamorphic, and node's stream code calls into V8's runtime several times a
 * request for the rest of the process's life. Measured: 88-118 against 69-72 us of
 * CPU per GET /users/me; a bare node:http server holding 2,000 such literals does
 * the same, and stops doing it when it holds one tick object.
 *
 * The object below is built by the same literal, with node's own two symbols
 * (read from an AsyncResource, which carries the same keys), so it has the very
 * map of the tick objects and keeps the whole chain of transitions alive. The ids
 * are doubles because node's are (its counter is a Float64Array): with small
 * integers the literal would get a map of its own, which V8 deprecates at the
 * first real tick object (test/unit/tick-shape.test.ts checks the map is the
 * same). It is made before the rest of the server loads (main.ts imports it
 * second), while the root map can still take the transitions.
 *
 * The fourth session caught a real tick object with an async_hooks init hook
 * enabled around one nextTick call. Enabling one installs V8's promise hooks, and
 * V8 never returns to its fast path for await once they have been set: 72 against
 * 52 ns per await afterwards (medians of 10 alternated runs of 2 million awaits).
 * No hook is installed here.
 */
const ids = new AsyncResource('ParleyTickShape');
const symbols = Object.getOwnPropertySymbols(ids);
const asyncIdKey = symbols.find((s) => s.description === 'async_id_symbol');
const triggerIdKey = symbols.find((s) => s.description === 'trigger_async_id_symbol');

// Held by the global object, not by a variable of this module: in the server's bundle a
// top-level variable that no function refers to is a local of the bundle's function, and the
// object would be collected once the start returns.
const HELD = Symbol.for('parley.tickShape');
if (asyncIdKey !== undefined && triggerIdKey !== undefined && !(HELD in globalThis)) {
  const kept = { [asyncIdKey]: 0.5, [triggerIdKey]: 0.5, callback: noop, args: undefined };
  Object.defineProperty(globalThis, HELD, { value: kept, enumerable: false, writable: false, configurable: false });
}

function noop(): void {}

/** The object held (tests check that it has the map of node's tick objects). */
export function keptTickObject(): object | undefined {
  return (globalThis as Record<symbol, object | undefined>)[HELD];
}

import { createHook } from 'node:async_hooks';

/**
 * Keeps one of node's tick objects alive for the life of the process (P1, P4,
 * P5; docs/performance.md, "fourth session").
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
 * Imported by main.ts before any other of the server's modules load, while the
 * root map can still take the transition. The hook is enabled only for the one
 * synchronous nextTick call below. Left enabled, an init hook makes every await
 * 3-4x dearer (node installs promise hooks); enabled and disabled here, awaits
 * cost what they cost without it (measured: 132-184 against 139-178 ns).
 */
let kept: object | undefined;
const hook = createHook({
  init(_asyncId, type, _triggerAsyncId, resource) {
    if (type === 'TickObject' && kept === undefined) kept = resource;
  },
});
hook.enable();
try {
  process.nextTick(noop);
} finally {
  hook.disable();
}

function noop(): void {}

/** The tick object held (tests check that one was caught). */
export function keptTickObject(): object | undefined {
  return kept;
}

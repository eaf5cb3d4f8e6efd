import { describe, expect, it } from 'vitest';
import { keptTickObject } from '../../src/tick-shape.js';

/**
 * src/tick-shape.ts holds one of node's own tick objects so that V8 keeps sharing their maps
 * (docs/performance.md, "fourth session"). It must have caught a real one, made by
 * process.nextTick.
 */
describe("the tick object held for V8's maps", () => {
  it("is one of process.nextTick's tick objects", () => {
    const t = keptTickObject() as Record<string | symbol, unknown> | undefined;
    expect(t).toBeDefined();
    expect(Object.getOwnPropertySymbols(t).map(String)).toEqual(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']);
    expect(Object.keys(t!)).toEqual(['callback', 'args']);
    expect(typeof t!.callback).toBe('function');
    expect(t!.args).toBeUndefined();
  });
});

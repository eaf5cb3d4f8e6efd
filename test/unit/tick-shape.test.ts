import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { standaloneModule } from '../support/standalone-module.js';
import { keptTickObject } from '../../src/tick-shape.js';

/**
 * src/tick-shape.ts holds an object with the map of node's tick objects, so that V8 keeps
 * sharing their maps (docs/performance.md, "fourth session" and "fifth session"). Whether two
 * objects share a map is only visible to V8's natives syntax, so that part runs in a child
 * process started with --allow-natives-syntax, as a server starts: the module first, then a
 * program's worth of 4-property literals (more than V8's 1,536 transitions on their root map),
 * then full collections with no tick object alive.
 */
const { dir, file: mod, remove } = standaloneModule('tick-shape.ts', 'tick-shape');
afterAll(remove);

function run(script: string): { out: Record<string, unknown>; status: number | null; stderr: string } {
  const file = path.join(dir, `probe-${Math.random().toString(36).slice(2)}.mjs`);
  fs.writeFileSync(file, script);
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', file], { encoding: 'utf8', timeout: 30_000 });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return { out: last.startsWith('{') ? (JSON.parse(last) as Record<string, unknown>) : {}, status: r.status, stderr: r.stderr };
}

/** Catches two of process.nextTick's own tick objects (the resource of the tick running). */
const CATCH_TICKS = `
  import { executionAsyncResource } from 'node:async_hooks';
  const ticks = [];
  for (let i = 0; i < 2; i++) await new Promise((r) => process.nextTick(() => { ticks.push(executionAsyncResource()); r(); }));
`;

describe("the object held for the tick objects' maps", () => {
  it('has the keys of a tick object, in their order', () => {
    const t = keptTickObject() as Record<string | symbol, unknown> | undefined;
    expect(t).toBeDefined();
    expect(Object.getOwnPropertySymbols(t).map(String)).toEqual(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']);
    expect(Object.keys(t!)).toEqual(['callback', 'args']);
    expect(typeof t!.callback).toBe('function');
    expect(t!.args).toBeUndefined();
  });

  it("has the very map of process.nextTick's tick objects, and keeps it after the root map is full and full collections ran", () => {
    const r = run(`
      import { keptTickObject } from ${JSON.stringify(mod)};
      const literals = [];
      for (let i = 0; i < 2000; i++) literals.push(new Function('return { k' + i + ': 1, b: 2, c: 3, d: 4 };')());
      for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 5)); }
      ${CATCH_TICKS}
      // Read only now: nothing of this script held it through the collections.
      const kept = keptTickObject();
      console.log(JSON.stringify({
        keptIsTick: %HaveSameMap(ticks[0], kept),
        ticksShare: %HaveSameMap(ticks[0], ticks[1]),
        literals: literals.length,
      }));
    `);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.out).toEqual({ keptIsTick: true, ticksShare: true, literals: 2000 });
  });

  it('would not have that map with small-integer ids (what the comment in src/tick-shape.ts says)', () => {
    // The same literal with integer ids: V8 gives it a map of its own, so holding it would keep
    // nothing of the tick objects' maps alive. This is why the module uses doubles.
    const r = run(`
      import { AsyncResource } from 'node:async_hooks';
      const s = Object.getOwnPropertySymbols(new AsyncResource('X'));
      const a = s.find((x) => x.description === 'async_id_symbol');
      const t = s.find((x) => x.description === 'trigger_async_id_symbol');
      const kept = { [a]: 0, [t]: 0, callback: () => {}, args: undefined };
      ${CATCH_TICKS}
      console.log(JSON.stringify({ keptIsTick: %HaveSameMap(ticks[0], kept) }));
    `);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.out).toEqual({ keptIsTick: false });
  });
});

import { describe, expect, it } from 'vitest';
import { IdleCollector, startIdleGc } from '../../src/idle-gc.js';

/** A scripted source: each tick reads the next utilization; heap and collections are counted. */
function scripted(heap: number) {
  const s = {
    heap,
    busy: 0,
    collected: 0,
    utilization: () => s.busy,
    heapUsed: () => s.heap,
    collect: () => {
      s.collected++;
      s.heap = 10;
    },
  };
  return s;
}

const OPTS = { intervalMs: 500, growthBytes: 100, idleUtilization: 0.05 };

describe('idle collector', () => {
  it('collects once the loop is idle after the heap grew, never while busy, and not again until it grows again', () => {
    const s = scripted(10);
    const c = new IdleCollector(s, OPTS);
    s.heap = 500;
    s.busy = 0.9;
    expect(c.tick()).toBe(false); // a burst: grown, but busy
    s.busy = 0.06;
    expect(c.tick()).toBe(false); // still above the idle threshold
    s.busy = 0.01;
    expect(c.tick()).toBe(true); // quiet: one full collection
    expect(s.collected).toBe(1);
    expect(c.tick()).toBe(false); // idle, but nothing grew since
    s.heap = 105;
    expect(c.tick()).toBe(false); // grew by less than the threshold
    s.heap = 115;
    expect(c.tick()).toBe(true);
    expect(s.collected).toBe(2);
    expect(c.collections).toBe(2);
  });

  it('measures growth from the lowest heap seen since the last collection', () => {
    const s = scripted(400);
    const c = new IdleCollector(s, OPTS);
    s.heap = 50; // young-generation collections shrank it on their own
    expect(c.tick()).toBe(false);
    s.heap = 140;
    expect(c.tick()).toBe(false); // 90 above the low point
    s.heap = 160;
    expect(c.tick()).toBe(true);
  });

  it('after start: two collections at the first quiet interval whatever the growth, then as before', () => {
    const s = scripted(10);
    const c = new IdleCollector(s, { ...OPTS, afterStart: 2 });
    s.busy = 0.9;
    expect(c.tick()).toBe(false); // busy: waits
    expect(s.collected).toBe(0);
    s.busy = 0.01;
    expect(c.tick()).toBe(true); // quiet, nothing grew: the start's collections
    expect(s.collected).toBe(2);
    expect(c.tick()).toBe(false); // once only
    s.heap = 115;
    expect(c.tick()).toBe(true); // growth, as before
    expect(s.collected).toBe(3);
    expect(c.collections).toBe(3);
  });

  it('runs V8 full collections in a process started without --expose-gc', () => {
    const { collector, stop } = startIdleGc({ intervalMs: 60_000, growthBytes: 0, idleUtilization: 1 });
    try {
      expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
      expect(collector.tick()).toBe(true);
      expect(collector.collections).toBe(1);
    } finally {
      stop();
    }
  });
});

import { describe, expect, it } from 'vitest';
import v8 from 'node:v8';
import { IdleCollector, QuietScavenger, startIdleGc } from '../../src/idle-gc.js';

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

  it('once the loop has been quiet settleTicks intervals in a row after a busy period, one more collection if the young generation is above its smallest', () => {
    const s = { ...scripted(10), young: 1, lowRate: false };
    // Only a full collection that finds the allocation rate low gives the young generation back (V8).
    const source = { utilization: () => s.busy, heapUsed: () => s.heap, youngSize: () => s.young, collect: () => { s.collected++; s.heap = 10; if (s.lowRate) s.young = 1; } };
    const c = new IdleCollector(source, { ...OPTS, settleTicks: 3 });
    // A burst: busy, the young generation grows, the heap too.
    s.busy = 0.9;
    s.young = 32;
    s.heap = 500;
    expect(c.tick()).toBe(false);
    s.busy = 0.01;
    expect(c.tick()).toBe(true); // the growth collection at the first quiet interval
    expect(s.collected).toBe(1);
    expect(c.tick()).toBe(false); // two quiet intervals in a row (the growth collection does not restart the count)
    s.busy = 0.5; // busy again: the quiet count starts over
    expect(c.tick()).toBe(false);
    s.busy = 0.01;
    expect(c.tick()).toBe(false);
    expect(c.tick()).toBe(false);
    expect(s.collected).toBe(1);
    s.lowRate = true;
    expect(c.tick()).toBe(true); // three quiet intervals in a row: the settling collection
    expect(s.collected).toBe(2);
    expect(s.young).toBe(1);
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false); // once per busy period
    // A busy period that grew the young generation but not the heap past the threshold: settled too.
    s.busy = 0.3;
    s.young = 16;
    expect(c.tick()).toBe(false);
    s.busy = 0;
    expect([c.tick(), c.tick(), c.tick()]).toEqual([false, false, true]);
    expect(s.collected).toBe(3);
    // A busy period that left the young generation at its smallest: nothing to give back, no collection.
    s.busy = 0.3;
    expect(c.tick()).toBe(false);
    s.busy = 0;
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false);
    expect(c.collections).toBe(3);
  });

  it('growthTicks: the growth collection waits for that many quiet intervals in a row; the settling one still counts from the end of the busy period', () => {
    const s = { ...scripted(10), young: 1 };
    const source = { utilization: () => s.busy, heapUsed: () => s.heap, youngSize: () => s.young, collect: () => { s.collected++; s.heap = 10; s.young = 1; } };
    const c = new IdleCollector(source, { ...OPTS, growthTicks: 3, settleTicks: 5 });
    // Bursts with two quiet intervals between them (a fan-out every second or so): no collection.
    for (let burst = 0; burst < 4; burst++) {
      s.busy = 0.9;
      s.heap += 200;
      s.young = 32;
      expect(c.tick()).toBe(false);
      s.busy = 0.01;
      expect([c.tick(), c.tick()]).toEqual([false, false]);
    }
    expect(s.collected).toBe(0);
    // The server goes quiet: the growth collection at the third quiet interval in a row.
    s.busy = 0.9;
    s.young = 32;
    expect(c.tick()).toBe(false);
    s.busy = 0.01;
    expect([c.tick(), c.tick(), c.tick()]).toEqual([false, false, true]);
    expect(s.collected).toBe(1);
    // V8 kept the young generation at that collection (allocation too recent); the settling one comes at the
    // fifth quiet interval since the burst, not the fifth since the growth collection.
    s.young = 32;
    expect([c.tick(), c.tick()]).toEqual([false, true]);
    expect(s.collected).toBe(2);
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false);
    expect(c.collections).toBe(2);
  });

  it('its own collections are not load: the pause of one does not restart the quiet count or re-arm the settling collection', () => {
    // Event-loop utilization since the previous read, as node measures it: a collection's pause counts
    // in the interval it ran in.
    const s = { ...scripted(10), young: 1, pause: 0 };
    const source = {
      utilization: () => {
        const u = s.busy + s.pause;
        s.pause = 0;
        return u;
      },
      heapUsed: () => s.heap,
      youngSize: () => s.young,
      collect: () => {
        s.collected++;
        s.heap = 10;
        s.pause += 0.1; // 50 ms of a 500 ms interval
      },
    };
    const c = new IdleCollector(source, { ...OPTS, growthTicks: 2, settleTicks: 4 });
    s.busy = 0.9;
    s.heap = 500;
    s.young = 32;
    expect(c.tick()).toBe(false);
    s.busy = 0.01;
    expect([c.tick(), c.tick()]).toEqual([false, true]); // the growth collection
    expect([c.tick(), c.tick()]).toEqual([false, true]); // the settling one, 4 quiet intervals after the burst
    expect(s.collected).toBe(2);
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false); // its pause did not re-arm it
    expect(c.collections).toBe(2);
  });

  it('a settling collection V8 does not follow with a smaller young generation is not repeated while idle; settleTicks 0 never settles', () => {
    const s = { ...scripted(10), young: 1 };
    const source = { utilization: () => s.busy, heapUsed: () => s.heap, youngSize: () => s.young, collect: () => void s.collected++ };
    const c = new IdleCollector(source, { ...OPTS, settleTicks: 2 });
    s.busy = 0.9;
    s.young = 32;
    expect(c.tick()).toBe(false);
    s.busy = 0;
    expect([c.tick(), c.tick()]).toEqual([false, true]);
    for (let i = 0; i < 10; i++) expect(c.tick()).toBe(false);
    expect(s.collected).toBe(1);
    const c2 = new IdleCollector(source, { ...OPTS, settleTicks: 0 });
    s.busy = 0.9;
    expect(c2.tick()).toBe(false);
    s.busy = 0;
    for (let i = 0; i < 10; i++) expect(c2.tick()).toBe(false);
    expect(s.collected).toBe(1);
  });

  it('settling collections take at most settleShare of the time: after one that paused d ms, none for d / settleShare ms', () => {
    const s = { ...scripted(10), young: 1, clock: 0 };
    // Each full collection takes 50 ms of the (fake) clock and gives the young generation back.
    const source = { utilization: () => s.busy, heapUsed: () => s.heap, youngSize: () => s.young, now: () => s.clock, collect: () => { s.collected++; s.young = 1; s.clock += 50; } };
    const c = new IdleCollector(source, { ...OPTS, settleTicks: 2, settleShare: 0.01 });
    const tick = () => {
      s.clock += 500;
      return c.tick();
    };
    const burst = () => {
      s.busy = 0.9;
      s.young = 32;
      expect(tick()).toBe(false);
      s.busy = 0;
    };
    burst();
    expect([tick(), tick()]).toEqual([false, true]); // the first settles at once (50 ms: none for the next 5 s)
    burst();
    expect(Array.from({ length: 8 }, tick)).toEqual(Array(8).fill(false)); // quiet, but within 5 s of the first
    expect(s.collected).toBe(1);
    expect(tick()).toBe(true); // 5 s after the first ended
    expect(s.collected).toBe(2);
  });

  it('runs V8 full collections in a process started without --expose-gc', () => {
    const { collector, stop } = startIdleGc({ intervalMs: 60_000, growthBytes: 0, idleUtilization: 1 }, null);
    try {
      expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
      expect(collector.tick()).toBe(true);
      expect(collector.collections).toBe(1);
    } finally {
      stop();
    }
  });
});

describe('quiet scavenger', () => {
  const OPTS = { intervalMs: 100, idleUtilization: 0.05, youngBytes: 1000 };
  function scripted() {
    const s = {
      busy: 0,
      young: 0,
      scavenged: 0,
      utilization: () => s.busy,
      youngUsed: () => s.young,
      scavenge: () => {
        s.scavenged++;
        s.young = 0;
      },
    };
    return s;
  }

  it('scavenges twice once the loop is quiet and the young generation holds youngBytes; never while busy or below the threshold', () => {
    const s = scripted();
    const q = new QuietScavenger(s, OPTS);
    s.young = 5000;
    s.busy = 0.9;
    expect(q.tick()).toBe(false); // the re-polls arriving: busy
    s.busy = 0.06;
    expect(q.tick()).toBe(false); // above the idle threshold
    expect(s.scavenged).toBe(0);
    s.busy = 0.01;
    expect(q.tick()).toBe(true); // quiet: two scavenges (the second promotes what survived the first)
    expect(s.scavenged).toBe(2);
    expect(q.tick()).toBe(false); // nothing young left
    s.young = 999;
    expect(q.tick()).toBe(false); // below the threshold
    s.young = 1000;
    expect(q.tick()).toBe(true);
    expect(s.scavenged).toBe(4);
    expect(q.scavenges).toBe(4);
  });

  it('promotes live young objects with V8 scavenges in a process started without --expose-gc, and the timer can be left off', () => {
    const off = startIdleGc({ intervalMs: 60_000, growthBytes: 0, idleUtilization: 1 }, null);
    expect(off.scavenger).toBeUndefined();
    off.stop();
    const { scavenger, stop } = startIdleGc({ intervalMs: 60_000, growthBytes: Infinity, idleUtilization: 0 }, { intervalMs: 60_000, idleUtilization: 1, youngBytes: 0 });
    try {
      expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
      const young = () => v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')!.space_used_size;
      // About 2 MB of objects that stay alive, allocated just now: young.
      const live = Array.from({ length: 20_000 }, (_, i) => ({ i, s: `live ${i}`, a: [i] }));
      expect(young()).toBeGreaterThan(2 ** 20);
      expect(scavenger!.tick()).toBe(true);
      expect(scavenger!.scavenges).toBe(2);
      // Promoted: the young generation keeps less than a tenth of it (only what the tick itself allocated).
      expect(young()).toBeLessThan(2 ** 17);
      expect(live.length).toBe(20_000);
    } finally {
      stop();
    }
  });
});

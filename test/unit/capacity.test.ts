// The capacity model of docs/scaling.md (bench/capacity.mjs): the arithmetic from a run's per-unit
// costs, worked by hand here for one set of figures, and what it says when a run lacks a figure.
import { describe, expect, it } from 'vitest';
import { ASSUMPTIONS, formatCapacity, limits, medianCosts, modelFor, unitCosts } from '../../bench/capacity.mjs';

/**
 * A results file as `npm run bench` writes it, reduced to the figures the model reads, plus the
 * in-process and two-process configurations it must not read.
 */
type Figures = Record<string, unknown>;
const withRedis1 = (presence: unknown): Figures => ({
  scale: {
    results: [{ processes: 1, redis: true, p4: { redis_bytes_per_queue: 1000 }, p5: { parley_cpu_us: 70, redis_cpu_us: 10 }, presence }],
  },
});
const FIGURES: Figures = {
  scale: {
    results: [
      { processes: 1, redis: false, p5: { parley_cpu_us: 60, redis_cpu_us: 0 }, presence: { parley_cpu_us: 55, redis_cpu_us: 0 } },
      { processes: 1, redis: true, p4: { redis_bytes_per_queue: 1000 }, p5: { parley_cpu_us: 70, redis_cpu_us: 10 }, presence: { parley_cpu_us: 100, redis_cpu_us: 20 } },
      { processes: 2, redis: true, p4: { redis_bytes_per_queue: 9999 }, p5: { parley_cpu_us: 99, redis_cpu_us: 99 }, presence: { parley_cpu_us: 99, redis_cpu_us: 99 } },
    ],
  },
  P9: { cpu_us_per_send: 1500, postgres_cpu_us_per_send: 1600 },
  P3: { cpu_us: 5000 },
  P6: { kb_per_idle_client_rss: 6, kb_per_idle_client_rss_1_5s: 16 },
};

describe('capacity model (bench/capacity.mjs)', () => {
  it('takes each per-unit cost from the figure that measures it (Redis mode, one process)', () => {
    const c = unitCosts(FIGURES);
    expect(c.missing).toEqual([]);
    expect({ ...c, sources: undefined, missing: undefined }).toEqual({
      deliveryUs: 70,
      redisDeliveryUs: 10,
      presenceUs: 100,
      redisPresenceUs: 20,
      sendUs: 1500,
      pgSendUs: 1600,
      registerUs: 5000,
      redisBytesPerQueue: 1000,
      pollKbIdle: 6,
      pollKbBurst: 16,
      sources: undefined,
      missing: undefined,
    });
  });

  it('works out 10,000 users at the peak hour as by hand', () => {
    const m = modelFor(10_000, unitCosts(FIGURES));
    // 10,000 users x 50% online x 1.5 clients.
    expect(m.clients).toBe(7500);
    // 40 messages per user per 8-hour day, twice the average at the peak: 10,000 x 40 / 28,800 x 2.
    expect(m.messages).toBeCloseTo(27.7778, 4);
    // 40 deliveries per message, plus a heartbeat per parked poll every 50 s.
    expect(m.deliveries).toBeCloseTo(27.7778 * 40 + 150, 2);
    expect(m.presence).toBe(125);
    expect(m.other).toBe(62.5);
    expect(m.registers).toBeCloseTo(2.7778, 4);
    // 1261.1 x 70 + 125 x 100 + 62.5 x 1000 + 27.78 x 1500 + 2.778 x 5000 = 218,833 us per second.
    expect(m.parleyCores).toBeCloseTo(0.218833, 5);
    expect(m.processes).toBe(2); // one would do at 60%; two for redundancy
    expect(m.redisCommands).toBeCloseTo(1261.111 * 2 + 250, 2);
    // 1,261.1 deliveries/s x 10 us + 125 reports/s x 20 us of Redis CPU.
    expect(m.redisCores).toBeCloseTo(0.0151111, 6);
    // 7,500 queues x 1,000 bytes + 1,261 deliveries/s x 1 s x 1,000 bytes.
    expect(m.redisMb).toBeCloseTo(8.761111, 5);
    expect(m.pgRows).toBeCloseTo(1388.889, 2);
    expect(m.pgCores).toBeCloseTo(0.0444444, 6);
    expect(m.pgConnections).toBe(20);
    expect(m.pollMbIdle).toBeCloseTo((7500 * 6) / 1024, 6);
    expect(m.pollMbBurst).toBeCloseTo((7500 * 16) / 1024, 6);
  });

  it('grows every rate in proportion to users, and adds processes past 60% busy', () => {
    const costs = unitCosts(FIGURES);
    const small = modelFor(10_000, costs);
    const big = modelFor(1_000_000, costs);
    expect(big.deliveries / small.deliveries).toBeCloseTo(100, 6);
    expect(big.parleyCores).toBeCloseTo(21.8833, 3);
    expect(big.processes).toBe(37); // ceil(21.88 / 0.6)
    expect(big.pgConnections).toBe(370);
  });

  it('names the first component to saturate: Redis, one command thread, before a 16-core PostgreSQL', () => {
    const lim = limits(unitCosts(FIGURES));
    // At 1M users Redis would need 1.26111 + 0.25 cores: 60% of one is reached at 1e6 x 0.6 / 1.51111 users.
    expect(lim.redisUsers).toBe(Math.floor(600_000 / 1.5111111111111111));
    expect(lim.redisUsers).toBe(397058);
    // PostgreSQL: 2,777.8 sends/s x 1.6 ms = 4.44 cores of 16 at 1M users.
    expect(lim.pgUsers).toBe(2160000);
    const text = formatCapacity(FIGURES).join('\n');
    expect(text).toContain('| at the peak hour | 10k users | 100k users | 1M users |');
    expect(text).toContain('| Parley processes (one per core, at most 60% busy, at least 2) | 2 | 4 | 37 |');
    expect(text).toContain('| Redis CPU (cores; its command thread is one core) | 0.02 | 0.15 | 1.5 |');
    expect(text).toContain('Saturates first: Redis (its one command thread 60% busy) at about 397,058 users; then the PostgreSQL primary (16 cores 60% busy with the sends alone) at about 2,160,000 users.');
  });

  it('with other assumptions, other answers', () => {
    const costs = unitCosts(FIGURES);
    const phoneOnly = modelFor(10_000, costs, { ...ASSUMPTIONS, clientsPerOnlineUser: 1 });
    expect(phoneOnly.clients).toBe(5000);
  });

  it('says which figures a partial run lacks, and computes nothing from them', () => {
    const partial = { ...FIGURES, ...withRedis1(undefined), P9: { cpu_us_per_send: 1500 } };
    expect(unitCosts(partial).missing).toEqual(['presenceUs', 'redisPresenceUs', 'pgSendUs']);
    expect(formatCapacity(partial)).toEqual(['Capacity model: not computed, the run lacks presenceUs, redisPresenceUs, pgSendUs.']);
    // A zero or non-number figure is no measurement either.
    expect(unitCosts({ ...FIGURES, P3: { cpu_us: 0 } }).missing).toEqual(['registerUs']);
    expect(unitCosts({}).missing).toHaveLength(10);
  });

  it('over several runs, takes the median of each cost, and lacks what any run lacks', () => {
    const slower = { ...FIGURES, ...withRedis1({ parley_cpu_us: 300, redis_cpu_us: 20 }), P3: { cpu_us: 9000 } };
    const faster = { ...FIGURES, ...withRedis1({ parley_cpu_us: 50, redis_cpu_us: 20 }), P3: { cpu_us: 3000 } };
    const c = medianCosts([slower, FIGURES, faster]);
    expect(c.missing).toEqual([]);
    expect(c.registerUs).toBe(5000);
    expect(c.presenceUs).toBe(100);
    expect(c.deliveryUs).toBe(70);
    expect(c.sources.registerUs).toBe('Parley CPU per POST /register (P3: 100 users, 50 subscriptions); median of 3 runs (3,000 / 5,000 / 9,000)');
    // An even number of runs: the mean of the middle two.
    expect(medianCosts([slower, faster]).registerUs).toBe(6000);
    const lacking = medianCosts([FIGURES, { ...FIGURES, P6: {} }]);
    expect(lacking.missing).toEqual(['pollKbIdle', 'pollKbBurst']);
    expect(lacking.pollKbIdle).toBeUndefined();
    expect(formatCapacity([slower, FIGURES, faster]).join('\n')).toContain('| registerUs | 5,000 us | ');
  });
});

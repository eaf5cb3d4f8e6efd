import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppCtx } from '../domain/context.js';

/**
 * Prometheus metrics for one server: requests by route pattern and status,
 * request latency, event queues and parked long-polls, database statements
 * (from Store.stats) and process memory. Served at GET /metrics (outside
 * /api/v1) in the text exposition format. Each app has its own registry, so
 * several servers in one process (tests) do not mix their figures.
 *
 * Requests are counted in plain records here (a map lookup and a few
 * additions per request). prom-client, which formats the exposition, is loaded
 * with the first scrape, not at start: it holds about 12 MB of resident memory
 * (P7 of performance.md) that a server nobody scrapes never needs. Its
 * collectors copy these records at each scrape.
 */
interface CountRecord {
  readonly labels: { method: string; route: string; status: string };
  value: number;
}
interface TimeRecord {
  readonly labels: { method: string; route: string };
  sum: number;
  count: number;
  readonly buckets: number[];
}

export class Metrics {
  private registryPromise: Promise<Registry> | undefined;
  /** Per method, route and status: the number of answers (for the collectors). */
  private readonly counts: CountRecord[] = [];
  /** Per method and route: the latency histogram (count per bucket, not cumulative, as prom-client keeps it). */
  private readonly times: TimeRecord[] = [];
  /**
   * The same records by route, then method, then status: the strings a request brings are
   * the route pattern and method constants, whose hashes V8 keeps, so a request builds no key
   * string (two concatenations and their hashing per request before; P1).
   */
  private readonly byRoute = new Map<string, Map<string, { readonly time: TimeRecord; readonly byStatus: Map<number, CountRecord> }>>();

  constructor(private readonly app: AppCtx) {}

  /** Records one answered request; route is the pattern (never the raw URL). */
  observe(method: string, route: string, status: number, ms: number): void {
    const secs = ms / 1000;
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let r = byMethod.get(method);
    if (r === undefined) {
      const time: TimeRecord = { labels: { method, route }, sum: 0, count: 0, buckets: LATENCY_BUCKETS.map(() => 0) };
      this.times.push(time);
      byMethod.set(method, (r = { time, byStatus: new Map() }));
    }
    let c = r.byStatus.get(status);
    if (c === undefined) {
      c = { labels: { method, route, status: String(status) }, value: 0 };
      this.counts.push(c);
      r.byStatus.set(status, c);
    }
    c.value += 1;
    if (!Number.isFinite(secs)) return;
    const t = r.time;
    t.sum += secs;
    t.count += 1;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (secs <= LATENCY_BUCKETS[i]!) {
        t.buckets[i]! += 1;
        break;
      }
    }
  }

  /** The registry, built (and prom-client loaded) on the first scrape. */
  registry(): Promise<Registry> {
    this.registryPromise ??= import('prom-client').then((prom) => this.build(prom));
    return this.registryPromise;
  }

  private build(prom: typeof import('prom-client')): Registry {
    const { Counter, Gauge, Histogram, Registry } = prom;
    const app = this.app;
    const counts = this.counts;
    const times = this.times;
    const registry = new Registry();
    const registers = [registry];
    new Counter({
      name: 'parley_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const c of counts) this.inc(c.labels, c.value);
      },
    });
    new Histogram({
      name: 'parley_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its response, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
      collect() {
        // prom-client has no setter for a histogram's figures: zero each label set, then fill the
        // record it keeps for it (prom-client 15: sum, count, bucketValues by upper bound).
        this.reset();
        for (const t of times) {
          this.zero(t.labels);
          const rec = findRecord((this as unknown as Internal).hashMap, t.labels)?.[1];
          if (rec === undefined || rec.bucketValues === undefined) {
            // Another prom-client layout: observe each bucket's upper bound (bucket counts exact, sum approximate).
            t.buckets.forEach((n, i) => {
              for (let k = 0; k < n; k++) this.observe(t.labels, LATENCY_BUCKETS[i]!);
            });
            continue;
          }
          rec.sum = t.sum;
          rec.count = t.count;
          t.buckets.forEach((n, i) => (rec.bucketValues![LATENCY_BUCKETS[i]!] = n));
        }
      },
    });
    new Gauge({
      name: 'parley_event_queues',
      help: 'Event queues registered (POST /register) and not yet expired or deleted.',
      registers,
      async collect() {
        this.set(await app.queues.store.count());
      },
    });
    new Gauge({
      name: 'parley_event_parked_polls',
      help: 'GET /events long-polls parked in this process, waiting for events.',
      registers,
      collect() {
        this.set(app.queues.parkedPolls);
      },
    });
    // Store.stats only grows; expose it as counters by adding what it moved since the last scrape.
    let seenQueries = 0;
    let seenMs = 0;
    new Counter({
      name: 'parley_db_statements_total',
      help: 'SQL statements executed (including failed ones).',
      registers,
      collect() {
        const now = app.store.stats.queries;
        if (now > seenQueries) this.inc(now - seenQueries);
        seenQueries = now;
      },
    });
    new Counter({
      name: 'parley_db_statement_seconds_total',
      help: 'Time spent executing SQL statements; divide by parley_db_statements_total for the mean.',
      registers,
      collect() {
        const now = app.store.stats.queryMs ?? 0;
        if (now > seenMs) this.inc((now - seenMs) / 1000);
        seenMs = now;
      },
    });
    new Gauge({
      name: 'parley_process_memory_bytes',
      help: 'Process memory by kind (rss, heap_used, heap_total, external).',
      labelNames: ['kind'],
      registers,
      collect() {
        const m = process.memoryUsage();
        this.set({ kind: 'rss' }, m.rss);
        this.set({ kind: 'heap_used' }, m.heapUsed);
        this.set({ kind: 'heap_total' }, m.heapTotal);
        this.set({ kind: 'external' }, m.external);
      },
    });
    return registry;
  }
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];

/** prom-client 15's per-label-set records (Counter: value; Histogram: sum, count, bucketValues by upper bound). */
interface LabelRecord {
  labels: Record<string, string>;
  value?: number;
  sum?: number;
  count?: number;
  bucketValues?: Record<number, number>;
}
interface Internal {
  hashMap?: Record<string, LabelRecord>;
}
function findRecord(map: Record<string, LabelRecord> | undefined, labels: Record<string, string>): [string, LabelRecord] | undefined {
  if (!map || typeof map !== 'object') return undefined;
  const names = Object.keys(labels);
  for (const [hash, rec] of Object.entries(map)) {
    const l = rec?.labels;
    if (l && Object.keys(l).length === names.length && names.every((n) => l[n] === labels[n])) return [hash, rec];
  }
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** GET /metrics; with PARLEY_METRICS_TOKEN set, only for `Authorization: Bearer <token>`. */
export function registerMetricsRoute(fastify: FastifyInstance, app: AppCtx, metrics: Metrics): void {
  if (!app.config.metricsEnabled) return;
  fastify.get('/metrics', async (req, reply) => {
    const token = app.config.metricsToken;
    if (token && !sameSecret(req.headers.authorization ?? '', `Bearer ${token}`)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').header('content-type', 'text/plain; charset=utf-8').send('Unauthorized\n');
    }
    const registry = await metrics.registry();
    const body = await registry.metrics();
    return reply.code(200).header('content-type', registry.contentType).header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(body);
  });
}

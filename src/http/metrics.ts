import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AppCtx } from '../domain/context.js';

/**
 * Prometheus metrics for one server: requests by route pattern and status,
 * request latency, event queues and parked long-polls, database statements
 * (from Store.stats) and process memory. Served at GET /metrics (outside
 * /api/v1) in the text exposition format. Each app has its own registry, so
 * several servers in one process (tests) do not mix their figures.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  /** Per "method route status": prom-client's own label-set records, found once (see observe). */
  private readonly children = new Map<string, Child>();
  private readonly bounds: readonly number[];

  constructor(app: AppCtx) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'parley_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status.', labelNames: ['method', 'route', 'status'], registers });
    this.latency = new Histogram({
      name: 'parley_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its response, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.bounds = LATENCY_BUCKETS;
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
  }

  /**
   * Records one answered request; route is the pattern (never the raw URL).
   * prom-client validates and hashes the labels on every inc()/observe(), even
   * on a labelled child: after the first observation of a label set, update
   * the record prom-client keeps for it directly (the same fields its observe
   * updates), and fall back to the public API if that record was replaced.
   */
  observe(method: string, route: string, status: number, ms: number): void {
    const key = `${method} ${route} ${status}`;
    const secs = ms / 1000;
    const child = this.children.get(key);
    const counts = (this.requests as unknown as Internal).hashMap;
    const times = (this.latency as unknown as Internal).hashMap;
    if (child !== undefined && counts?.[child.countHash] === child.count && times?.[child.timeHash] === child.time && Number.isFinite(secs)) {
      child.count.value += 1;
      const t = child.time;
      t.sum += secs;
      t.count += 1;
      const bounds = this.bounds;
      for (let i = 0; i < bounds.length; i++) {
        if (secs <= bounds[i]!) {
          t.bucketValues[bounds[i]!]! += 1;
          break;
        }
      }
      return;
    }
    const status_ = String(status);
    this.requests.labels(method, route, status_).inc();
    this.latency.labels(method, route).observe(secs);
    const c = findRecord((this.requests as unknown as Internal).hashMap, { method, route, status: status_ });
    const h = findRecord((this.latency as unknown as Internal).hashMap, { method, route });
    if (c && h && typeof c[1].value === 'number' && typeof h[1].sum === 'number' && h[1].bucketValues) {
      this.children.set(key, { countHash: c[0], count: c[1] as Child['count'], timeHash: h[0], time: h[1] as Child['time'] });
    }
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
interface Child {
  readonly countHash: string;
  readonly count: { value: number };
  readonly timeHash: string;
  readonly time: { sum: number; count: number; bucketValues: Record<number, number> };
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
    const body = await metrics.registry.metrics();
    return reply.code(200).header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(body);
  });
}

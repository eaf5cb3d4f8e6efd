import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/http/metrics.js';
import type { AppCtx } from '../../src/domain/context.js';

// The request figures are kept in plain records and copied into prom-client's at each scrape
// (prom-client loads with the first scrape): the exposition must carry them exactly.
const app = { queues: { store: { count: async () => 2 }, parkedPolls: 1 }, store: { stats: { queries: 5, queryMs: 12 } } } as unknown as AppCtx;

describe('Metrics', () => {
  it('exposes exact request counts, latency sums and cumulative buckets, scrape after scrape', async () => {
    const m = new Metrics(app);
    m.observe('GET', '/api/v1/users/me', 200, 0.5);
    m.observe('GET', '/api/v1/users/me', 200, 3);
    m.observe('GET', '/api/v1/users/me', 401, 30);
    m.observe('POST', '/api/v1/messages', 200, 2000);
    const text = async () => (await (await m.registry()).metrics()).split('\n');
    const first = await text();
    const line = (lines: string[], prefix: string) => lines.find((l) => l.startsWith(prefix + ' '));
    expect(line(first, 'parley_http_requests_total{method="GET",route="/api/v1/users/me",status="200"}')).toMatch(/ 2$/);
    expect(line(first, 'parley_http_requests_total{method="GET",route="/api/v1/users/me",status="401"}')).toMatch(/ 1$/);
    expect(line(first, 'parley_http_request_duration_seconds_count{method="GET",route="/api/v1/users/me"}')).toMatch(/ 3$/);
    expect(line(first, 'parley_http_request_duration_seconds_sum{method="GET",route="/api/v1/users/me"}')).toMatch(/ 0\.0335$/);
    expect(line(first, 'parley_http_request_duration_seconds_bucket{le="0.001",method="GET",route="/api/v1/users/me"}')).toMatch(/ 1$/);
    expect(line(first, 'parley_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/users/me"}')).toMatch(/ 2$/);
    expect(line(first, 'parley_http_request_duration_seconds_bucket{le="0.05",method="GET",route="/api/v1/users/me"}')).toMatch(/ 3$/);
    expect(line(first, 'parley_http_request_duration_seconds_bucket{le="1",method="POST",route="/api/v1/messages"}')).toMatch(/ 0$/);
    expect(line(first, 'parley_http_request_duration_seconds_bucket{le="2.5",method="POST",route="/api/v1/messages"}')).toMatch(/ 1$/);
    expect(line(first, 'parley_event_queues')).toBe('parley_event_queues 2');
    expect(line(first, 'parley_db_statements_total')).toBe('parley_db_statements_total 5');
    // A second scrape shows the totals, not the totals added twice.
    m.observe('GET', '/api/v1/users/me', 200, 1);
    const second = await text();
    expect(line(second, 'parley_http_requests_total{method="GET",route="/api/v1/users/me",status="200"}')).toMatch(/ 3$/);
    expect(line(second, 'parley_http_request_duration_seconds_count{method="GET",route="/api/v1/users/me"}')).toMatch(/ 4$/);
    expect(line(second, 'parley_http_request_duration_seconds_sum{method="GET",route="/api/v1/users/me"}')).toMatch(/ 0\.0345$/);
    expect(line(second, 'parley_db_statements_total')).toBe('parley_db_statements_total 5');
  });
});

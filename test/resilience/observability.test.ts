import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes.js';
import { basicAuth, startTestServer, type TestServer } from '../support/server.js';

/** Structured request logs, request ids and the Prometheus endpoint (docs/observability.md). */
let t: TestServer;
const lines: Record<string, any>[] = [];
const raw: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      raw.push(String(chunk));
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  t = await startTestServer({ logLevel: 'info' }, { logger: pino({ level: 'info' }, sink) });
});

afterAll(async () => {
  await t?.close();
});

const requestLines = () => lines.filter((l) => l.msg === 'request');

describe('request logs', () => {
  it('one JSON line per request with id, method, route pattern, status, time and user; never parameters or credentials', async () => {
    lines.length = 0;
    raw.length = 0;
    const res = await t.get(`/users/${t.users.othello.id}`, { client_gravatar: true, include_custom_profile_fields: 'secret-looking-value' }, 'hamlet');
    const refused = await t.post('/fetch_api_key', { username: 'hamlet@zulip.com', password: 'not-the-Password-1' }, null);
    expect(refused.status).toBe(401);
    const got = requestLines();
    expect(got).toHaveLength(2);
    expect(got[0]).toMatchObject({ level: 30, method: 'GET', route: '/api/v1/users/:user_id', status: res.status, userId: t.users.hamlet.id, reqId: res.headers['x-request-id'] });
    expect(typeof got[0]!.ms).toBe('number');
    expect(got[1]).toMatchObject({ method: 'POST', route: '/api/v1/fetch_api_key', status: 401, reqId: refused.headers['x-request-id'] });
    expect(got[1]!.userId).toBeUndefined();
    const text = raw.join('');
    for (const secret of ['secret-looking-value', 'not-the-Password-1', t.users.hamlet.apiKey, 'client_gravatar', 'authorization', 'Basic ']) expect(text).not.toContain(secret);
  });

  it('unknown paths are logged as unmatched, not by their URL', async () => {
    lines.length = 0;
    await t.get('/no/such/thing/with-a-token-in-it', {}, 'hamlet');
    expect(requestLines()).toEqual([expect.objectContaining({ route: 'unmatched', status: 404 })]);
    expect(JSON.stringify(lines)).not.toContain('with-a-token-in-it');
  });

  it('X-Request-Id: a well-formed incoming id is kept, anything else replaced, and ids differ per request', async () => {
    const kept = await t.request('GET', '/users/me', {}, 'hamlet', { 'x-request-id': 'lb-1234.abc' });
    expect(kept.headers['x-request-id']).toBe('lb-1234.abc');
    const replaced = await t.request('GET', '/users/me', {}, 'hamlet', { 'x-request-id': 'bad id with spaces and "quotes"' });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    const a = await t.get('/users/me', {}, 'hamlet');
    const b = await t.get('/users/me', {}, 'hamlet');
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('an unexpected error is a generic 500 and one error line with class, message and source line, no stack trace', async () => {
    const ep = routes.find((r) => r.method === 'GET' && r.path === '/users/me/alert_words')! as { handler: unknown };
    const original = ep.handler;
    ep.handler = () => {
      throw new TypeError('boom in a handler');
    };
    try {
      lines.length = 0;
      raw.length = 0;
      const res = await t.get('/users/me/alert_words', {}, 'hamlet');
      expect({ status: res.status, body: res.body }).toEqual({ status: 500, body: { result: 'error', msg: 'Internal server error' } });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const errors = lines.filter((l) => l.level === 50);
      expect(errors).toEqual([
        expect.objectContaining({ msg: 'unhandled error', reqId: res.headers['x-request-id'], route: '/api/v1/users/me/alert_words', error: expect.objectContaining({ type: 'TypeError', message: 'boom in a handler', site: expect.stringMatching(/observability\.test\.ts:\d+|src\//) }) }),
      ]);
      expect(raw.join('')).not.toMatch(/\\n\s+at |\bat [^\s]+ \(/);
      expect(requestLines()).toEqual([expect.objectContaining({ status: 500 })]);
    } finally {
      ep.handler = original;
    }
  });
});

describe('GET /metrics', () => {
  it('exposes requests by route and status, latency, event queues, parked polls and database statements', async () => {
    await t.get('/users/me', {}, 'hamlet');
    await t.get('/users/me', {}, 'hamlet');
    await t.get('/users/me', {}, null);
    const reg = await t.post('/register', { event_types: ['alert_words'] }, 'hamlet');
    expect(reg.status).toBe(200);
    const parked = t.get('/events', { queue_id: reg.body.queue_id, last_event_id: -1 }, 'hamlet');
    await new Promise((r) => setTimeout(r, 50));
    const res = await t.app.http.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = res.body;
    const value = (series: string): number => {
      const line = body.split('\n').find((l) => l.startsWith(series + ' '));
      if (!line) throw new Error(`no series ${series} in\n${body}`);
      return Number(line.slice(series.length + 1));
    };
    expect(value('parley_http_requests_total{method="GET",route="/api/v1/users/me",status="200"}')).toBeGreaterThanOrEqual(2);
    expect(value('parley_http_requests_total{method="GET",route="/api/v1/users/me",status="401"}')).toBeGreaterThanOrEqual(1);
    expect(value('parley_http_request_duration_seconds_count{method="GET",route="/api/v1/users/me"}')).toBeGreaterThanOrEqual(3);
    expect(body).toMatch(/parley_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/v1\/users\/me"\} \d+/);
    expect(value('parley_event_queues')).toBeGreaterThanOrEqual(1);
    expect(value('parley_event_parked_polls')).toBe(1);
    expect(value('parley_db_statements_total')).toBeGreaterThan(0);
    expect(value('parley_db_statements_total')).toBeLessThanOrEqual(t.app.ctx.store.stats.queries);
    expect(value('parley_db_statement_seconds_total')).toBeGreaterThan(0);
    expect(value('parley_process_memory_bytes{kind="rss"}')).toBeGreaterThan(1e6);
    // Raw URLs, query strings and user data never become labels.
    expect(body).not.toContain('queue_id');
    expect(body).not.toContain(reg.body.queue_id);
    await t.post('/users/me/alert_words', { alert_words: ['wake'] }, 'hamlet');
    expect((await parked).status).toBe(200);
  });

  it('a metrics token, when configured, is required', async () => {
    const guarded = await startTestServer({ metricsToken: 'scrape-Token-1' });
    try {
      expect((await guarded.app.http.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      expect((await guarded.app.http.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
      expect((await guarded.app.http.inject({ method: 'GET', url: '/metrics', headers: { authorization: basicAuth(guarded.users.owner) } })).statusCode).toBe(401);
      expect((await guarded.app.http.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-Token-1' } })).statusCode).toBe(200);
    } finally {
      await guarded.close();
    }
    const off = await startTestServer({ metricsEnabled: false });
    try {
      expect((await off.app.http.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ rateLimitPerUser: 3, rateLimitPerIp: 2 });
});
afterAll(async () => t.close());

describe('API rate limits', () => {
  it('per user: headers on every response, 429 with retry-after past the limit', async () => {
    const first = await t.get('/users/me', {}, 'othello');
    expectSuccess(first);
    expect(first.headers['x-ratelimit-limit']).toBe('3');
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    expectSuccess(await t.get('/users/me', {}, 'othello'));
    const third = await t.get('/users/me', {}, 'othello');
    expect(third.headers['x-ratelimit-remaining']).toBe('0');
    const over = await t.get('/users/me', {}, 'othello');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT', 'retry-after': expect.any(Number) });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another user has their own budget.
    expectSuccess(await t.get('/users/me', {}, 'cordelia'));
  });

  it('unauthenticated requests are limited per client address', async () => {
    expectSuccess(await t.get('/server_settings', {}, null));
    expectSuccess(await t.get('/server_settings', {}, null));
    const over = await t.get('/server_settings', {}, null);
    expectError(over, 429, 'RATE_LIMIT_HIT', 'API usage exceeded rate limit', { 'retry-after': expect.any(Number) });
  });
});

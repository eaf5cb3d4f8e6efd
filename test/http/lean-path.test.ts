import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, startTestServer, type TestServer } from '../support/server.js';
import { leanStats } from '../../src/http/server.js';

// GET /api/v1/users/me is answered ahead of Fastify when plain (src/http/server.ts leanPath).
// Each case sends the same request to the lean path and to Fastify (the same route with a
// trailing slash, which the lean path leaves to Fastify) over real sockets, and requires the
// same status, header names in the same order, header values, body and log line.

interface Raw {
  status: number;
  headers: [string, string][];
  body: string;
}

function send(base: string, path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** What differs between two answers by nature: the date, and the request id (its format is compared). */
function comparable(r: Raw): Raw {
  return {
    ...r,
    headers: r.headers
      .filter(([k]) => k !== 'date')
      .map(([k, v]) => [k, k === 'x-request-id' ? v.replace(/-[0-9a-z]+$/, '-N') : k === 'x-ratelimit-reset' ? 'T' : v] as [string, string]),
  };
}

/** The log lines written while fn runs ("request" lines), without their timing and id. */
async function logged(t: TestServer, fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const log = t.app.ctx.log;
  const info = log.info;
  const isLevelEnabled = log.isLevelEnabled;
  log.isLevelEnabled = () => true;
  log.info = ((obj: Record<string, unknown>, msg: string) => {
    if (msg === 'request') lines.push({ ...obj, ms: typeof obj.ms, reqId: typeof obj.reqId });
  }) as never;
  try {
    await fn();
  } finally {
    log.info = info;
    log.isLevelEnabled = isLevelEnabled;
  }
  return lines;
}

async function both(t: TestServer, base: string, headers: Record<string, string>): Promise<{ lean: Raw; fastify: Raw; lines: Record<string, unknown>[] }> {
  let lean!: Raw;
  let fastify!: Raw;
  const lines = await logged(t, async () => {
    const before = leanStats.answered;
    lean = await send(base, '/api/v1/users/me', headers);
    expect(leanStats.answered).toBe(before + 1);
    fastify = await send(base, '/api/v1/users/me/', headers);
    expect(leanStats.answered).toBe(before + 1);
  });
  return { lean, fastify, lines };
}

describe('the lean path answers GET /api/v1/users/me exactly as Fastify does', () => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer();
    base = await t.listen();
  });
  afterAll(async () => t.close());

  it('a plain request: status, headers in order, body, log line', async () => {
    const headers = { authorization: basicAuth(t.users.hamlet), 'user-agent': 'ZulipMobile/1.0' };
    await send(base, '/api/v1/users/me', headers); // the first request authenticates through Fastify (memo)
    const { lean, fastify, lines } = await both(t, base, headers);
    expect(lean.status).toBe(200);
    expect(JSON.parse(lean.body).user_id).toBe(t.users.hamlet.id);
    expect(comparable(lean)).toEqual(comparable(fastify));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toEqual(lines[1]);
    expect(lines[0]).toMatchObject({ method: 'GET', route: '/api/v1/users/me', status: 200, userId: t.users.hamlet.id });
  });

  it('a proxy\'s X-Request-Id is echoed on both paths', async () => {
    const headers = { authorization: basicAuth(t.users.hamlet), 'x-request-id': 'proxy-id-1' };
    const { lean, fastify } = await both(t, base, headers);
    expect(lean.headers.find(([k]) => k === 'x-request-id')![1]).toBe('proxy-id-1');
    expect(comparable(lean)).toEqual(comparable(fastify));
  });

  it('what is not plain goes to Fastify: a query string, HEAD, unknown credentials', async () => {
    const before = leanStats.answered;
    const auth = { authorization: basicAuth(t.users.hamlet) };
    expect((await send(base, '/api/v1/users/me?x=1', auth)).body).toContain('"ignored_parameters_unsupported":["x"]');
    expect((await send(base, '/api/v1/users/me', { authorization: basicAuth({ email: t.users.hamlet.email, apiKey: 'a'.repeat(32) }) })).status).toBe(401);
    expect((await send(base, '/api/v1/users/me', {})).status).toBe(401);
    expect(leanStats.answered).toBe(before);
  });
});

describe('with rate limits on', () => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer({ rateLimitPerUser: 5 });
    base = await t.listen();
  });
  afterAll(async () => t.close());

  it('the same X-RateLimit-* headers, and the same 429 once over the limit', async () => {
    const headers = { authorization: basicAuth(t.users.cordelia) };
    await send(base, '/api/v1/users/me', headers); // remaining 4
    const ok = await both(t, base, headers); // 3, then 2
    expect(ok.lean.headers.find(([k]) => k === 'x-ratelimit-remaining')![1]).toBe('3');
    expect(ok.fastify.headers.find(([k]) => k === 'x-ratelimit-remaining')![1]).toBe('2');
    const same = (r: Raw): Raw => ({ ...comparable(r), headers: comparable(r).headers.map(([k, v]) => [k, k === 'x-ratelimit-remaining' ? 'R' : v]) });
    expect(same(ok.lean)).toEqual(same(ok.fastify));
    await send(base, '/api/v1/users/me', headers); // 1
    await send(base, '/api/v1/users/me', headers); // 0
    const over = await both(t, base, headers);
    expect(over.lean.status).toBe(429);
    expect(JSON.parse(over.lean.body).code).toBe('RATE_LIMIT_HIT');
    // Retry-After and retry-after in the body are seconds left: equal within one second.
    const strip = (r: Raw): Raw => ({ ...comparable(r), headers: comparable(r).headers.filter(([k]) => k !== 'retry-after'), body: r.body.replace(/"retry-after":[0-9.]+/, '') });
    expect(strip(over.lean)).toEqual(strip(over.fastify));
    expect(over.lines[0]).toEqual(over.lines[1]);
    expect(over.lines[0]).toMatchObject({ status: 429 });
  });
});

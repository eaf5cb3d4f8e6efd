import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
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

async function both(t: TestServer, base: string, headers: Record<string, string>, path = '/api/v1/users/me', query = ''): Promise<{ lean: Raw; fastify: Raw; lines: Record<string, unknown>[] }> {
  let lean!: Raw;
  let fastify!: Raw;
  const lines = await logged(t, async () => {
    const before = leanStats.answered;
    lean = await send(base, path + query, headers);
    expect(leanStats.answered).toBe(before + 1);
    fastify = await send(base, path + '/' + query, headers);
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

  it('GET /events: events, an unknown queue, a missing parameter, an ignored parameter', async () => {
    const headers = { authorization: basicAuth(t.users.hamlet) };
    await send(base, '/api/v1/users/me', headers);
    const reg = expectSuccess(await t.post('/register', { event_types: JSON.stringify(['typing']) }, 'hamlet'));
    expectSuccess(await t.post('/typing', { op: 'start', to: JSON.stringify([t.users.hamlet.id]) }, 'cordelia'));
    const q = `?queue_id=${reg.queue_id}&last_event_id=-1&dont_block=true`;
    expect(q).toMatch(/^\?[A-Za-z0-9._:~=&-]+$/); // plain: the lean path takes it
    const events = await both(t, base, headers, '/api/v1/events', q);
    expect(events.lean.status).toBe(200);
    expect(JSON.parse(events.lean.body).events).toHaveLength(1);
    expect(comparable(events.lean)).toEqual(comparable(events.fastify));
    expect(events.lines[0]).toEqual(events.lines[1]);
    expect(events.lines[0]).toMatchObject({ method: 'GET', route: '/api/v1/events', status: 200, userId: t.users.hamlet.id });
    for (const query of ['?queue_id=nope&last_event_id=-1&dont_block=true', `?queue_id=${reg.queue_id}`, `${q}&whatever=1`]) {
      const r = await both(t, base, headers, '/api/v1/events', query);
      expect(comparable(r.lean)).toEqual(comparable(r.fastify));
      expect(r.lines[0]).toEqual(r.lines[1]);
    }
  });

  it('GET /events: a parked poll answered when an event arrives, on both paths', async () => {
    const headers = { authorization: basicAuth(t.users.othello) };
    await send(base, '/api/v1/users/me', headers);
    const a = expectSuccess(await t.post('/register', { event_types: JSON.stringify(['typing']) }, 'othello'));
    const b = expectSuccess(await t.post('/register', { event_types: JSON.stringify(['typing']) }, 'othello'));
    const before = leanStats.answered;
    const lean = send(base, `/api/v1/events?queue_id=${a.queue_id}&last_event_id=-1`, headers);
    const fastify = send(base, `/api/v1/events/?queue_id=${b.queue_id}&last_event_id=-1`, headers);
    await new Promise((r) => setTimeout(r, 50));
    expectSuccess(await t.post('/typing', { op: 'start', to: JSON.stringify([t.users.othello.id]) }, 'cordelia'));
    const [l, f] = await Promise.all([lean, fastify]);
    expect(leanStats.answered).toBe(before + 1);
    expect(JSON.parse(l.body).events[0].type).toBe('typing');
    const noQueue = (r: Raw): Raw => ({ ...comparable(r), body: r.body.replace(/"queue_id":"[^"]*"/, '') });
    expect(noQueue(l)).toEqual(noQueue(f));
  });

  it('GET /events: acknowledgement errors, numbers the generic parser reads, events already waiting', async () => {
    const headers = { authorization: basicAuth(t.users.iago) };
    await send(base, '/api/v1/users/me', headers);
    const reg = expectSuccess(await t.post('/register', { event_types: JSON.stringify(['typing']) }, 'iago'));
    const q = `?queue_id=${reg.queue_id}`;
    const queries = [
      '&last_event_id=7&dont_block=true', // not in this queue
      '&last_event_id=01&dont_block=true', // not JSON
      '&last_event_id=1e3&dont_block=true',
      '&last_event_id=-0&dont_block=true',
      '&last_event_id=-2&dont_block=true',
      '&last_event_id=9007199254740993&dont_block=true',
      '&last_event_id=-1&dont_block=1',
      '&last_event_id=-1&dont_block=True',
      '&last_event_id=-1&dont_block=true&dont_block_x=1',
      '&last_event_id=-1&dont_block=true&lifespan_secs=5',
      '&last_event_id=-1&apply_markdown=true&dont_block=true',
    ];
    // The same parameters in other orders and shapes (the lean path reads the usual poll
    // straight from the URL, and every other query through the generic parser).
    const id = reg.queue_id as string;
    const reordered = [
      `?last_event_id=-1&queue_id=${id}&dont_block=true`,
      `?dont_block=true&last_event_id=-1&queue_id=${id}`,
      `?dont_block=false&last_event_id=7&queue_id=${id}`,
      `?last_event_id=00&queue_id=${id}&dont_block=true`,
      `?last_event_id=-1&queue_id=${id}&dont_block=`,
      `?last_event_id=-1&queue_id=${id}&dont_block=truex`,
      `?last_event_id=-1&queue_id=&dont_block=true`,
      `?last_event_id=-1&queue_id=${id}x&dont_block=true`,
      `?last_event_id=-1&queue_id=${id}&dont_block=true&queue_idx=1`,
    ];
    for (const rest of [...queries.map((r) => q + r), ...reordered]) {
      const r = await both(t, base, headers, '/api/v1/events', rest);
      expect(comparable(r.lean)).toEqual(comparable(r.fastify));
      expect(r.lines[0]).toEqual(r.lines[1]);
    }
    // Blocking polls with an event already waiting: answered at once, with the queue id.
    expectSuccess(await t.post('/typing', { op: 'start', to: JSON.stringify([t.users.iago.id]) }, 'cordelia'));
    const waiting = await both(t, base, headers, '/api/v1/events', q + '&last_event_id=-1');
    expect(JSON.parse(waiting.lean.body)).toMatchObject({ events: [{ type: 'typing', id: 0 }], queue_id: reg.queue_id });
    expect(comparable(waiting.lean)).toEqual(comparable(waiting.fastify));
    expect(waiting.lines[0]).toEqual(waiting.lines[1]);
  });

  it('GET /events: a second poll ends the parked one; a heartbeat; a client that goes away while parked', async () => {
    const headers = { authorization: basicAuth(t.users.shiva) };
    await send(base, '/api/v1/users/me', headers);
    const reg = expectSuccess(await t.post('/register', { event_types: JSON.stringify(['typing']) }, 'shiva'));
    const q = `/api/v1/events?queue_id=${reg.queue_id}`;
    const queues = t.app.ctx.queues;
    const parked = queues.parkedPolls;
    const before = leanStats.answered;
    const first = send(base, q + '&last_event_id=-1', headers);
    await new Promise((r) => setTimeout(r, 50));
    expect(queues.parkedPolls).toBe(parked + 1);
    const second = await send(base, q + '&last_event_id=-1&dont_block=true', headers);
    expect(JSON.parse(second.body)).toEqual({ result: 'success', msg: '', events: [] });
    expect(JSON.parse((await first).body)).toEqual({ result: 'success', msg: '', events: [], queue_id: reg.queue_id });
    expect(queues.parkedPolls).toBe(parked);
    // Nothing arrives: the heartbeat (1 s in tests) answers.
    const beat = JSON.parse((await send(base, q + '&last_event_id=-1', headers)).body);
    expect(beat).toEqual({ result: 'success', msg: '', events: [{ type: 'heartbeat', id: 0 }], queue_id: reg.queue_id });
    // The client goes away while parked: the poll is dropped, the queue stays and keeps its events.
    const gone = http.request(base + q + '&last_event_id=0', { method: 'GET', headers, agent: false });
    gone.on('error', () => undefined);
    gone.end();
    await new Promise((r) => setTimeout(r, 50));
    expect(queues.parkedPolls).toBe(parked + 1);
    gone.destroy();
    for (let i = 0; i < 100 && queues.parkedPolls > parked; i++) await new Promise((r) => setTimeout(r, 10));
    expect(queues.parkedPolls).toBe(parked);
    expectSuccess(await t.post('/typing', { op: 'start', to: JSON.stringify([t.users.shiva.id]) }, 'cordelia'));
    const after = JSON.parse((await send(base, q + '&last_event_id=0&dont_block=true', headers)).body);
    expect(after.events).toMatchObject([{ type: 'typing', id: 1 }]);
    expect(leanStats.answered).toBe(before + 5);
  });

  it('what is not plain goes to Fastify: a query string, HEAD, unknown credentials', async () => {
    const before = leanStats.answered;
    const auth = { authorization: basicAuth(t.users.hamlet) };
    expect((await send(base, '/api/v1/users/me?x=1', auth)).body).toContain('"ignored_parameters_unsupported":["x"]');
    expect((await send(base, '/api/v1/users/me', { authorization: basicAuth({ email: t.users.hamlet.email, apiKey: 'a'.repeat(32) }) })).status).toBe(401);
    expect((await send(base, '/api/v1/users/me', {})).status).toBe(401);
    expect((await send(base, '/api/v1/events?queue_id=a%3Ab&last_event_id=-1&dont_block=true', auth)).status).toBe(400);
    expect((await send(base, '/api/v1/events?queue_id=a&queue_id=b&last_event_id=-1&dont_block=true', auth)).status).toBe(400);
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
    // Retry-After and retry-after in the body are seconds left (so is the body's length): equal within one second.
    for (const r of [over.lean, over.fastify]) expect(r.headers.find(([k]) => k === 'content-length')![1]).toBe(String(Buffer.byteLength(r.body)));
    const strip = (r: Raw): Raw => ({
      ...comparable(r),
      headers: comparable(r).headers.map(([k, v]) => [k, k === 'retry-after' || k === 'content-length' ? '' : v] as [string, string]),
      body: r.body.replace(/"retry-after":[0-9.e-]+/, ''),
    });
    expect(strip(over.lean)).toEqual(strip(over.fastify));
    expect(over.lines[0]).toEqual(over.lines[1]);
    expect(over.lines[0]).toMatchObject({ status: 429 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { routes } from '../../src/http/routes.js';
import { shapeCovers } from '../../src/http/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('request conventions', () => {
  it('success bodies are JSON with a trailing newline', async () => {
    const res = await t.app.http.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: basicAuth(t.users.hamlet) } });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.endsWith('}\n')).toBe(true);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('unknown parameters are listed, sorted, in ignored_parameters_unsupported', async () => {
    const body = expectSuccess(await t.get('/users', { zebra: 1, apple: 'x' }));
    expect(body.ignored_parameters_unsupported).toEqual(['apple', 'zebra']);
    const clean = expectSuccess(await t.get('/users', { client_gravatar: false }));
    expect(clean).not.toHaveProperty('ignored_parameters_unsupported');
  });

  it('errors never carry ignored_parameters_unsupported', async () => {
    const res = await t.get('/users', { client_gravatar: 'yes', zebra: 1 });
    expectError(res, 400, 'BAD_REQUEST', 'client_gravatar is not valid JSON');
  });

  it('JSON booleans: strict', async () => {
    expectError(await t.get('/users', { client_gravatar: 'True' }), 400, 'BAD_REQUEST', 'client_gravatar is not valid JSON');
    expectError(await t.get('/users', { client_gravatar: '1' }), 400, 'BAD_REQUEST', 'client_gravatar is not a boolean');
    expectError(await t.get('/users', { client_gravatar: '"true"' }), 400, 'BAD_REQUEST', 'client_gravatar is not a boolean');
  });

  it('JSON integer lists report the element path', async () => {
    expectError(await t.get('/users', { user_ids: '2' }), 400, 'BAD_REQUEST', 'user_ids is not a list');
    expectError(await t.get('/users', { user_ids: '[2,"a",4]' }), 400, 'BAD_REQUEST', 'user_ids[1] is not an integer');
    expectError(await t.get('/users', { user_ids: '[2' }), 400, 'BAD_REQUEST', 'user_ids is not valid JSON');
  });

  it('zulip-js comma-joined integer lists in the query string are accepted', async () => {
    const body = expectSuccess(await t.get('/users', { user_ids: `${t.users.hamlet.id},${t.users.iago.id}` }));
    expect(body.members.map((m: { user_id: number }) => m.user_id)).toEqual([t.users.iago.id, t.users.hamlet.id]);
  });

  it('JSON integers with a value set', async () => {
    const id = t.users.othello.id;
    expectError(await t.patch(`/users/${id}`, { role: 'abc' }, 'owner'), 400, 'BAD_REQUEST', 'role is not valid JSON');
    expectError(await t.patch(`/users/${id}`, { role: '5.5' }, 'owner'), 400, 'BAD_REQUEST', 'role is not an integer');
    expectError(await t.patch(`/users/${id}`, { role: 'true' }, 'owner'), 400, 'BAD_REQUEST', 'role is not an integer');
    expectError(await t.patch(`/users/${id}`, { role: '250' }, 'owner'), 400, 'BAD_REQUEST', 'Invalid role: Value error, Not in the list of possible values');
  });

  it('POST parameters from multipart bodies (as zulip-js sends them) and the query string', async () => {
    const boundary = '----parleytest';
    const parts = [
      ['username', 'hamlet@zulip.com'],
      ['password', t.users.hamlet.password],
    ]
      .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('');
    const res = await t.app.http.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: parts + `--${boundary}--\r\n`,
    });
    expect(JSON.parse(res.body)).toEqual({ result: 'success', msg: '', api_key: t.users.hamlet.apiKey, email: 'hamlet@zulip.com', user_id: t.users.hamlet.id });
    const viaQuery = await t.app.http.inject({
      method: 'POST',
      url: `/api/v1/fetch_api_key?username=hamlet%40zulip.com&password=${encodeURIComponent(t.users.hamlet.password)}`,
    });
    expect(JSON.parse(viaQuery.body).api_key).toBe(t.users.hamlet.apiKey);
  });

  it('PATCH and DELETE read parameters from the query string too (zulip-js)', async () => {
    const u = await t.createUser({ email: 'patchq@zulip.com', fullName: 'Patch Query' });
    const res = await t.app.http.inject({
      method: 'PATCH',
      url: `/api/v1/users/${u.id}?full_name=Renamed%20Person`,
      headers: { authorization: basicAuth(t.users.iago) },
    });
    expect(JSON.parse(res.body)).toEqual({ result: 'success', msg: '' });
    expect((await t.row(u.id)).full_name).toBe('Renamed Person');
  });

  it('the body wins over the query string', async () => {
    const res = await t.app.http.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key?username=nobody%40zulip.com',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `username=hamlet%40zulip.com&password=${encodeURIComponent(t.users.hamlet.password)}`,
    });
    expect(JSON.parse(res.body).user_id).toBe(t.users.hamlet.id);
  });

  it('a JSON request body is not a parameter source', async () => {
    const res = await t.app.http.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/json' },
      payload: '{"username": "hamlet@zulip.com"',
    });
    expectError({ status: res.statusCode, body: JSON.parse(res.body), headers: {} }, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'username' argument", { var_name: 'username' });
  });

  it('unknown routes: 404 with an error body', async () => {
    expectError(await t.get('/no/such/route'), 404, 'BAD_REQUEST', 'Not Found');
    expectError(await t.get('/users/me/no-such-thing'), 404, 'BAD_REQUEST', 'Not Found');
  });

  it('wrong method: 405 with the allowed methods and no code', async () => {
    const res = await t.request('PUT', '/users');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ result: 'error', msg: 'Method Not Allowed', allowed_methods: ['GET', 'POST'] });
  });

  it('every path answers each method it lacks with 405 and its own methods, and OPTIONS with 204 and Allow, on /api/v1 and /json, whatever route a more general path has', async () => {
    const shapes = new Map<string, { sample: string; methods: Set<string> }>();
    for (const ep of routes) {
      const shape = ep.path.replace(/:[A-Za-z_]+/g, ':');
      if (!shapes.has(shape)) shapes.set(shape, { sample: ep.path, methods: new Set() });
      shapes.get(shape)!.methods.add(ep.method);
    }
    const fill = (p: string): string => p.replace(/:[A-Za-z_]+|\*/g, (m) => (m === '*' ? 'zzz' : m === ':domain' ? 'example.com' : '1'));
    let checked = 0;
    for (const { sample, methods } of shapes.values()) {
      const allowed = [...methods].sort();
      for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const) {
        if (methods.has(method)) continue;
        for (const prefix of ['/api/v1', '/json']) {
          const res = await t.app.http.inject({ method, url: prefix + fill(sample) });
          const what = `${method} ${prefix}${sample}`;
          expect({ status: res.statusCode, body: res.json(), allow: res.headers.allow }, what).toEqual({
            status: 405,
            body: { result: 'error', msg: 'Method Not Allowed', allowed_methods: allowed },
            allow: allowed.join(', '),
          });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
    // OPTIONS, as Zulip's rest_dispatch answers it before authentication: 204, the methods in Allow, sorted, HEAD with GET.
    for (const { sample, methods } of shapes.values()) {
      const allow = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].sort().join(', ');
      for (const prefix of ['/api/v1', '/json']) {
        const res = await t.app.http.inject({ method: 'OPTIONS', url: prefix + fill(sample) });
        expect({ status: res.statusCode, allow: res.headers.allow, body: res.body }, `OPTIONS ${prefix}${sample}`).toEqual({ status: 204, allow, body: '' });
      }
    }
    // A static path that lacks the method but sits under a parameter path that has it.
    expect((await t.app.http.inject({ method: 'GET', url: '/api/v1/users/me/presence' })).json().allowed_methods).toEqual(['POST']);
    // Unknown paths and methods stay 404.
    expect((await t.app.http.inject({ method: 'PUT', url: '/api/v1/no/such/path' })).statusCode).toBe(404);
    expect((await t.app.http.inject({ method: 'OPTIONS', url: '/api/v1/no/such/path' })).statusCode).toBe(404);
    expect((await t.app.http.inject({ method: 'OPTIONS', url: '/api/v1/users' })).headers.allow).toBe('GET, HEAD, POST');
    expect((await t.app.http.inject({ method: 'OPTIONS', url: '/api/v1/users/me/presence' })).headers.allow).toBe('POST');
  });

  // HEAD is routed as GET without a body (server.ts, routeHeadAsGet; Fastify's HEAD routes are off, P10).
  it('HEAD answers as GET would, without the body, served and injected alike', async () => {
    const auth = { authorization: basicAuth(t.users.hamlet) };
    const base = await t.listen();
    const strip = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => !['x-request-id', 'date', 'keep-alive', 'connection'].includes(k)));
    const cases: [string, Record<string, string>, number][] = [
      ['/api/v1/users/me', auth, 200],
      ['/api/v1/users', auth, 200],
      ['/api/v1/users/me', {}, 401],
      ['/api/v1/messages/flags', auth, 405],
      ['/api/v1/no/such/path', auth, 404],
      ['/', {}, 200],
    ];
    for (const [url, given, status] of cases) {
      // Uncompressed, so that Content-Length can be checked against the body.
      const headers = { ...given, 'accept-encoding': 'identity' };
      const get = await fetch(base + url, { headers });
      const getBody = await get.text();
      const head = await fetch(base + url, { method: 'HEAD', headers });
      expect([head.status, await head.text()], `HEAD ${url}`).toEqual([status, '']);
      expect(get.status).toBe(status);
      const getHeaders = strip(Object.fromEntries(get.headers));
      expect(strip(Object.fromEntries(head.headers)), `HEAD ${url}`).toEqual(getHeaders);
      expect(Number(getHeaders['content-length'])).toBe(Buffer.byteLength(getBody));
      const injected = await t.app.http.inject({ method: 'HEAD', url, headers });
      expect([injected.statusCode, injected.body, injected.headers['content-length']], `injected HEAD ${url}`).toEqual([status, '', getHeaders['content-length']]);
    }
    // The request metrics name the method the client sent.
    const metrics = (await t.app.http.inject({ method: 'GET', url: '/metrics' })).body;
    const headLines = metrics.split('\n').filter((l) => l.startsWith('parley_http_requests_total{method="HEAD"')).sort();
    expect(headLines).toEqual([
      'parley_http_requests_total{method="HEAD",route="/api/v1/users/me",status="200"} 2',
      'parley_http_requests_total{method="HEAD",route="/api/v1/users/me",status="401"} 2',
      'parley_http_requests_total{method="HEAD",route="/api/v1/users",status="200"} 2',
      'parley_http_requests_total{method="HEAD",route="/api/v1/messages/flags",status="405"} 2',
      'parley_http_requests_total{method="HEAD",route="unmatched",status="404"} 2',
      'parley_http_requests_total{method="HEAD",route="/",status="200"} 2',
    ].sort());
  });

  it('which path shapes cover which (the 405s that need a route of their own)', () => {
    const covers = (general: string, specific: string) => shapeCovers(general.split('/'), specific.split('/'));
    expect(covers('/users/:/presence', '/users/me/presence')).toBe(true);
    expect(covers('/users/me/presence', '/users/:/presence')).toBe(false);
    expect(covers('/users/:', '/users/me/presence')).toBe(false);
    expect(covers('/realm/emoji/*', '/realm/emoji/:/x')).toBe(true);
    expect(covers('/realm/emoji/:', '/realm/emoji/*')).toBe(true);
    expect(covers('/users/:', '/users')).toBe(false);
  });

  it('a non-numeric id where Zulip\'s URL wants digits is an unknown route', async () => {
    expectError(await t.patch('/users/abc', { full_name: 'X Y' }, 'iago'), 404, 'BAD_REQUEST', 'Not Found');
  });

  it('an oversized body gets 413 with an error body', async () => {
    const res = await t.app.http.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'username=' + 'a'.repeat(31 * 1024 * 1024),
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ result: 'error', msg: 'Request too large', code: 'REQUEST_TOO_LARGE' });
  });

  // The API's endpoints sit behind one wildcard route per prefix, looked up before the body is read
  // (server.ts): a request that fails before its handler is still counted under its endpoint.
  it('a request refused before its handler is counted under its endpoint', async () => {
    const count413 = async (): Promise<Record<string, number>> => {
      const metrics = (await t.app.http.inject({ method: 'GET', url: '/metrics' })).body;
      const out: Record<string, number> = {};
      for (const m of metrics.matchAll(/^parley_http_requests_total\{method="POST",route="([^"]+)",status="413"\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
      return out;
    };
    const before = await count413();
    const big = 'username=' + 'a'.repeat(31 * 1024 * 1024);
    for (const url of ['/api/v1/fetch_api_key', '/api/v1/fetch_api_key', '/json/fetch_api_key']) {
      const res = await t.app.http.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: big });
      expect(res.statusCode).toBe(413);
    }
    const after = await count413();
    const routes = new Set([...Object.keys(before), ...Object.keys(after)]);
    expect(Object.fromEntries([...routes].map((r) => [r, (after[r] ?? 0) - (before[r] ?? 0)]))).toEqual({ '/api/v1/fetch_api_key': 2, '/json/fetch_api_key': 1 });
  });

  it('malformed multipart is a 400, not a 500', async () => {
    const res = await t.app.http.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
      payload: 'this is not multipart',
    });
    expect(res.statusCode).toBeLessThan(500);
    expect(JSON.parse(res.body).result).toBe('error');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, expectError, expectSuccess, FIXTURE_PASSWORD, formBody, startTestServer, type TestServer, type TestUser } from '../support/server.js';

// Issue 14: the web app's sign-in (POST /accounts/login, /accounts/logout), its
// server-side sessions, and Zulip's /json mirror of /api/v1 for cookie-authenticated browsers.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ loginFailLimit: 5 });
});
afterAll(async () => t?.close());

interface Raw {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

async function raw(method: string, url: string, opts: { form?: Record<string, unknown>; json?: unknown; headers?: Record<string, string> } = {}): Promise<Raw> {
  const headers: Record<string, string> = { ...opts.headers };
  let payload: string | undefined;
  if (opts.form !== undefined) {
    if (method === 'GET') url += '?' + formBody(opts.form);
    else {
      payload = formBody(opts.form);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
  } else if (opts.json !== undefined) {
    payload = JSON.stringify(opts.json);
    headers['content-type'] = 'application/json';
  }
  const res = await t.app.http.inject({ method: method as 'GET', url, headers, payload });
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, body, text: res.body, headers: res.headers as Raw['headers'] };
}

interface Session {
  readonly cookie: string;
  readonly csrf: string;
  readonly setCookies: string[];
}

async function login(user: { email: string; password: string }): Promise<Session> {
  const res = await raw('POST', '/accounts/login', { form: { username: user.email, password: user.password } });
  expect(res.status).toBe(200);
  const setCookies = res.headers['set-cookie'] as string[];
  const value = (name: string): string => setCookies.find((c) => c.startsWith(name + '='))!.split(';')[0]!.slice(name.length + 1);
  return { cookie: `sessionid=${value('sessionid')}; csrftoken=${value('csrftoken')}`, csrf: value('csrftoken'), setCookies };
}

const asSession = (s: Session, csrf = true): Record<string, string> => (csrf ? { cookie: s.cookie, 'x-csrftoken': s.csrf } : { cookie: s.cookie });
const sessionCount = async (userId: number): Promise<number> =>
  (await t.app.ctx.db.selectFrom('web_sessions').select('token_hash').where('user_id', '=', userId).execute()).length;

const NOT_LOGGED_IN = { result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' };

describe('POST /accounts/login', () => {
  it('checks the password, stores a hashed session and sets the two cookies', async () => {
    const before = await sessionCount(t.users.othello.id);
    const res = await raw('POST', '/accounts/login', { form: { username: 'Othello@zulip.com', password: FIXTURE_PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: 'success', msg: '', user_id: t.users.othello.id, email: 'othello@zulip.com' });
    expect(res.headers['cache-control']).toBe('no-store');
    const cookies = res.headers['set-cookie'] as string[];
    expect(cookies).toHaveLength(2);
    const [session, csrf] = cookies;
    expect(session).toMatch(/^sessionid=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; SameSite=Lax; HttpOnly$/);
    expect(csrf).toMatch(/^csrftoken=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; SameSite=Lax$/);
    expect(await sessionCount(t.users.othello.id)).toBe(before + 1);
    // Only a hash of the token is stored.
    const token = session!.split(';')[0]!.slice('sessionid='.length);
    const rows = await t.app.ctx.db.selectFrom('web_sessions').selectAll().where('user_id', '=', t.users.othello.id).execute();
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it('accepts a JSON body too', async () => {
    const res = await raw('POST', '/accounts/login', { json: { username: t.users.cordelia.email, password: FIXTURE_PASSWORD } });
    expect(res.body).toEqual({ result: 'success', msg: '', user_id: t.users.cordelia.id, email: t.users.cordelia.email });
  });

  it('answers the errors of /fetch_api_key and creates no session', async () => {
    const before = await sessionCount(t.users.shiva.id);
    const wrong = await raw('POST', '/accounts/login', { form: { username: t.users.shiva.email, password: 'wrong' } });
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 401, body: { result: 'error', msg: 'Your username or password is incorrect', code: 'AUTHENTICATION_FAILED' } });
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const missing = await raw('POST', '/accounts/login', { form: { username: t.users.shiva.email } });
    expect(missing.body).toEqual({ result: 'error', msg: "Missing 'password' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });
    const notEmail = await raw('POST', '/accounts/login', { form: { username: 'shiva', password: 'x' } });
    expect(notEmail.body).toEqual({ result: 'error', msg: 'Enter a valid email address.', code: 'BAD_REQUEST' });
    const bot = await raw('POST', '/accounts/login', { form: { username: t.users.bot.email, password: '' } });
    expect(bot.body.code).toBe('AUTHENTICATION_FAILED');
    expect(await sessionCount(t.users.shiva.id)).toBe(before);
  });

  it('shares the failed-login limit with /fetch_api_key', async () => {
    const u = await t.createUser({ email: 'limited@zulip.com', fullName: 'Limited' });
    for (let i = 0; i < 3; i++) expect((await raw('POST', '/accounts/login', { form: { username: u.email, password: 'nope' } })).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await t.post('/fetch_api_key', { username: u.email, password: 'nope' }, null)).status).toBe(401);
    // Past 5 failures even the right password is refused, on both routes.
    const res = await raw('POST', '/accounts/login', { form: { username: u.email, password: u.password } });
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await t.post('/fetch_api_key', { username: u.email, password: u.password }, null)).status).toBe(429);
    expect(await sessionCount(u.id)).toBe(0);
  });

  it('refuses a sign-in posted from another origin (login CSRF)', async () => {
    const res = await raw('POST', '/accounts/login', { form: { username: t.users.iago.email, password: FIXTURE_PASSWORD }, headers: { origin: 'https://evil.example', host: 'zulip.testserver' } });
    expectError({ status: res.status, body: res.body, headers: res.headers }, 403, 'CSRF_FAILED', 'CSRF error: Origin checking failed - https://evil.example does not match any trusted origins.', {
      reason: 'Origin checking failed - https://evil.example does not match any trusted origins.',
    });
    const same = await raw('POST', '/accounts/login', { form: { username: t.users.iago.email, password: FIXTURE_PASSWORD }, headers: { origin: 'http://zulip.testserver', host: 'zulip.testserver' } });
    expect(same.status).toBe(200);
  });

  it('counts toward the per-address limit of unauthenticated requests, as /fetch_api_key does', async () => {
    const s = await startTestServer({ rateLimitPerIp: 2 });
    try {
      const post = (url: string) =>
        s.app.http.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formBody({ username: s.users.hamlet.email, password: FIXTURE_PASSWORD }) });
      expect((await post('/accounts/login')).statusCode).toBe(200);
      expect((await post('/api/v1/fetch_api_key')).statusCode).toBe(200);
      const third = await post('/accounts/login');
      expect(third.statusCode).toBe(429);
      expect(JSON.parse(third.body)).toMatchObject({ result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT' });
      expect(third.headers['set-cookie']).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it('marks both cookies Secure behind https', async () => {
    const s = await startTestServer({ externalScheme: 'https' });
    try {
      const res = await s.app.http.inject({ method: 'POST', url: '/accounts/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formBody({ username: s.users.hamlet.email, password: FIXTURE_PASSWORD }) });
      const cookies = res.headers['set-cookie'] as string[];
      expect(cookies[0]).toMatch(/^sessionid=[^;]+; Path=\/; Max-Age=1209600; SameSite=Lax; HttpOnly; Secure$/);
      expect(cookies[1]).toMatch(/^csrftoken=[^;]+; Path=\/; Max-Age=1209600; SameSite=Lax; Secure$/);
    } finally {
      await s.close();
    }
  });
});

describe('/json: the API for a signed-in browser', () => {
  let hamlet: Session;
  beforeAll(async () => {
    hamlet = await login(t.users.hamlet);
  });

  it('answers GET routes byte for byte as /api/v1 does', async () => {
    for (const path of ['/users/me', '/users', '/server_settings', `/users/${t.users.iago.id}`, '/messages?anchor=newest&num_before=5&num_after=0&narrow=%5B%5D', '/users/me/subscriptions']) {
      const viaApi = await raw('GET', '/api/v1' + path, { headers: { authorization: basicAuth(t.users.hamlet) } });
      const viaJson = await raw('GET', '/json' + path, { headers: asSession(hamlet, false) });
      expect(viaApi.status).toBe(200);
      expect(viaJson.status).toBe(200);
      expect(viaJson.text).toBe(viaApi.text);
      expect(viaJson.headers['content-type']).toBe(viaApi.headers['content-type']);
    }
  });

  it('answers errors and unknown paths as /api/v1 does', async () => {
    const api404 = await raw('GET', '/api/v1/no/such/route', { headers: { authorization: basicAuth(t.users.hamlet) } });
    const json404 = await raw('GET', '/json/no/such/route', { headers: asSession(hamlet) });
    expect(api404.text).toBe('{"result":"error","msg":"Not Found","code":"BAD_REQUEST"}\n');
    expect(json404.text).toBe(api404.text);
    expect(json404.status).toBe(404);
    const apiBad = await raw('GET', '/api/v1/users/999999', { headers: { authorization: basicAuth(t.users.hamlet) } });
    const jsonBad = await raw('GET', '/json/users/999999', { headers: asSession(hamlet) });
    expect([jsonBad.status, jsonBad.text]).toEqual([apiBad.status, apiBad.text]);
    const api405 = await raw('PUT', '/api/v1/users/me', { headers: { authorization: basicAuth(t.users.hamlet) } });
    const json405 = await raw('PUT', '/json/users/me', { headers: asSession(hamlet) });
    expect([json405.status, json405.text, json405.headers.allow]).toEqual([405, api405.text, api405.headers.allow]);
  });

  // /json is one wildcard route dispatched through a router built at the first /json request
  // (server.ts, P10): HEAD, encoded path parameters, webhook paths and the route in the request
  // metrics must come out as they did when every endpoint had a Fastify route of its own.
  it('answers HEAD, decodes path parameters, has no webhooks, and names the endpoint in the metrics', async () => {
    const headApi = await raw('HEAD', '/api/v1/users/me', { headers: { authorization: basicAuth(t.users.hamlet) } });
    const headJson = await raw('HEAD', '/json/users/me', { headers: asSession(hamlet, false) });
    expect([headJson.status, headJson.text, headJson.headers['content-length'], headJson.headers['content-type']]).toEqual([200, '', headApi.headers['content-length'], 'application/json']);
    const byEmail = `/users/${encodeURIComponent(t.users.iago.email)}`;
    const viaApi = await raw('GET', '/api/v1' + byEmail, { headers: { authorization: basicAuth(t.users.hamlet) } });
    const viaJson = await raw('GET', '/json' + byEmail, { headers: asSession(hamlet, false) });
    expect([viaJson.status, viaJson.text]).toEqual([200, viaApi.text]);
    expect(viaJson.body.user.user_id).toBe(t.users.iago.id);
    const webhook = await raw('POST', '/json/external/github', { headers: asSession(hamlet) });
    expect([webhook.status, webhook.text]).toEqual([404, '{"result":"error","msg":"Not Found","code":"BAD_REQUEST"}\n']);
    await raw('GET', '/json/no/such/route', { headers: asSession(hamlet) });
    const metrics = (await t.app.http.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^parley_http_requests_total\{method="GET",route="\/json\/users\/me",status="200"\} [1-9]/m);
    expect(metrics).toMatch(/^parley_http_requests_total\{method="HEAD",route="\/json\/users\/me",status="200"\} [1-9]/m);
    expect(metrics).toMatch(/^parley_http_requests_total\{method="GET",route="\/json\/users\/:user_id",status="200"\} [1-9]/m);
    expect(metrics).toMatch(/^parley_http_requests_total\{method="GET",route="unmatched",status="404"\} [1-9]/m);
    expect(metrics).not.toMatch(/route="\/json\/\*"/);
  });

  it('needs the session cookie: no cookie, a bad cookie or Basic auth is 401', async () => {
    for (const headers of <Record<string, string>[]>[{}, { cookie: 'sessionid=not-a-session' }, { authorization: basicAuth(t.users.hamlet) }, { cookie: 'sessionid=' + 'x'.repeat(5000) }]) {
      const res = await raw('GET', '/json/users/me', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(NOT_LOGGED_IN);
      expect(res.headers['www-authenticate']).toBe('Session realm="zulip"');
    }
  });

  it('serves the routes open to everyone without a session', async () => {
    const res = await raw('GET', '/json/server_settings');
    expect(res.status).toBe(200);
    expect(res.text).toBe((await raw('GET', '/api/v1/server_settings')).text);
  });

  it('a POST to a route open to everyone is CSRF-checked against the csrftoken cookie (Django double submit)', async () => {
    const form = { username: t.users.iago.email, password: FIXTURE_PASSWORD };
    const noCookie = await raw('POST', '/json/fetch_api_key', { form });
    expect({ status: noCookie.status, body: noCookie.body }).toEqual({ status: 403, body: { result: 'error', msg: 'CSRF error: CSRF cookie not set.', code: 'CSRF_FAILED', reason: 'CSRF cookie not set.' } });
    const mismatch = await raw('POST', '/json/fetch_api_key', { form, headers: { cookie: 'csrftoken=abc', 'x-csrftoken': 'abd' } });
    expect(mismatch.body.code).toBe('CSRF_FAILED');
    const matching = await raw('POST', '/json/fetch_api_key', { form, headers: { cookie: 'csrftoken=abc', 'x-csrftoken': 'abc' } });
    expect(matching.text).toBe((await raw('POST', '/api/v1/fetch_api_key', { form })).text);
  });

  it('needs the CSRF token on POST, PATCH and DELETE, and refuses without changing anything', async () => {
    const draft = expectSuccess(await t.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'kept', timestamp: 1 }] }, 'hamlet')).ids[0] as number;
    const settingsBefore = (await t.row(t.users.hamlet.id)).full_name;
    const countBefore = (await t.app.ctx.db.selectFrom('messages').select('id').execute()).length;
    const attempts: [string, string, Record<string, unknown>][] = [
      ['POST', '/json/messages', { type: 'private', to: JSON.stringify([t.users.iago.id]), content: 'no csrf' }],
      ['PATCH', '/json/settings', { full_name: 'Forged Name' }],
      ['DELETE', `/json/drafts/${draft}`, {}],
    ];
    for (const [method, url, form] of attempts) {
      const missing = await raw(method, url, { form, headers: asSession(hamlet, false) });
      expect({ status: missing.status, body: missing.body }).toEqual({ status: 403, body: { result: 'error', msg: 'CSRF error: CSRF token missing.', code: 'CSRF_FAILED', reason: 'CSRF token missing.' } });
      const wrong = await raw(method, url, { form, headers: { cookie: hamlet.cookie, 'x-csrftoken': (hamlet.csrf[0] === 'A' ? 'B' : 'A') + hamlet.csrf.slice(1) } });
      const reason = "CSRF token from the 'X-Csrftoken' HTTP header incorrect.";
      expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 403, body: { result: 'error', msg: `CSRF error: ${reason}`, code: 'CSRF_FAILED', reason } });
    }
    expect((await t.app.ctx.db.selectFrom('messages').select('id').execute()).length).toBe(countBefore);
    expect((await t.row(t.users.hamlet.id)).full_name).toBe(settingsBefore);
    expect(expectSuccess(await t.get('/drafts', {}, 'hamlet')).drafts.map((d: { id: number }) => d.id)).toContain(draft);

    // With the token, the same requests go through.
    const sent = await raw('POST', '/json/messages', { form: attempts[0]![2], headers: asSession(hamlet) });
    expect(sent.body).toMatchObject({ result: 'success', msg: '' });
    expect((await raw('PATCH', '/json/settings', { form: { full_name: 'King Hamlet II' }, headers: asSession(hamlet) })).body.result).toBe('success');
    expect((await t.row(t.users.hamlet.id)).full_name).toBe('King Hamlet II');
    expect((await raw('DELETE', `/json/drafts/${draft}`, { headers: asSession(hamlet) })).body).toEqual({ result: 'success', msg: '' });
    // A message sent from the browser is from the "website" client (Zulip's name), and read for its sender.
    const msg = await t.app.ctx.db.selectFrom('messages').select('sending_client').where('id', '=', sent.body.id).executeTakeFirstOrThrow();
    expect(msg.sending_client).toBe('website');
  });

  it('does not need the CSRF token on GET', async () => {
    expect((await raw('GET', '/json/users/me', { headers: asSession(hamlet, false) })).status).toBe(200);
  });

  it('event queues work through the session', async () => {
    const reg = await raw('POST', '/json/register', { form: { event_types: ['message'] }, headers: asSession(hamlet) });
    expect(reg.body.result).toBe('success');
    await t.post('/messages', { type: 'private', to: JSON.stringify([t.users.hamlet.id]), content: 'hi' }, 'iago');
    const ev = await raw('GET', '/json/events', { form: { queue_id: reg.body.queue_id, last_event_id: -1 }, headers: asSession(hamlet, false) });
    expect(ev.body.events.map((e: { type: string }) => e.type)).toContain('message');
    const del = await raw('DELETE', '/json/events', { form: { queue_id: reg.body.queue_id }, headers: asSession(hamlet) });
    expect(del.body).toEqual({ result: 'success', msg: '' });
  });
});

describe('/api/v1 never accepts the session cookie', () => {
  it('a cookie alone is 401 with the Basic challenge; with Basic auth the Basic user acts', async () => {
    const s = await login(t.users.cordelia);
    const res = await raw('GET', '/api/v1/users/me', { headers: asSession(s) });
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: NOT_LOGGED_IN });
    expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
    const both = await raw('GET', '/api/v1/users/me', { headers: { ...asSession(s), authorization: basicAuth(t.users.iago) } });
    expect(both.body.user_id).toBe(t.users.iago.id);
  });
});

describe('session lifetime', () => {
  let u: TestUser;
  beforeAll(async () => {
    u = await t.createUser({ email: 'lifetime@zulip.com', fullName: 'Lifetime' });
  });

  it('logout needs the CSRF token, then ends the session and clears the cookies', async () => {
    const s = await login(u);
    const refused = await raw('POST', '/accounts/logout', { headers: asSession(s, false) });
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { result: 'error', msg: 'CSRF error: CSRF token missing.', code: 'CSRF_FAILED', reason: 'CSRF token missing.' } });
    expect((await raw('GET', '/json/users/me', { headers: asSession(s) })).status).toBe(200);
    const out = await raw('POST', '/accounts/logout', { headers: asSession(s) });
    expect(out.body).toEqual({ result: 'success', msg: '' });
    expect(out.headers['set-cookie']).toEqual(['sessionid=; Path=/; Max-Age=0; SameSite=Lax; HttpOnly', 'csrftoken=; Path=/; Max-Age=0; SameSite=Lax']);
    expect((await raw('GET', '/json/users/me', { headers: asSession(s) })).body).toEqual(NOT_LOGGED_IN);
    expect((await raw('POST', '/accounts/logout', { headers: asSession(s) })).body).toEqual(NOT_LOGGED_IN);
  });

  it('an expired session is refused and removed', async () => {
    const s = await login(u);
    const before = await sessionCount(u.id);
    await t.app.ctx.db.updateTable('web_sessions').set({ expires_at: 1000 }).where('user_id', '=', u.id).execute();
    expect((await raw('GET', '/json/users/me', { headers: asSession(s) })).body).toEqual(NOT_LOGGED_IN);
    expect(await sessionCount(u.id)).toBe(before - 1);
  });

  it('a password change ends the other sessions but keeps the one that made it', async () => {
    const a = await login(u);
    const b = await login(u);
    const newPassword = 'a-New-passw0rd-for-lifetime';
    const res = await raw('PATCH', '/json/settings', { form: { old_password: u.password, new_password: newPassword }, headers: asSession(a) });
    expect(res.body.result).toBe('success');
    expect((await raw('GET', '/json/users/me', { headers: asSession(a) })).status).toBe(200);
    expect((await raw('GET', '/json/users/me', { headers: asSession(b) })).body).toEqual(NOT_LOGGED_IN);
    u = { ...u, password: newPassword };
  });

  it('regenerating the API key keeps sessions (as in Zulip)', async () => {
    const s = await login(u);
    expect((await raw('POST', '/json/users/me/api_key/regenerate', { headers: asSession(s) })).body.result).toBe('success');
    expect((await raw('GET', '/json/users/me', { headers: asSession(s) })).status).toBe(200);
  });

  it("a deactivated user's sessions are refused and removed", async () => {
    const s = await login(u);
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    const res = await raw('GET', '/json/users/me', { headers: asSession(s) });
    expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: NOT_LOGGED_IN });
    expect(await sessionCount(u.id)).toBe(0);
    // And signing in again answers the deactivation, as /fetch_api_key does.
    const again = await raw('POST', '/accounts/login', { form: { username: u.email, password: u.password } });
    expect({ status: again.status, body: again.body }).toEqual({ status: 401, body: { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' } });
  });
});

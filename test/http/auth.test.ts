import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, FIXTURE_PASSWORD, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ loginFailLimit: 5 });
});
afterAll(async () => t.close());

const NOT_LOGGED_IN = 'Not logged in: API authentication or user session required';

describe('HTTP Basic authentication', () => {
  it('no credentials: 401 UNAUTHORIZED with WWW-Authenticate', async () => {
    const res = await t.get('/users/me', {}, null);
    expectError(res, 401, 'UNAUTHORIZED', NOT_LOGGED_IN);
    expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
  });

  it('a non-Basic scheme is a 400', async () => {
    const res = await t.request('GET', '/users/me', {}, null, { authorization: 'Bearer abc' });
    expectError(res, 400, 'BAD_REQUEST', 'This endpoint requires HTTP basic authentication.');
  });

  it('an undecodable Basic payload is a 401', async () => {
    const res = await t.request('GET', '/users/me', {}, null, { authorization: 'Basic ' + Buffer.from('no-colon-here').toString('base64') });
    expectError(res, 401, 'UNAUTHORIZED', 'Invalid authorization header for basic auth');
  });

  it('a malformed key', async () => {
    const res = await t.get('/users/me', {}, { ...t.users.hamlet, apiKey: 'short' });
    expectError(res, 401, 'UNAUTHORIZED', 'Malformed API key');
    expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
  });

  it('a wrong key, and a right key with another user\'s email', async () => {
    expectError(await t.get('/users/me', {}, { ...t.users.hamlet, apiKey: 'a'.repeat(32) }), 401, 'UNAUTHORIZED', 'Invalid API key');
    expectError(await t.get('/users/me', {}, { ...t.users.hamlet, email: t.users.iago.email }), 401, 'UNAUTHORIZED', 'Invalid API key');
  });

  it('email compare is case-insensitive and whitespace around the key is stripped', async () => {
    const body = expectSuccess(await t.get('/users/me', {}, { ...t.users.hamlet, email: 'HAMLET@Zulip.COM', apiKey: ` ${t.users.hamlet.apiKey} ` }));
    expect(body.user_id).toBe(t.users.hamlet.id);
  });

  it('bots authenticate like users', async () => {
    const body = expectSuccess(await t.get('/users/me', {}, 'bot'));
    expect(body.is_bot).toBe(true);
    expect(body.user_id).toBe(t.users.bot.id);
  });

  it('a deactivated user\'s API key gets 401 USER_DEACTIVATED "Account is deactivated" (issue 18 regression)', async () => {
    const u = await t.createUser({ email: 'gone@zulip.com', fullName: 'Gone User' });
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    expectError(await t.get('/users/me', {}, u), 401, 'USER_DEACTIVATED', 'Account is deactivated');
    expectError(await t.post('/register', {}, u), 401, 'USER_DEACTIVATED', 'Account is deactivated');
    expectError(await t.post('/messages', { type: 'stream', to: 'x', topic: 't', content: 'c' }, u), 401, 'USER_DEACTIVATED', 'Account is deactivated');
    expectError(await t.post('/fetch_api_key', { username: u.email, password: u.password }, null), 401, 'USER_DEACTIVATED', 'Account is deactivated');
  });

  it('cached credentials never outlive a change: deactivation, role change, key change', async () => {
    const u = await t.createUser({ email: 'cached@zulip.com', fullName: 'Cached User' });
    expectSuccess(await t.get('/users/me', {}, u)); // now cached
    expectSuccess(await t.patch(`/users/${u.id}`, { role: 300 }, 'owner'));
    expect(expectSuccess(await t.get('/users/me', {}, u)).role).toBe(300);
    // A write outside any action (as an operator's SQL would be) also drops the cache.
    await t.app.ctx.db.updateTable('users').set({ api_key: 'N'.repeat(32) }).where('id', '=', u.id).execute();
    expectError(await t.get('/users/me', {}, u), 401, 'UNAUTHORIZED', 'Invalid API key');
    const moved = { ...u, apiKey: 'N'.repeat(32) };
    expectSuccess(await t.get('/users/me', {}, moved));
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    expectError(await t.get('/users/me', {}, moved), 401, 'USER_DEACTIVATED', 'Account is deactivated');
  });

  it('authentication runs no SQL once the key is cached: /users/me costs one statement', async () => {
    expectSuccess(await t.get('/users/me', {}, 'cordelia'));
    const before = t.app.ctx.store.stats.queries;
    expectSuccess(await t.get('/users/me', {}, 'cordelia'));
    // The user row and profile data come from caches. The one statement: on SQLite, PRAGMA
    // data_version (max_message_id is kept in memory, checked against other connections'
    // commits: state/user-extras.ts); on PostgreSQL, the max_message_id read itself.
    expect(t.app.ctx.store.stats.queries - before).toBe(1);
  });

  it('a deactivated realm', async () => {
    const u = await t.createUser({ email: 'realmcheck@zulip.com', fullName: 'Realm Check' });
    await t.app.ctx.db.updateTable('realms').set({ deactivated: 1 }).execute();
    try {
      expectError(await t.get('/users/me', {}, u), 401, 'REALM_DEACTIVATED', 'This organization has been deactivated');
      expectError(await t.post('/register', {}, u), 401, 'REALM_DEACTIVATED', 'This organization has been deactivated');
      expectError(await t.post('/fetch_api_key', { username: u.email, password: FIXTURE_PASSWORD }, null), 401, 'REALM_DEACTIVATED', 'This organization has been deactivated');
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ deactivated: 0 }).execute();
    }
  });
});

describe('POST /fetch_api_key', () => {
  it('returns api_key, email and user_id for the right password', async () => {
    const body = expectSuccess(await t.post('/fetch_api_key', { username: 'Othello@zulip.com', password: FIXTURE_PASSWORD }, null));
    expect(body).toEqual({ result: 'success', msg: '', api_key: t.users.othello.apiKey, email: 'othello@zulip.com', user_id: t.users.othello.id });
  });

  it('missing parameters', async () => {
    expectError(await t.post('/fetch_api_key', {}, null), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'username' argument", { var_name: 'username' });
    expectError(await t.post('/fetch_api_key', { username: 'x@y.com' }, null), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'password' argument", { var_name: 'password' });
  });

  it('a username that is not an email', async () => {
    expectError(await t.post('/fetch_api_key', { username: 'hamlet', password: 'x' }, null), 400, 'BAD_REQUEST', 'Enter a valid email address.');
  });

  it('wrong password and unknown user give the same 401', async () => {
    expectError(await t.post('/fetch_api_key', { username: 'cordelia@zulip.com', password: 'wrong' }, null), 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');
    expectError(await t.post('/fetch_api_key', { username: 'nobody@zulip.com', password: 'wrong' }, null), 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');
  });

  it('bots cannot log in with a password', async () => {
    expectError(await t.post('/fetch_api_key', { username: t.users.bot.email, password: '' }, null), 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');
  });

  it('a deactivated user', async () => {
    const u = await t.createUser({ email: 'inactive@zulip.com', fullName: 'Inactive One' });
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    expectError(await t.post('/fetch_api_key', { username: u.email, password: u.password }, null), 401, 'USER_DEACTIVATED', 'Account is deactivated');
  });

  it('is rate limited after 5 failed attempts, even with the right password', async () => {
    const u = await t.createUser({ email: 'limited@zulip.com', fullName: 'Limited User' });
    for (let i = 0; i < 5; i++) {
      expectError(await t.post('/fetch_api_key', { username: u.email, password: 'nope' }, null), 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');
    }
    const res = await t.post('/fetch_api_key', { username: u.email, password: u.password }, null);
    expect(res.status).toBe(429);
    expect(res.body.result).toBe('error');
    expect(res.body.code).toBe('RATE_LIMIT_HIT');
    expect(res.body.msg).toBe('API usage exceeded rate limit');
    expect(res.body['retry-after']).toBeGreaterThan(1700);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(1700);
    // Other usernames are unaffected.
    expectSuccess(await t.post('/fetch_api_key', { username: 'cordelia@zulip.com', password: FIXTURE_PASSWORD }, null));
  });

  it('first login of an API-created user moves date_joined, with its event', async () => {
    expectSuccess(await t.post('/users', { email: 'newbie@zulip.com', password: 'newbie-Pass-42', full_name: 'New Bie' }, 'owner'));
    const before = await t.app.ctx.db.selectFrom('users').selectAll().where('email_lower', '=', 'newbie@zulip.com').executeTakeFirstOrThrow();
    expect(before.tos_version).toBe(-1);
    const events = await t.captureEvents(async () => {
      expectSuccess(await t.post('/fetch_api_key', { username: 'newbie@zulip.com', password: 'newbie-Pass-42' }, null));
    });
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: before.id, date_joined: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d\+00:00$/) } },
    ]);
    // A second login changes nothing.
    const again = await t.captureEvents(async () => {
      expectSuccess(await t.post('/fetch_api_key', { username: 'newbie@zulip.com', password: 'newbie-Pass-42' }, null));
    });
    expect(again).toEqual([]);
  });

  it('first login of an imported stub clears is_imported_stub', async () => {
    const u = await t.createUser({ email: 'stub@zulip.com', fullName: 'Stub User' });
    await t.app.ctx.db.updateTable('users').set({ is_imported_stub: 1 }).where('id', '=', u.id).execute();
    const events = await t.captureEvents(async () => {
      expectSuccess(await t.post('/fetch_api_key', { username: u.email, password: u.password }, null));
    });
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, is_imported_stub: false } },
      { type: 'realm_user', op: 'update', person: { user_id: u.id, date_joined: expect.any(String) } },
    ]);
    expect((await t.row(u.id)).is_imported_stub).toBe(0);
  });
});

describe('GET /server_settings', () => {
  it('ignores credentials, even wrong ones', async () => {
    const res = await t.get('/server_settings', {}, { ...t.users.hamlet, apiKey: 'b'.repeat(32) });
    const body = expectSuccess(res);
    expect(body.zulip_version).toEqual(expect.any(String));
    expect(body.zulip_feature_level).toBeGreaterThanOrEqual(496);
    expect(body.realm_uri).toBe('http://zulip.testserver');
    expect(body.realm_url).toBe('http://zulip.testserver');
    expect(body.email_auth_enabled).toBe(true);
    expect(body.require_email_format_usernames).toBe(true);
    expect(body.authentication_methods.password).toBe(true);
    expect(body.push_notifications_enabled).toBe(false);
    expect(body.realm_name).toBe('Parley');
  });
});

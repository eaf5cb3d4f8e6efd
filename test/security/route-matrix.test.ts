import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes.js';
import { INTEGRATIONS } from '../../src/integrations/index.js';
import { basicAuth, startTestServer, type FixtureName, type Res, type TestServer, type TestUser } from '../support/server.js';

/**
 * Route-by-role matrix over the whole route table. Every route needs an entry
 * in RULES (a new route without one fails this test): who Zulip refuses and
 * with which error. Then for every route: no credentials, a deactivated user,
 * a deactivated bot, a malformed key and a wrong key get 401; every role gets
 * a Zulip envelope and never a 5xx; the roles Zulip refuses get the exact
 * refusal. Expectations come from api.md / zulip-behaviour notes and Zulip's
 * decorators (require_realm_admin, require_realm_owner, require_member_or_admin,
 * human_users_only, access_user_by_id(for_admin=True)).
 */
type Role = 'owner' | 'admin' | 'moderator' | 'member' | 'guest' | 'bot';
const AS: Record<Role, FixtureName> = { owner: 'owner', admin: 'iago', moderator: 'shiva', member: 'hamlet', guest: 'polonius', bot: 'bot' };
const ROLES = Object.keys(AS) as Role[];

interface Refusal {
  readonly status: number;
  readonly code: string;
  readonly msg: string;
}
const ADMIN: Refusal = { status: 400, code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' };
const OWNER: Refusal = { status: 400, code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' };
const GUEST: Refusal = { status: 400, code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Not allowed for guest users' };
const BOT: Refusal = { status: 400, code: 'BAD_REQUEST', msg: 'This endpoint does not accept bot requests.' };
const INSUFFICIENT: Refusal = { status: 400, code: 'BAD_REQUEST', msg: 'Insufficient permission' };
const NO_CREATE: Refusal = { status: 400, code: 'BAD_REQUEST', msg: 'User not authorized to create users' };

interface Rule {
  readonly refuse?: Partial<Record<Role, Refusal>>;
  /** Parameters that get a request past parameter checks to the permission check. */
  readonly params?: Record<string, unknown>;
}
const any: Rule = {};
const lowerThanAdmin = (r: Refusal) => ({ moderator: r, member: r, guest: r, bot: r });
const admin: Rule = { refuse: lowerThanAdmin(ADMIN) };
const owner: Rule = { refuse: { admin: OWNER, ...lowerThanAdmin(OWNER) } };
const human: Rule = { refuse: { bot: BOT } };
const memberOrAdmin: Rule = { refuse: { guest: GUEST, bot: BOT } };
const nonGuest: Rule = { refuse: { guest: GUEST } };
const forAdmin: Rule = { refuse: lowerThanAdmin(INSUFFICIENT) };

/** The routes Zulip serves without credentials; must equal the auth:'none' entries of the table. */
const UNAUTHENTICATED = ['GET /server_settings', 'POST /fetch_api_key'];

const RULES: Record<string, Rule> = {
  // Bot storage (issue 19): Zulip's views check no role.
  'GET /bot_storage': any,
  'PUT /bot_storage': any,
  'DELETE /bot_storage': any,
  // Organization exports (issue 19): require_realm_admin on all four views.
  'POST /export/realm': admin,
  'GET /export/realm': admin,
  'GET /export/realm/consents': admin,
  'DELETE /export/realm/:export_id': admin,
  // Incoming webhooks (issue 19): any user's key, checked by Zulip's webhook_view.
  ...Object.fromEntries(INTEGRATIONS.map((i) => [`POST /external/${i.name}`, any])),
  'GET /server_settings': any,
  'POST /fetch_api_key': any,
  'POST /register': any,
  'GET /events': any,
  'DELETE /events': any,
  'PATCH /settings': human,
  'PATCH /settings/display': human,
  'PATCH /settings/notifications': human,
  'POST /typing': any,
  'GET /users/me/alert_words': any,
  'POST /users/me/alert_words': any,
  'DELETE /users/me/alert_words': any,
  'GET /users': any,
  'POST /users': { refuse: { admin: NO_CREATE, ...lowerThanAdmin(ADMIN) } },
  'GET /users/me': any,
  'DELETE /users/me': any,
  'GET /users/:user_id': any,
  'PATCH /users/:user_id': { ...forAdmin, params: { full_name: 'Renamed Othello' } },
  'DELETE /users/:user_id': forAdmin,
  'POST /users/:user_id/reactivate': forAdmin,
  'POST /users/me/api_key/regenerate': human,
  'POST /users/me/avatar': any,
  'DELETE /users/me/avatar': any,
  'GET /realm/profile_fields': any,
  'POST /realm/profile_fields': admin,
  'PATCH /realm/profile_fields': admin,
  'PATCH /realm/profile_fields/:field_id': admin,
  'DELETE /realm/profile_fields/:field_id': admin,
  'PATCH /users/me/profile_data': human,
  'DELETE /users/me/profile_data': human,
  'POST /bots': memberOrAdmin,
  'GET /bots': memberOrAdmin,
  'PATCH /bots/:bot_id': memberOrAdmin,
  'DELETE /bots/:bot_id': any,
  'POST /bots/:bot_id/api_key/regenerate': memberOrAdmin,
  'POST /users/me/status': human,
  'POST /users/:user_id/status': human,
  'GET /users/:user_id/status': any,
  'POST /user_groups/create': nonGuest,
  'GET /user_groups': memberOrAdmin,
  'PATCH /user_groups/:user_group_id': memberOrAdmin,
  'POST /user_groups/:user_group_id/deactivate': any,
  'POST /user_groups/:user_group_id/members': nonGuest,
  'POST /user_groups/:user_group_id/subgroups': memberOrAdmin,
  'GET /user_groups/:user_group_id/members': memberOrAdmin,
  'GET /user_groups/:user_group_id/members/:user_id': memberOrAdmin,
  'GET /user_groups/:user_group_id/subgroups': memberOrAdmin,
  'GET /drafts': any,
  'POST /drafts': any,
  'PATCH /drafts/:draft_id': any,
  'DELETE /drafts/:draft_id': any,
  // Scheduled messages and reminders: any user (Zulip's views have no role decorator).
  'PATCH /users/me/subscriptions/muted_topics': any,
  'GET /messages/:message_id/read_receipts': any,
  'POST /streams/:stream_id/delete_topic': admin,
  // Issue 16 remainder: matches_narrow and message reports check no role (Zulip's views);
  // update_realm_user_settings_defaults is require_realm_admin.
  'GET /messages/matches_narrow': { params: { msg_ids: [1], narrow: [] } },
  'POST /messages/:message_id/report': { params: { report_type: 'spam' } },
  'PATCH /realm/user_settings_defaults': { ...admin, params: { enter_sends: true } },
  'GET /users/:user_id/channels': any,
  'GET /users/:user_id/subscriptions': any,
  'GET /scheduled_messages': any,
  'POST /scheduled_messages': any,
  'PATCH /scheduled_messages/:scheduled_message_id': any,
  'DELETE /scheduled_messages/:scheduled_message_id': any,
  'POST /reminders': any,
  'GET /reminders': any,
  'DELETE /reminders/:reminder_id': any,
  'GET /navigation_views': any,
  'POST /navigation_views': any,
  'PATCH /navigation_views/*': any,
  'DELETE /navigation_views/*': any,
  'GET /saved_snippets': any,
  'POST /saved_snippets': any,
  'PATCH /saved_snippets/:saved_snippet_id': any,
  'DELETE /saved_snippets/:saved_snippet_id': any,
  'POST /channels/create': nonGuest,
  'GET /streams': any,
  'GET /streams/:stream_id': any,
  'GET /get_stream_id': any,
  'GET /streams/:stream_id/members': any,
  'PATCH /streams/:stream_id': any,
  'DELETE /streams/:stream_id': any,
  'GET /users/me/subscriptions': any,
  'POST /users/me/subscriptions': nonGuest,
  'DELETE /users/me/subscriptions': any,
  'PATCH /users/me/subscriptions': any,
  'POST /users/me/subscriptions/properties': any,
  'PATCH /users/me/subscriptions/:stream_id': any,
  'GET /users/me/subscriptions/:stream_id': any,
  'GET /users/:user_id/subscriptions/:stream_id': any,
  'POST /channel_folders/create': admin,
  'GET /channel_folders': any,
  'PATCH /channel_folders/:channel_folder_id': admin,
  'PATCH /channel_folders': admin,
  'POST /user_topics': any,
  'GET /realm/domains': any,
  'POST /realm/domains': owner,
  'PATCH /realm/domains/:domain': owner,
  'DELETE /realm/domains/:domain': owner,
  'POST /default_streams': admin,
  'DELETE /default_streams': admin,
  // Invitations: require_member_or_admin; the finer rules are judged after the role (test/http/invites.test.ts).
  'GET /invites': memberOrAdmin,
  'POST /invites': memberOrAdmin,
  'POST /invites/multiuse': memberOrAdmin,
  'DELETE /invites/:invite_id': memberOrAdmin,
  'DELETE /invites/multiuse/:invite_id': memberOrAdmin,
  'POST /invites/:invite_id/resend': memberOrAdmin,
  'PATCH /realm': admin,
  'POST /messages': any,
  'GET /messages': any,
  'GET /messages/:message_id': any,
  'POST /messages/render': any,
  'PATCH /messages/:message_id': any,
  'DELETE /messages/:message_id': any,
  'GET /messages/:message_id/history': any,
  'POST /messages/:message_id/typing': any,
  'POST /messages/flags': any,
  'POST /messages/flags/narrow': any,
  'POST /mark_all_as_read': any,
  'POST /mark_stream_as_read': any,
  'POST /mark_topic_as_read': any,
  'POST /messages/:message_id/reactions': any,
  'DELETE /messages/:message_id/reactions': any,
  'POST /users/me/presence': human,
  'GET /users/:user_id_or_email/presence': any,
  'GET /realm/presence': any,
  'GET /realm/emoji': any,
  'POST /realm/emoji/*': memberOrAdmin,
  'DELETE /realm/emoji/*': any,
  'GET /realm/linkifiers': any,
  'POST /realm/filters': admin,
  'PATCH /realm/filters/:filter_id': admin,
  'DELETE /realm/filters/:filter_id': admin,
  'PATCH /realm/linkifiers': admin,
  'POST /realm/playgrounds': admin,
  'DELETE /realm/playgrounds/:playground_id': admin,
  'GET /users/me/:stream_id/topics': any,
  'GET /streams/:stream_id/email_address': any,
  // the mobile app (issue 18)
  'POST /users/me/muted_users/:muted_user_id': any,
  'DELETE /users/me/muted_users/:muted_user_id': any,
  'POST /register_client_device': any,
  'POST /remove_client_device': any,
  'POST /mobile_push/register': human,
  'POST /users/me/apns_device_token': human,
  'DELETE /users/me/apns_device_token': human,
  'POST /users/me/android_gcm_reg_id': human,
  'DELETE /users/me/android_gcm_reg_id': human,
  'POST /user_uploads': any,
  'GET /user_uploads/:realm_id_str/*': any,
  'GET /attachments': any,
  'DELETE /attachments/:attachment_id': any,
};

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'cache-control': 'no-store',
};

const key = (ep: { method: string; path: string }): string => `${ep.method} ${ep.path}`;

let t: TestServer;
let deactivatedUser: TestUser;
let deactivatedBot: TestUser;
const current = new Map<FixtureName, TestUser>();

function fill(p: string): string {
  return p.replace(/:[A-Za-z_]+|\*/g, (m) => (m === ':user_id' || m === ':user_id_or_email' ? String(t.users.othello.id) : m === '*' ? 'zzz' : m === ':domain' ? 'example.com' : '1'));
}

function envelope(res: Res, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
  if (res.status >= 300 && res.status < 400) return;
  expect(res.headers['content-type'], what).toMatch(/^application\/json/);
  expect(['success', 'error'], `${what}: ${JSON.stringify(res.body)}`).toContain(res.body?.result);
  expect(typeof res.body.msg, what).toBe('string');
  if (res.body.result === 'error' && res.status !== 405) expect(typeof res.body.code, what).toBe('string');
}

function expect401(res: Res, msg: string, what: string, code = 'UNAUTHORIZED'): void {
  expect({ status: res.status, body: res.body }, what).toEqual({ status: 401, body: { result: 'error', msg, code } });
  // Zulip's UnauthorizedError alone carries the challenge; USER_DEACTIVATED is an AuthenticationFailedError.
  expect(res.headers['www-authenticate'], what).toBe(code === 'UNAUTHORIZED' ? 'Basic realm="zulip"' : undefined);
  expect(res.headers['x-content-type-options'], what).toBe('nosniff');
}

/** Keys regenerated and users deactivated by the matrix itself are put back. */
async function restoreFixtures(): Promise<void> {
  for (const [name, u] of Object.entries(t.users) as [FixtureName, TestUser][]) {
    const row = await t.row(u.id);
    current.set(name, { ...u, apiKey: row.api_key });
    if (!row.is_active) {
      const res = await t.request('POST', `/users/${u.id}/reactivate`, {}, current.get('owner') ?? t.users.owner);
      expect(res.status, `reactivating ${name}`).toBe(200);
    }
  }
}

beforeAll(async () => {
  t = await startTestServer();
  await restoreFixtures();
  deactivatedUser = await t.createUser({ email: 'gone@zulip.com', fullName: 'Gone' });
  expect((await t.request('DELETE', `/users/${deactivatedUser.id}`, {}, 'iago')).status).toBe(200);
  const bot = await t.post('/bots', { full_name: 'Gone Bot', short_name: 'gone' }, 'hamlet');
  expect(bot.status).toBe(200);
  deactivatedBot = { id: bot.body.user_id, email: 'gone-bot@zulip.testserver', apiKey: bot.body.api_key, password: '', role: 400, name: 'Gone Bot' };
  expect((await t.request('DELETE', `/bots/${deactivatedBot.id}`, {}, 'hamlet')).status).toBe(200);
});

afterAll(async () => {
  await t?.close();
});

describe('route-by-role matrix', () => {
  it('has an entry for every route of the table, and no stale ones', () => {
    const table = routes.map(key).sort();
    expect(Object.keys(RULES).sort()).toEqual(table);
  });

  it('the unauthenticated routes are exactly the auth:none routes', () => {
    expect(routes.filter((r) => r.auth === 'none').map(key).sort()).toEqual([...UNAUTHENTICATED].sort());
  });

  it('every authenticated route refuses missing, deactivated, malformed and wrong credentials with 401', async () => {
    const malformed = { ...t.users.hamlet, apiKey: 'short' };
    const wrong = { ...t.users.hamlet, apiKey: 'A'.repeat(32) };
    for (const ep of routes) {
      const url = fill(ep.path);
      const what = `${key(ep)}`;
      const anon = await t.request(ep.method, url, {}, null);
      if (ep.auth === 'none') {
        envelope(anon, `${what} without credentials`);
        continue;
      }
      if (ep.auth === 'webhook') {
        // Zulip's webhook_view: the key is a parameter; its errors are not turned into UNAUTHORIZED.
        expect({ status: anon.status, body: anon.body }, what).toEqual({ status: 400, body: { result: 'error', msg: "Missing 'api_key' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'api_key' } });
        const asBasic = async (u: typeof malformed) => t.request(ep.method, url, {}, u);
        expect((await asBasic(deactivatedUser)).body.msg, what).toBe('Account is deactivated');
        expect((await asBasic(malformed)).body, what).toEqual({ result: 'error', msg: 'Malformed API key', code: 'INVALID_API_KEY' });
        expect((await asBasic(wrong)).body, what).toEqual({ result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' });
        continue;
      }
      expect401(anon, 'Not logged in: API authentication or user session required', `${what} without credentials`);
      expect401(await t.request(ep.method, url, {}, deactivatedUser), 'Account is deactivated', `${what} as a deactivated user`, 'USER_DEACTIVATED');
      // A bot's API email is its delivery email.
      expect401(await t.request(ep.method, url, {}, deactivatedBot), 'Account is deactivated', `${what} as a deactivated bot`, 'USER_DEACTIVATED');
      expect401(await t.request(ep.method, url, {}, malformed), 'Malformed API key', `${what} with a malformed key`);
      expect401(await t.request(ep.method, url, {}, wrong), 'Invalid API key', `${what} with a wrong key`);
      // Another user's email with this key: still the wrong key.
      expect401(await t.request(ep.method, url, {}, { ...t.users.iago, apiKey: current.get('hamlet')!.apiKey }), 'Invalid API key', `${what} with someone else's key`);
    }
  });

  it('every role gets a Zulip envelope, never a 5xx; refused roles get the exact refusal', async () => {
    for (const ep of routes) {
      const rule = RULES[key(ep)] ?? any;
      const url = fill(ep.path);
      // Refused roles first: a refusal must not depend on what allowed roles did before.
      const order = [...ROLES].sort((a, b) => Number(!rule.refuse?.[a]) - Number(!rule.refuse?.[b]));
      for (const role of order) {
        const what = `${key(ep)} as ${role}`;
        const res = await t.request(ep.method, url, rule.params ?? {}, current.get(AS[role])!);
        envelope(res, what);
        const refusal = rule.refuse?.[role];
        if (refusal) {
          expect({ status: res.status, body: res.body }, what).toEqual({ status: refusal.status, body: { result: 'error', msg: refusal.msg, code: refusal.code } });
        } else {
          expect(res.status, `${what} must pass authentication: ${JSON.stringify(res.body)}`).not.toBe(401);
        }
        if (ep.method !== 'GET' && res.status === 200) await restoreFixtures();
      }
    }
  }, 120_000);

  it('security headers are on success and error bodies alike', async () => {
    const ok = await t.get('/users/me', {}, current.get('hamlet')!);
    const refused = await t.get('/users/me', {}, null);
    const bad = await t.get('/users/nobody@nowhere', {}, current.get('hamlet')!);
    const missing = await t.request('GET', '/no-such-endpoint', {}, current.get('hamlet')!);
    const tooLarge = await t.app.http.inject({ method: 'POST', url: '/api/v1/messages/render', headers: { authorization: basicAuth(current.get('hamlet')!), 'content-type': 'text/plain' }, payload: Buffer.alloc(31 * 1024 * 1024, 'a') });
    const framework = await t.app.http.inject({ method: 'GET', url: '/api/v1/users/%FF', headers: { authorization: basicAuth(current.get('hamlet')!) } });
    expect([ok.status, refused.status, bad.status, missing.status, tooLarge.statusCode, framework.statusCode]).toEqual([200, 401, 400, 404, 413, 404]);
    expect(JSON.parse(tooLarge.body)).toEqual({ result: 'error', msg: 'Request too large', code: 'REQUEST_TOO_LARGE' });
    for (const headers of [ok.headers, refused.headers, bad.headers, missing.headers, tooLarge.headers, framework.headers]) {
      for (const [h, v] of Object.entries(SECURITY_HEADERS)) expect(headers[h], h).toBe(v);
      expect(headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
    }
  });

  it('errors never carry stack traces or internals', async () => {
    const samples = [
      await t.post('/users/me/alert_words', { alert_words: '['.repeat(20000) + ']'.repeat(20000) }, current.get('hamlet')!),
      await t.get('/messages', { narrow: '{"a":'.repeat(5000) + '1' + '}'.repeat(5000), anchor: 'newest', num_before: 1, num_after: 0 }, current.get('hamlet')!),
      await t.get('/users', { user_ids: '[99999999999999999999]' }, current.get('hamlet')!),
    ];
    for (const res of samples) {
      expect(res.status).toBeLessThan(500);
      expect(JSON.stringify(res.body)).not.toMatch(/\bat [^\s]+ \(|node_modules|\/src\/|SQLITE_|syntax error/i);
    }
  });

  it('regressions found by the fuzz: NUL bytes and bad percent-encoding in paths are unknown URLs, not 500s', async () => {
    const h = { authorization: basicAuth(current.get('hamlet')!) };
    for (const [method, url] of [
      ['GET', '/api/v1/users/%00'],
      ['GET', '/api/v1/users/me%00'],
      ['DELETE', '/api/v1/navigation_views/13%00'],
      ['DELETE', '/api/v1/realm/emoji/1%20%00'],
      ['GET', '/api/v1/users/%FF%00'],
      ['GET', '/api/v1/messages/' + '9'.repeat(600)],
    ] as const) {
      const res = await t.app.http.inject({ method, url, headers: h });
      expect({ url, status: res.statusCode, body: JSON.parse(res.body) }).toEqual({ url, status: 404, body: { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' } });
    }
  });

  it('API keys are compared in constant time', () => {
    const authSource = fs.readFileSync(path.join(import.meta.dirname, '../../src/http/auth.ts'), 'utf8');
    const credSource = fs.readFileSync(path.join(import.meta.dirname, '../../src/domain/rules/credentials.ts'), 'utf8');
    expect(credSource).toMatch(/timingSafeEqual\(/);
    expect(authSource).toMatch(/apiKeysEqual\(row\.api_key, key\)/);
    // No other comparison of a key with === or !== in the authentication path.
    expect(authSource).not.toMatch(/api_key\s*[!=]==|[!=]==\s*[a-z.]*api_key/);
  });
});

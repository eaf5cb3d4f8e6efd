import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { everyone, expectNoChange, plain } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('realm domains', () => {
  it('owners add, change and remove; everyone may read; events to every active user', async () => {
    let body: any;
    const add = plain(await t.captureEvents(async () => {
      body = expectSuccess(await t.post('/realm/domains', { domain: ' Acme.COM ', allow_subdomains: false }, 'owner'));
    }));
    expect(body.new_domain).toEqual([expect.any(Number), 'acme.com']);
    expect(add).toEqual([{ event: { type: 'realm_domains', op: 'add', realm_domain: { domain: 'acme.com', allow_subdomains: false } }, userIds: everyone(t) }]);
    expect(expectSuccess(await t.get('/realm/domains', {}, 'polonius')).domains).toEqual([{ domain: 'acme.com', allow_subdomains: false }]);
    const change = plain(await t.captureEvents(async () => expectSuccess(await t.patch('/realm/domains/acme.com', { allow_subdomains: true }, 'owner'))));
    expect(change).toEqual([{ event: { type: 'realm_domains', op: 'change', realm_domain: { domain: 'acme.com', allow_subdomains: true } }, userIds: everyone(t) }]);
    const rm = plain(await t.captureEvents(async () => expectSuccess(await t.delete('/realm/domains/acme.com', {}, 'owner'))));
    expect(rm).toEqual([{ event: { type: 'realm_domains', op: 'remove', domain: 'acme.com' }, userIds: everyone(t) }]);
  });

  it('permission matrix: owners only for changes', async () => {
    expectSuccess(await t.post('/realm/domains', { domain: 'matrix.org', allow_subdomains: false }, 'owner'));
    for (const who of ['iago', 'shiva', 'hamlet', 'polonius', 'bot'] as const) {
      await expectNoChange(t, async () => {
        expectError(await t.post('/realm/domains', { domain: 'other.org', allow_subdomains: false }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
        expectError(await t.patch('/realm/domains/matrix.org', { allow_subdomains: true }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
        expectError(await t.delete('/realm/domains/matrix.org', {}, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
      });
      expectSuccess(await t.get('/realm/domains', {}, who));
    }
  });

  it('domain validation and unknown domains', async () => {
    const bad: [string, string][] = [
      ['', "Domain can't be empty."],
      ['test', 'Domain must have at least one dot (.)'],
      ['t.', 'Domain cannot start or end with a dot (.)'],
      ['.com', 'Domain cannot start or end with a dot (.)'],
      ['-test.com', "Subdomains cannot start or end with a '-'."],
      ['test...com', "Consecutive '.' are not allowed."],
      ['test_domain.com', "Domain can only have letters, numbers, '.' and '-'s."],
      ['test.-domain.com', "Subdomains cannot start or end with a '-'."],
      [`${'a'.repeat(252)}.com`, 'Domain is too long'],
    ];
    for (const [domain, msg] of bad) {
      await expectNoChange(t, async () => expectError(await t.post('/realm/domains', { domain, allow_subdomains: false }, 'owner'), 400, 'BAD_REQUEST', `Invalid domain: ${msg}`));
    }
    expectSuccess(await t.post('/realm/domains', { domain: 'x-x.y.3.z', allow_subdomains: false }, 'owner'));
    await expectNoChange(t, async () => {
      expectError(await t.post('/realm/domains', { domain: 'matrix.org', allow_subdomains: true }, 'owner'), 400, 'BAD_REQUEST', 'The domain matrix.org is already a part of your organization.');
      expectError(await t.patch('/realm/domains/nope.org', { allow_subdomains: true }, 'owner'), 400, 'BAD_REQUEST', 'No entry found for domain nope.org.');
      expectError(await t.delete('/realm/domains/nope.org', {}, 'owner'), 400, 'BAD_REQUEST', 'No entry found for domain nope.org.');
      expectError(await t.post('/realm/domains', { domain: 'a.org' }, 'owner'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'allow_subdomains' argument", { var_name: 'allow_subdomains' });
    });
  });

  it('POST /users honours emails_restricted_to_domains; removing the last domain lifts the restriction', async () => {
    const u = await t.createUser({ email: 'creator@zulip.com', fullName: 'Creator' });
    // Give the owner-created user can_create_users through the owner account instead: the owner has it.
    void u;
    expectSuccess(await t.patch('/realm', { emails_restricted_to_domains: true }, 'owner'));
    expectError(
      await t.post('/users', { email: 'someone@elsewhere.net', password: 'Str0ng-passw0rd!xyz', full_name: 'Someone' }, 'owner'),
      400,
      'BAD_REQUEST',
      "Email 'someone@elsewhere.net' not allowed in this organization",
    );
    expectSuccess(await t.post('/realm/domains', { domain: 'allowed.net', allow_subdomains: true }, 'owner'));
    expectSuccess(await t.post('/users', { email: 'a@sub.allowed.net', password: 'Str0ng-passw0rd!xyz', full_name: 'Sub User' }, 'owner'));
    expectSuccess(await t.delete('/realm/domains/allowed.net', {}, 'owner'));
    expectSuccess(await t.delete('/realm/domains/matrix.org', {}, 'owner'));
    const last = plain(await t.captureEvents(async () => expectSuccess(await t.delete('/realm/domains/x-x.y.3.z', {}, 'owner'))));
    expect(last.map((d) => d.event)).toEqual([
      { type: 'realm_domains', op: 'remove', domain: 'x-x.y.3.z' },
      { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: false },
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { mkChannel, realmSetting } from '../support/channels.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { linkIn, PageClient } from '../support/pages.js';
import { basicAuth } from '../support/server.js';

let t: TestServer;
let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestServer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpStartTls: 'never', smtpTimeoutMs: 5000 });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

/** The new user's API key, from the database (the pages do not show it), to look at the account through the API. */
async function apiUser(email: string) {
  const row = await t.app.ctx.db.selectFrom('users').selectAll().where('realm_id', '=', t.realmId).where('email_lower', '=', email).executeTakeFirstOrThrow();
  return { id: row.id, email: row.delivery_email, apiKey: row.api_key, password: '', role: row.role, name: row.full_name };
}

async function lastMailTo(address: string, count: number) {
  const mails = await smtp.waitFor(count);
  const m = [...mails].reverse().find((x) => x.envelopeTo.includes(address));
  if (!m) throw new Error(`no mail to ${address}`);
  return m;
}

describe('sign-up through an emailed invitation (acceptance)', () => {
  it('the invitation mail\'s link is followed, the invitee signs up, lands in the default and invited channels, and gets the welcome message', async () => {
    const general = await mkChannel(t, 'general', { subscribers: [t.users.iago.id] }, 'owner');
    const design = await mkChannel(t, 'design', { subscribers: [t.users.hamlet.id] }, 'hamlet');
    await mkChannel(t, 'elsewhere', { subscribers: [] }, 'owner');
    expectSuccess(await t.post('/default_streams', { stream_id: general }, 'iago'));
    await realmSetting(t, 'signup_announcements_stream_id', general);
    const before = smtp.mails.length;
    expectSuccess(await t.post('/invites', { invitee_emails: 'newcomer@example.com', stream_ids: [design], include_realm_default_subscriptions: true }, 'hamlet'));
    const mail = await lastMailTo('newcomer@example.com', before + 1);
    const joinPath = linkIn(mail.parsed.text!, '/join/');

    const browser = new PageClient(t);
    const form = await browser.get(joinPath);
    expect(form.status).toBe(200);
    expect(form.headers['content-security-policy']).toContain("default-src 'none'");
    expect(form.body).toContain('You are signing up as <strong>newcomer@example.com</strong>');
    expect(form.body).not.toContain('<script');

    // Without the CSRF token nothing happens.
    const forged = await browser.post('/accounts/register/', { key_kind: 'invite', key: PageClient.hidden(form.body, 'key'), full_name: 'New Comer', password: 'a good Pa55phrase' });
    expect(forged.status).toBe(403);
    // A weak password is refused on the form.
    const weak = await browser.submit(joinPath, '/accounts/register/', { full_name: 'New Comer', password: 'abc' }, ['key_kind', 'key']);
    expect([weak.status, weak.body.includes('The password is too weak.')]).toEqual([400, true]);

    let done: Awaited<ReturnType<PageClient['post']>> | undefined;
    const deliveries = await t.captureEvents(async () => {
      done = await browser.submit(joinPath, '/accounts/register/', { full_name: 'New Comer', password: 'a good Pa55phrase' }, ['key_kind', 'key']);
    });
    // The newcomer lands signed in to the web app: a redirect to / with the session's cookies.
    expect(done!.status).toBe(303);
    expect(done!.headers.location).toBe('/');
    const setCookies = ([] as string[]).concat((done!.headers['set-cookie'] as string | string[] | undefined) ?? []);
    const session = setCookies.find((c) => c.startsWith('sessionid='));
    expect(session).toMatch(/; HttpOnly/);
    const own = await t.app.http.inject({ method: 'GET', url: '/json/users/me', headers: { cookie: session!.split(';')[0]! } });
    expect(JSON.parse(own.body)).toMatchObject({ result: 'success', email: 'newcomer@example.com' });

    const me = await apiUser('newcomer@example.com');
    expect(me.role).toBe(400);
    // The password works for the API login.
    const login = await t.app.http.inject({ method: 'POST', url: '/api/v1/fetch_api_key', payload: 'username=newcomer%40example.com&password=a+good+Pa55phrase', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(JSON.parse(login.body)).toMatchObject({ result: 'success', api_key: me.apiKey, user_id: me.id });

    const subs = expectSuccess(await t.get('/users/me/subscriptions', {}, me)).subscriptions.map((s: any) => s.name).sort();
    expect(subs).toEqual(['design', 'general']);

    // Messages: the referrer is told, the signup announcement, and Welcome Bot's DM (starred).
    const notification = t.users.bot.id + 1;
    const welcome = t.users.bot.id + 2;
    const messages = deliveries.filter((d) => d.event.type === 'message').map((d) => d.event);
    expect(messages.map((e: any) => [e.message.sender_id, e.__raw_content])).toEqual([
      [notification, `@_**New Comer|${me.id}** accepted your invitation to join Parley!`],
      [notification, `@_**New Comer|${me.id}** joined this organization.`],
      [welcome, expect.stringMatching(/^Hello, and welcome to Parley!👋/)],
    ]);
    const dms = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }], apply_markdown: false }, me)).messages.filter((m: any) => m.sender_id === welcome);
    expect(dms.map((m: any) => [m.sender_email, m.flags.includes('starred'), m.flags.includes('read')])).toEqual([['welcome-bot@zulip.com', true, false]]);
    expect(dms[0].content).toContain('[getting started guide](https://zulip.com/help/getting-started-with-zulip)');
    expect(dms[0].content).not.toContain('moving your organization');

    // The invitation is used: the link is dead and it is gone from the list.
    expect((await browser.get(joinPath)).status).toBe(404);
    expect(expectSuccess(await t.get('/invites', {}, 'hamlet')).invites).toEqual([]);
    // A basic-auth API call works for the new account.
    const res = await t.app.http.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: basicAuth(me) } });
    expect(JSON.parse(res.body).email).toBe('newcomer@example.com');
  });

  it('a reusable link: the address is confirmed by mail, then the form; the role and channels of the link', async () => {
    const ops = await mkChannel(t, 'ops-room', { subscribers: [] }, 'owner');
    const link = expectSuccess(await t.post('/invites/multiuse', { invite_as: 600, stream_ids: [ops] }, 'iago')).invite_link as string;
    const path = new URL(link).pathname;
    const browser = new PageClient(t);
    const bad = await browser.submit(path, path, { email: 'cordelia@zulip.com' });
    expect([bad.status, bad.body.includes('Already has an account.')]).toEqual([400, true]);
    const before = smtp.mails.length;
    const sent = await browser.submit(path, path, { email: 'guest@example.com' });
    expect([sent.status, sent.body.includes('Check your email')]).toEqual([200, true]);
    const mail = await lastMailTo('guest@example.com', before + 1);
    const confirm = linkIn(mail.parsed.text!, '/accounts/do_confirm/');
    const done = await browser.submit(confirm, '/accounts/register/', { full_name: 'Guest Person', password: 'another Go0d one' }, ['key_kind', 'key']);
    expect([done.status, done.headers.location]).toEqual([303, '/']);
    const me = await apiUser('guest@example.com');
    expect(me.role).toBe(600);
    expect(expectSuccess(await t.get('/users/me/subscriptions', {}, me)).subscriptions.map((s: any) => s.name)).toEqual(['ops-room']);
    // The confirmation works once; the reusable link keeps working.
    expect((await browser.get(confirm)).status).toBe(404);
    expect((await browser.get(path)).status).toBe(200);
  });

  it('/register/ needs an open organization; then domain rules apply', async () => {
    const browser = new PageClient(t);
    expect((await browser.get('/register/')).status).toBe(403);
    await realmSetting(t, 'invite_required', false);
    const disposable = await browser.submit('/register/', '/register/', { email: 'x@mailinator.com' });
    expect([disposable.status, disposable.body.includes('Please use your real email address.')]).toEqual([400, true]);
    await realmSetting(t, 'emails_restricted_to_domains', true);
    const outside = await browser.submit('/register/', '/register/', { email: 'x@example.com' });
    expect([outside.status, outside.body.includes('Outside your domain.')]).toEqual([400, true]);
    expectSuccess(await t.post('/realm/domains', { domain: 'zulip.com', allow_subdomains: false }, 'owner'));
    const before = smtp.mails.length;
    const ok = await browser.submit('/register/', '/register/', { email: 'solo@zulip.com' });
    expect(ok.status).toBe(200);
    const mail = await lastMailTo('solo@zulip.com', before + 1);
    const done = await browser.submit(linkIn(mail.parsed.text!, '/accounts/do_confirm/'), '/accounts/register/', { full_name: 'Solo', password: 'solo Pa55word!' }, ['key_kind', 'key']);
    expect([done.status, done.headers.location]).toEqual([303, '/']);
    const me = await apiUser('solo@zulip.com');
    // No invitation: the default channels.
    expect(expectSuccess(await t.get('/users/me/subscriptions', {}, me)).subscriptions.map((s: any) => s.name)).toEqual(['general']);
    await realmSetting(t, 'emails_restricted_to_domains', false);
    await realmSetting(t, 'invite_required', true);
  });
});

describe('password reset', () => {
  it('the same answer whether or not the address has an account; the link sets a new password once', async () => {
    const browser = new PageClient(t);
    const before = smtp.mails.length;
    const unknown = await browser.submit('/accounts/password/reset/', '/accounts/password/reset/', { email: 'nobody@example.com' });
    const known = await browser.submit('/accounts/password/reset/', '/accounts/password/reset/', { email: 'othello@zulip.com' });
    expect([unknown.status, known.status]).toEqual([200, 200]);
    expect(unknown.body).toBe(known.body);
    const mail = await lastMailTo('othello@zulip.com', before + 1);
    expect(smtp.mails.slice(before).map((m) => m.envelopeTo)).toEqual([['othello@zulip.com']]);
    const link = linkIn(mail.parsed.text!, '/accounts/password/reset/');
    const weak = await browser.submit(link, link, { new_password: '123456' });
    expect([weak.status, weak.body.includes('The password is too weak.')]).toEqual([400, true]);
    const done = await browser.submit(link, link, { new_password: 'a n3w Password!' });
    expect(done.status).toBe(200);
    const login = await t.app.http.inject({ method: 'POST', url: '/api/v1/fetch_api_key', payload: 'username=othello%40zulip.com&password=a+n3w+Password!', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(JSON.parse(login.body).result).toBe('success');
    expect((await browser.get(link)).status).toBe(404);
  });

  it('is rate limited per address', async () => {
    const browser = new PageClient(t);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await browser.submit('/accounts/password/reset/', '/accounts/password/reset/', { email: 'limit@example.com' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe('server_settings', () => {
  it('reports the password rules', async () => {
    const body = expectSuccess(await t.get('/server_settings', {}, null));
    expect([body.password_min_length, body.password_min_guesses, body.password_max_length]).toEqual([6, 10000, 100]);
  });
});

describe('sign-up and the organization defaults for new users', () => {
  it('an invitee who signs up starts with realm_user_settings_defaults', async () => {
    expectSuccess(await t.patch('/realm/user_settings_defaults', { twenty_four_hour_time: true, web_home_view: 'all_messages', email_address_visibility: 2 }, 'iago'));
    const before = smtp.mails.length;
    expectSuccess(await t.post('/invites', { invitee_emails: 'defaulted@example.com', stream_ids: [], include_realm_default_subscriptions: false }, 'iago'));
    const joinPath = linkIn((await lastMailTo('defaulted@example.com', before + 1)).parsed.text!, '/join/');
    const browser = new PageClient(t);
    expect((await browser.get(joinPath)).status).toBe(200);
    expect((await browser.submit(joinPath, '/accounts/register/', { full_name: 'De Faulted', password: 'a good Pa55phrase' }, ['key_kind', 'key'])).status).toBe(303);
    const me = await apiUser('defaulted@example.com');
    const s = expectSuccess(await t.post('/register', { fetch_event_types: ['user_settings'] }, me)).user_settings;
    expect([s.twenty_four_hour_time, s.web_home_view, s.email_address_visibility, s.color_scheme]).toEqual([true, 'all_messages', 2, 1]);
    expectSuccess(await t.patch('/realm/user_settings_defaults', { twenty_four_hour_time: false, web_home_view: 'inbox', email_address_visibility: 1 }, 'iago'));
  });
});

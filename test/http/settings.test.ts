import { simpleParser } from 'mailparser';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userSettings } from '../../src/domain/rules/user-settings.js';
import { expectError, expectSuccess, FIXTURE_PASSWORD, startTestServer, type TestServer, type TestUser } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const settingsOf = async (id: number) => userSettings((await t.row(id)).settings);
const everyoneActive = async () =>
  (await t.app.ctx.db.selectFrom('users').select('id').where('realm_id', '=', t.realmId).where('is_active', '=', 1).orderBy('id').execute()).map((r) => r.id);

/** Deliveries with sorted recipient lists (recipient order carries no meaning). */
const sortedRecipients = <T extends { userIds: readonly number[] }>(ds: T[]): T[] => ds.map((d) => ({ ...d, userIds: [...d.userIds].sort((a, b) => a - b) }));

/** Asserts a refused request: exact error, nothing stored, no event. */
async function expectRefused(fn: () => Promise<{ status: number; body: unknown }>, status: number, code: string, msg: string, who: TestUser): Promise<void> {
  const before = await t.row(who.id);
  let res!: { status: number; body: unknown };
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res as never, status, code, msg);
  expect(deliveries).toEqual([]);
  expect(await t.row(who.id)).toEqual(before);
}

describe('PATCH /settings: values and events', () => {
  it('a legacy display setting: user_settings and update_display_settings events, to the user only', async () => {
    const deliveries = await t.captureEvents(async () => expect(expectSuccess(await t.patch('/settings', { twenty_four_hour_time: true }, 'hamlet'))).toEqual({ result: 'success', msg: '' }));
    expect(deliveries).toEqual([
      { realmId: t.realmId, userIds: [t.users.hamlet.id], event: { type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true } },
      {
        realmId: t.realmId,
        userIds: [t.users.hamlet.id],
        event: { type: 'update_display_settings', user: 'hamlet@zulip.com', setting_name: 'twenty_four_hour_time', setting: true },
      },
    ]);
    expect((await settingsOf(t.users.hamlet.id)).twenty_four_hour_time).toBe(true);
    // The same value again: nothing to do, no event.
    expect(await t.captureEvents(() => t.patch('/settings', { twenty_four_hour_time: true }, 'hamlet'))).toEqual([]);
  });

  it('a legacy notification setting: update_global_notifications; a modern one: only user_settings', async () => {
    const deliveries = await t.captureEvents(() => t.patch('/settings', { enable_sounds: false, receives_typing_notifications: false }, 'cordelia'));
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
      { type: 'update_global_notifications', user: 'cordelia@zulip.com', notification_name: 'enable_sounds', setting: false },
      { type: 'user_settings', op: 'update', property: 'receives_typing_notifications', value: false },
    ]);
    await t.patch('/settings', { receives_typing_notifications: true }, 'cordelia');
  });

  it('default_language carries language_name', async () => {
    const deliveries = await t.captureEvents(() => t.patch('/settings', { default_language: 'de' }, 'othello'));
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'user_settings', op: 'update', property: 'default_language', value: 'de', language_name: 'German' },
      { type: 'update_display_settings', user: 'othello@zulip.com', setting_name: 'default_language', setting: 'de', language_name: 'German' },
    ]);
  });

  it('timezone: the user\'s events and a realm_user update to every active user', async () => {
    const deliveries = await t.captureEvents(() => t.patch('/settings', { timezone: 'Asia/Kolkata' }, 'othello'));
    expect(sortedRecipients(deliveries)).toEqual([
      { realmId: t.realmId, userIds: [t.users.othello.id], event: { type: 'user_settings', op: 'update', property: 'timezone', value: 'Asia/Kolkata' } },
      {
        realmId: t.realmId,
        userIds: [t.users.othello.id],
        event: { type: 'update_display_settings', user: 'othello@zulip.com', setting_name: 'timezone', setting: 'Asia/Kolkata' },
      },
      {
        realmId: t.realmId,
        userIds: await everyoneActive(),
        event: { type: 'realm_user', op: 'update', person: { email: 'othello@zulip.com', user_id: t.users.othello.id, timezone: 'Asia/Kolkata' } },
      },
    ]);
    expect((await t.row(t.users.othello.id)).timezone).toBe('Asia/Kolkata');
    expectSuccess(await t.patch('/settings', { timezone: 'US/Eastern' }, 'othello'));
  });

  it('string and integer settings of every kind, and the deprecated aliases', async () => {
    expectSuccess(
      await t.patch(
        '/settings',
        {
          color_scheme: 3,
          emojiset: 'twitter',
          web_home_view: 'all_messages',
          web_animate_image_previews: 'never',
          web_channel_default_view: 3,
          web_font_size_px: 14,
          web_line_height_percent: 122,
          notification_sound: 'none',
          email_notifications_batching_period_seconds: 604800,
          resolved_topic_notice_auto_read_policy: 'never',
          hide_ai_features: true,
        },
        'iago',
      ),
    );
    const s = await settingsOf(t.users.iago.id);
    expect(s).toMatchObject({
      color_scheme: 3,
      emojiset: 'twitter',
      web_home_view: 'all_messages',
      web_animate_image_previews: 'never',
      web_channel_default_view: 3,
      web_font_size_px: 14,
      web_line_height_percent: 122,
      notification_sound: 'none',
      email_notifications_batching_period_seconds: 604800,
      resolved_topic_notice_auto_read_policy: 'never',
      hide_ai_features: true,
    });
    expectSuccess(await t.patch('/settings/display', { left_side_userlist: true }, 'iago'));
    expectSuccess(await t.patch('/settings/notifications', { enable_digest_emails: false }, 'iago'));
    expect(await settingsOf(t.users.iago.id)).toMatchObject({ left_side_userlist: true, enable_digest_emails: false });
  });

  it('presence_enabled: the settings events, then everyone gets the user\'s presence at once', async () => {
    const u = await t.createUser({ email: 'presence-off@zulip.com', fullName: 'Presence Off' });
    const off = await t.captureEvents(() => t.patch('/settings', { presence_enabled: false }, u));
    expect(off.filter((d) => d.event.type !== 'presence').map((d) => d.event)).toEqual([
      { type: 'user_settings', op: 'update', property: 'presence_enabled', value: false },
      { type: 'update_global_notifications', user: 'presence-off@zulip.com', notification_name: 'presence_enabled', setting: false },
    ]);
    const presence = off.filter((d) => d.event.type === 'presence');
    expect(presence.length).toBeGreaterThan(0);
    for (const d of presence) expect(d.event.user_id).toBe(u.id);
    expect(presence.flatMap((d) => d.userIds)).toContain(t.users.hamlet.id);
    const on = await t.captureEvents(() => t.patch('/settings', { presence_enabled: true }, u));
    expect(on.filter((d) => d.event.type === 'presence').length).toBeGreaterThan(0);
  });

  it('unknown and removed parameters are reported, not refused', async () => {
    const body = expectSuccess(await t.patch('/settings', { dense_mode: true, invalid_setting: 'value' }, 'hamlet'));
    expect(body.ignored_parameters_unsupported).toEqual(['dense_mode', 'invalid_setting']);
  });

  it('enable_drafts_synchronization=false deletes the stored drafts and sends no drafts event', async () => {
    expectSuccess(await t.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'draft one' }] }, 'shiva'));
    expect(expectSuccess(await t.get('/drafts', {}, 'shiva')).drafts).toHaveLength(1);
    const deliveries = await t.captureEvents(() => t.patch('/settings', { enable_drafts_synchronization: false }, 'shiva'));
    expect(deliveries.map((d) => d.event.type)).toEqual(['user_settings', 'update_display_settings']);
    expect(await t.app.ctx.db.selectFrom('drafts').select('id').where('user_id', '=', t.users.shiva.id).execute()).toEqual([]);
    expectSuccess(await t.patch('/settings', { enable_drafts_synchronization: true }, 'shiva'));
  });
});

describe('PATCH /settings: refused values change nothing and send nothing', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ color_scheme: 4 }, 'Invalid color_scheme: Value error, Not in the list of possible values'],
    [{ web_channel_default_view: 5 }, 'Invalid web_channel_default_view: Value error, Not in the list of possible values'],
    [{ emojiset: 'google-blob' }, 'Invalid emojiset: Value error, Not in the list of possible values'],
    [{ web_home_view: 'recent_topics' }, 'Invalid web_home_view: Value error, Not in the list of possible values'],
    [{ web_animate_image_previews: 'sometimes' }, 'Invalid web_animate_image_previews: Value error, Not in the list of possible values'],
    [{ resolved_topic_notice_auto_read_policy: 'sometimes' }, 'Invalid resolved_topic_notice_auto_read_policy'],
    [{ twenty_four_hour_time: 'True' }, 'twenty_four_hour_time is not valid JSON'],
    [{ twenty_four_hour_time: '1' }, 'twenty_four_hour_time is not a boolean'],
    [{ web_font_size_px: '"big"' }, 'web_font_size_px is not an integer'],
    [{ timezone: 'Mars/Olympus_Mons' }, 'Invalid timezone: Value error, Not a recognized time zone'],
    [{ timezone: 'america/new_york' }, 'Invalid timezone: Value error, Not a recognized time zone'],
    [{ default_language: 'xx', twenty_four_hour_time: false }, 'Invalid default_language'],
    [{ notification_sound: 'klaxon' }, "Invalid notification sound 'klaxon'"],
    [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
    [{ email_notifications_batching_period_seconds: 604801 }, 'Invalid email batching period: 604801 seconds'],
    // Parameters are checked in alphabetical order, as Zulip declares them.
    [{ twenty_four_hour_time: 'x', color_scheme: 9 }, 'Invalid color_scheme: Value error, Not in the list of possible values'],
    [{ full_name: 'x'.repeat(101) }, 'Name too long!'],
    [{ full_name: 'A' }, 'Name too short!'],
    [{ full_name: 'Bad*Name' }, 'Invalid characters in name!'],
    [{ enable_sounds: false, full_name: 'Fine Name', email: 'not-an-email' }, 'Invalid address.'],
    [{ email: 'iago@zulip.com' }, 'Already has an account.'],
    [{ new_password: 'Another-pa55word' }, 'Wrong password!'],
    [{ new_password: 'Another-pa55word', old_password: 'wrong' }, 'Wrong password!'],
    [{ new_password: 'abc', old_password: FIXTURE_PASSWORD }, 'New password is too weak!'],
  ];
  for (const [params, msg] of cases) {
    it(`${JSON.stringify(params)} -> ${msg}`, async () => {
      await expectRefused(() => t.patch('/settings', params, 'polonius'), 400, 'BAD_REQUEST', msg, t.users.polonius);
    });
  }

  it('bots may not call it', async () => {
    await expectRefused(() => t.patch('/settings', { twenty_four_hour_time: true }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.', t.users.bot);
  });

  it('without credentials', async () => {
    expectError(await t.patch('/settings', { twenty_four_hour_time: true }, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });
});

describe('PATCH /settings: full_name', () => {
  it('changes the name for everyone; names are stripped', async () => {
    const u = await t.createUser({ email: 'renamer@zulip.com', fullName: 'Renamer' });
    const deliveries = await t.captureEvents(() => t.patch('/settings', { full_name: '  Re Named  ' }, u));
    expect(sortedRecipients(deliveries)).toEqual([{ realmId: t.realmId, userIds: await everyoneActive(), event: { type: 'realm_user', op: 'update', person: { user_id: u.id, full_name: 'Re Named' } } }]);
    expect((await t.row(u.id)).full_name).toBe('Re Named');
  });

  it('with name changes disabled, a member\'s change is ignored (success, nothing changes); an admin\'s is not', async () => {
    await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ name_changes_disabled: true }) }).execute();
    try {
      const deliveries = await t.captureEvents(async () => expectSuccess(await t.patch('/settings', { full_name: 'Sneaky Name' }, 'cordelia')));
      expect(deliveries).toEqual([]);
      expect((await t.row(t.users.cordelia.id)).full_name).toBe("Cordelia, Lear's daughter");
      expectSuccess(await t.patch('/settings', { full_name: 'Iago Admin' }, 'iago'));
      expect((await t.row(t.users.iago.id)).full_name).toBe('Iago Admin');
      expectSuccess(await t.patch('/settings', { full_name: 'Iago' }, 'iago'));
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ settings: '{}' }).execute();
    }
  });

  it('require_unique_names compares names case-insensitively after NFKC', async () => {
    await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ require_unique_names: true }) }).execute();
    try {
      await expectRefused(() => t.patch('/settings', { full_name: 'iAgO' }, 'hamlet'), 400, 'BAD_REQUEST', 'Unique names required in this organization.', t.users.hamlet);
      await expectRefused(() => t.patch('/settings', { full_name: 'ｉａｇｏ' }, 'hamlet'), 400, 'BAD_REQUEST', 'Unique names required in this organization.', t.users.hamlet);
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ settings: '{}' }).execute();
    }
  });
});

describe('PATCH /settings: passwords', () => {
  it('changes the password when the old one is right and the new one strong', async () => {
    const u = await t.createUser({ email: 'pw-change@zulip.com', fullName: 'Pw Change' });
    const deliveries = await t.captureEvents(async () =>
      expectSuccess(await t.patch('/settings', { old_password: FIXTURE_PASSWORD, new_password: 'Brand-new-pa55phrase' }, u)),
    );
    expect(deliveries).toEqual([]);
    expectSuccess(await t.post('/fetch_api_key', { username: u.email, password: 'Brand-new-pa55phrase' }, null));
    expectError(await t.post('/fetch_api_key', { username: u.email, password: FIXTURE_PASSWORD }, null), 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');
  });

  it('too many wrong old passwords: "You\'re making too many attempts!"', async () => {
    const u = await t.createUser({ email: 'pw-limit@zulip.com', fullName: 'Pw Limit' });
    for (let i = 0; i < 5; i++) expectError(await t.patch('/settings', { old_password: 'nope', new_password: 'Brand-new-pa55phrase' }, u), 400, 'BAD_REQUEST', 'Wrong password!');
    const res = await t.patch('/settings', { old_password: FIXTURE_PASSWORD, new_password: 'Brand-new-pa55phrase' }, u);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_REQUEST');
    expect(res.body.msg).toMatch(/^You're making too many attempts! Try again in \d+ seconds\.$/);
  });
});

describe('PATCH /settings: target_users (bulk edit by an admin)', () => {
  it('applies to listed users and group members, never bots; events to each changed user', async () => {
    const membersGroup = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('name', '=', 'role:moderators').executeTakeFirstOrThrow()).id;
    const deliveries = await t.captureEvents(async () =>
      expect(
        expectSuccess(
          await t.patch('/settings', { target_users: { user_ids: [t.users.hamlet.id, t.users.bot.id], group_ids: [membersGroup], skip_if_already_edited: false }, display_emoji_reaction_users: false }, 'iago'),
        ),
      ).toEqual({ result: 'success', msg: '' }),
    );
    // role:moderators holds shiva directly and, through its subgroups, the administrators and owners.
    const changed = [t.users.owner.id, t.users.iago.id, t.users.shiva.id, t.users.hamlet.id].sort((a, b) => a - b);
    expect(deliveries.map((d) => d.userIds[0]).sort((a, b) => a - b)).toEqual(changed);
    for (const d of deliveries) expect(d.event).toEqual({ type: 'user_settings', op: 'update', property: 'display_emoji_reaction_users', value: false });
    for (const id of changed) expect((await settingsOf(id)).display_emoji_reaction_users).toBe(false);
    expect((await settingsOf(t.users.bot.id)).display_emoji_reaction_users).toBe(true);
  });

  it('skip_if_already_edited leaves users who chose the setting themselves', async () => {
    expectSuccess(await t.patch('/settings', { starred_message_counts: false }, 'othello'));
    expectSuccess(await t.patch('/settings', { target_users: { user_ids: [t.users.othello.id, t.users.cordelia.id], skip_if_already_edited: true }, starred_message_counts: true }, 'iago'));
    expect((await settingsOf(t.users.othello.id)).starred_message_counts).toBe(false);
    // An admin's change is not the user's own: a later bulk change with skip still applies.
    expectSuccess(await t.patch('/settings', { target_users: { user_ids: [t.users.cordelia.id], skip_if_already_edited: true }, fluid_layout_width: true }, 'iago'));
    expectSuccess(await t.patch('/settings', { target_users: { user_ids: [t.users.cordelia.id], skip_if_already_edited: true }, fluid_layout_width: false }, 'iago'));
    expect((await settingsOf(t.users.cordelia.id)).fluid_layout_width).toBe(false);
  });

  it('refusals', async () => {
    const bulk = (extra: Record<string, unknown>, target: unknown = { user_ids: [t.users.hamlet.id], skip_if_already_edited: false }) => () =>
      t.patch('/settings', { target_users: target, ...extra }, 'iago');
    await expectRefused(() => t.patch('/settings', { target_users: { user_ids: [t.users.cordelia.id], skip_if_already_edited: false }, enter_sends: true }, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator', t.users.cordelia);
    for (const extra of [{ email: 'x@zulip.com' }, { new_password: 'Secret-pa55' }, { timezone: 'UTC' }, { send_read_receipts: false }, { email_address_visibility: 3 }, { presence_enabled: false }]) {
      await expectRefused(bulk(extra), 400, 'BAD_REQUEST', 'Cannot change this setting for other users.', t.users.hamlet);
    }
    await expectRefused(bulk({ enter_sends: true }, { skip_if_already_edited: false }), 400, 'BAD_REQUEST', 'Either user_ids or group_ids must be provided.', t.users.hamlet);
    await expectRefused(bulk({ enter_sends: true }, { user_ids: [99999], skip_if_already_edited: false }), 400, 'BAD_REQUEST', 'Invalid user ID: 99999', t.users.hamlet);
    await expectRefused(bulk({ enter_sends: true }, { group_ids: [99999], skip_if_already_edited: false }), 400, 'BAD_REQUEST', 'Invalid user group ID: 99999', t.users.hamlet);
    await expectRefused(bulk({ enter_sends: true }, { user_ids: [t.users.hamlet.id] }), 400, 'BAD_REQUEST', 'target_users["skip_if_already_edited"] field is missing', t.users.hamlet);
    await expectRefused(bulk({ default_language: 'xx' }), 400, 'BAD_REQUEST', 'Invalid default_language', t.users.hamlet);
  });
});

/** A minimal SMTP server on loopback that records what it receives. */
async function fakeSmtp(): Promise<{ url: string; mails: { from: string; to: string[]; data: string; auth: string | null }[]; close: () => Promise<void> }> {
  const mails: { from: string; to: string[]; data: string; auth: string | null }[] = [];
  const server = net.createServer((sock) => {
    let buf = '';
    let inData = false;
    let cur = { from: '', to: [] as string[], data: '', auth: null as string | null };
    sock.write('220 fake ESMTP\r\n');
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          cur.data = buf.slice(0, end);
          buf = buf.slice(end + 5);
          inData = false;
          mails.push(cur);
          cur = { from: '', to: [], data: '', auth: cur.auth };
          sock.write('250 queued\r\n');
          continue;
        }
        const i = buf.indexOf('\r\n');
        if (i < 0) return;
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === 'EHLO') sock.write('250-fake\r\n250 AUTH PLAIN\r\n');
        else if (cmd === 'AUTH') {
          cur.auth = Buffer.from(line.split(' ')[2]!, 'base64').toString('utf8');
          sock.write('235 ok\r\n');
        } else if (cmd === 'MAIL') {
          cur.from = /<(.*)>/.exec(line)![1]!;
          sock.write('250 ok\r\n');
        } else if (cmd === 'RCPT') {
          cur.to.push(/<(.*)>/.exec(line)![1]!);
          sock.write('250 ok\r\n');
        } else if (cmd === 'DATA') {
          inData = true;
          sock.write('354 go\r\n');
        } else if (cmd === 'QUIT') {
          sock.end('221 bye\r\n');
        } else sock.write('500 what\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `smtp://mailer:s%40cret@127.0.0.1:${port}`, mails, close: () => new Promise((r) => server.close(() => r())) };
}

describe('PATCH /settings: email changes, confirmed by a mailed link', () => {
  it('mails a link over SMTP; the address changes only when the link is confirmed', async () => {
    const smtp = await fakeSmtp();
    const s = await startTestServer({ smtpUrl: smtp.url, smtpFrom: 'noreply@zulip.testserver' });
    try {
      const u = await s.createUser({ email: 'old-address@zulip.com', fullName: 'Address Changer' });
      const deliveries = await s.captureEvents(async () => expect(expectSuccess(await s.patch('/settings', { email: ' new-address@zulip.com ' }, u))).toEqual({ result: 'success', msg: '' }));
      expect(deliveries).toEqual([]);
      expect((await s.row(u.id)).delivery_email).toBe('old-address@zulip.com');
      expect(smtp.mails).toHaveLength(1);
      const mail = smtp.mails[0]!;
      expect(mail.from).toBe('noreply@zulip.testserver');
      expect(mail.to).toEqual(['new-address@zulip.com']);
      expect(mail.auth).toBe('\0mailer\0s@cret');
      expect(mail.data).toContain('Subject: Verify your new email address');
      // The body is MIME (quoted-printable): read it as a mail client does.
      const key = /\/accounts\/confirm_new_email\/([A-Za-z0-9_-]+)/.exec((await simpleParser(mail.data)).text!)![1]!;

      const page = await s.app.http.inject({ method: 'GET', url: `/accounts/confirm_new_email/${key}` });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('<form method="post" action="/accounts/confirm_new_email">');
      expect((await s.row(u.id)).delivery_email).toBe('old-address@zulip.com');

      const post = (k: string) =>
        s.app.http.inject({ method: 'POST', url: '/accounts/confirm_new_email', payload: `key=${k}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      const confirmed = await post(key);
      expect(confirmed.statusCode).toBe(200);
      expect(confirmed.body).toContain('new-address@zulip.com');
      expect((await s.row(u.id)).delivery_email).toBe('new-address@zulip.com');
      // The old address is told about the change.
      expect(smtp.mails[1]!.to).toEqual(['old-address@zulip.com']);
      // Links are single-use; unknown keys get the same page.
      expect((await post(key)).statusCode).toBe(404);
      expect((await post('nonsense')).statusCode).toBe(404);
      expect((await s.app.http.inject({ method: 'GET', url: '/accounts/confirm_new_email/nonsense' })).statusCode).toBe(404);
      // The API key works with the new address.
      expectSuccess(await s.get('/users/me', {}, { ...u, email: 'new-address@zulip.com' }));
    } finally {
      await s.close();
      await smtp.close();
    }
  });

  it('a newer request revokes the older link; at most 2 changes an hour (429)', async () => {
    const smtp = await fakeSmtp();
    const s = await startTestServer({ smtpUrl: smtp.url });
    try {
      const u = await s.createUser({ email: 'twice@zulip.com', fullName: 'Twice' });
      expectSuccess(await s.patch('/settings', { email: 'first@zulip.com' }, u));
      expectSuccess(await s.patch('/settings', { email: 'second@zulip.com' }, u));
      const keyOf = async (i: number) => /\/accounts\/confirm_new_email\/([A-Za-z0-9_-]+)/.exec((await simpleParser(smtp.mails[i]!.data)).text!)![1]!;
      const post = (k: string) =>
        s.app.http.inject({ method: 'POST', url: '/accounts/confirm_new_email', payload: `key=${k}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect((await post(await keyOf(0))).statusCode).toBe(404);
      const res = await s.patch('/settings', { email: 'third@zulip.com' }, u);
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('RATE_LIMIT_HIT');
      expect(res.body.msg).toBe('API usage exceeded rate limit');
      expect((await post(await keyOf(1))).statusCode).toBe(200);
      expect((await s.row(u.id)).delivery_email).toBe('second@zulip.com');
    } finally {
      await s.close();
      await smtp.close();
    }
  });

  it('email changes disabled: members refused, admins allowed', async () => {
    await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ email_changes_disabled: true }) }).execute();
    try {
      await expectRefused(() => t.patch('/settings', { email: 'elsewhere@zulip.com' }, 'cordelia'), 400, 'BAD_REQUEST', 'Email address changes are disabled in this organization.', t.users.cordelia);
      expectSuccess(await t.patch('/settings', { email: 'iago-new@zulip.com' }, 'iago'));
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ settings: '{}' }).execute();
    }
  });
});

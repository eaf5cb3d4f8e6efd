import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectStateConsistent } from '../support/events.js';
import { plain } from '../support/channels.js';
import { USER_SETTING_DEFAULTS } from '../../src/domain/rules/user-settings.js';

/** PATCH /realm/user_settings_defaults and realm_user_settings_defaults in /register (Zulip's RealmUserDefault). */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const STATE = { event_types: ['realm_user_settings_defaults'], fetch_event_types: ['realm_user_settings_defaults'] };
const defaults = async () => expectSuccess(await t.post('/register', STATE, 'hamlet')).realm_user_settings_defaults;
const stored = async () => (await t.app.ctx.db.selectFrom('realms').select('user_settings_defaults').where('id', '=', t.realmId).executeTakeFirstOrThrow()).user_settings_defaults;
const everyoneActive = async () => (await t.app.ctx.db.selectFrom('users').select('id').where('realm_id', '=', t.realmId).where('is_active', '=', 1).execute()).map((r) => r.id).sort((a, b) => a - b);

async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string): Promise<void> {
  const before = await stored();
  let res: Res | undefined;
  const events = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res!, status, code, msg);
  expect(events).toEqual([]);
  expect(await stored()).toBe(before);
}

describe('realm_user_settings_defaults', () => {
  it('/register: every user setting but default_language, with emojiset_choices and available_notification_sounds', async () => {
    const d = await defaults();
    const expected: Record<string, unknown> = { ...USER_SETTING_DEFAULTS };
    delete expected.default_language;
    expect(d).toEqual({
      ...expected,
      emojiset_choices: [
        { key: 'google', text: 'Google' },
        { key: 'twitter', text: 'Twitter' },
        { key: 'text', text: 'Plain text' },
      ],
      available_notification_sounds: ['chime', 'ding', 'droplet', 'highway', 'plink', 'same', 'zulip'],
    });
    expect(d.default_language).toBeUndefined();
    expect(d.timezone).toBeUndefined();
    // Not sent unless asked for.
    expect(expectSuccess(await t.post('/register', { fetch_event_types: ['realm'] }, 'hamlet')).realm_user_settings_defaults).toBeUndefined();
  });

  it('PATCH: administrators change settings; one event per changed value to every active user; stale state + events == fresh', async () => {
    let res: Res | undefined;
    const deliveries = plain(
      await t.captureEvents(async () => {
        res = await t.patch('/realm/user_settings_defaults', { twenty_four_hour_time: true, color_scheme: 2, emojiset: 'google', notification_sound: 'ding' }, 'iago');
      }),
    );
    expect(expectSuccess(res!)).toEqual({ result: 'success', msg: '' });
    const all = await everyoneActive();
    // In the settings' model order; emojiset is unchanged (google): no event for it.
    expect(deliveries).toEqual([
      { event: { type: 'realm_user_settings_defaults', op: 'update', property: 'twenty_four_hour_time', value: true }, userIds: all },
      { event: { type: 'realm_user_settings_defaults', op: 'update', property: 'color_scheme', value: 2 }, userIds: all },
      { event: { type: 'realm_user_settings_defaults', op: 'update', property: 'notification_sound', value: 'ding' }, userIds: all },
    ]);
    const d = await defaults();
    expect([d.twenty_four_hour_time, d.color_scheme, d.emojiset, d.notification_sound]).toEqual([true, 2, 'google', 'ding']);
    // Only the differences from the built-in defaults are stored.
    expect(JSON.parse(await stored())).toEqual({ color_scheme: 2, notification_sound: 'ding', twenty_four_hour_time: true });
    const events = await expectStateConsistent(t, 'cordelia', () => t.patch('/realm/user_settings_defaults', { web_home_view: 'recent', enter_sends: true, email_address_visibility: 3 }, 'owner'), STATE);
    expect(events.map((e: any) => [e.property, e.value])).toEqual([
      ['enter_sends', true],
      ['web_home_view', 'recent'],
      ['email_address_visibility', 3],
    ]);
    // Back to a built-in default: nothing stored for it.
    await expectStateConsistent(t, 'cordelia', () => t.patch('/realm/user_settings_defaults', { enter_sends: false, color_scheme: 1 }, 'iago'), STATE);
    expect(JSON.parse(await stored())).toEqual({ notification_sound: 'ding', twenty_four_hour_time: true, web_home_view: 'recent', email_address_visibility: 3 });
  });

  it('refusals: non-administrators, and the values PATCH /settings refuses', async () => {
    for (const who of ['shiva', 'hamlet', 'polonius', 'bot'] as const) {
      await refused(() => t.patch('/realm/user_settings_defaults', { enter_sends: true }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    }
    const cases: [Record<string, unknown>, string][] = [
      [{ color_scheme: 4 }, 'Invalid color_scheme: Value error, Not in the list of possible values'],
      [{ emojiset: 'google-blob' }, 'Invalid emojiset: Value error, Not in the list of possible values'],
      [{ web_home_view: 'recent_topics' }, 'Invalid web_home_view: Value error, Not in the list of possible values'],
      [{ twenty_four_hour_time: '1' }, 'twenty_four_hour_time is not a boolean'],
      [{ web_font_size_px: '"big"' }, 'web_font_size_px is not an integer'],
      [{ notification_sound: 'klaxon' }, "Invalid notification sound 'klaxon'"],
      [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
      [{ email_address_visibility: 6 }, 'Invalid email_address_visibility: Value error, Not in the list of possible values'],
      // Nothing is written when a later parameter is bad.
      [{ enter_sends: true, color_scheme: 9 }, 'Invalid color_scheme: Value error, Not in the list of possible values'],
    ];
    for (const [params, msg] of cases) await refused(() => t.patch('/realm/user_settings_defaults', params, 'iago'), 400, 'BAD_REQUEST', msg);
    // default_language is the realm's own setting: not a parameter here.
    const body = expectSuccess(await t.patch('/realm/user_settings_defaults', { default_language: 'de' }, 'iago'));
    expect(body.ignored_parameters_unsupported).toEqual(['default_language']);
  });

  it('new users start with the defaults (POST /users); bots with the built-in ones', async () => {
    // State from the previous test: 24-hour time, ding, recent, email visibility 3 (moderators).
    expectSuccess(await t.post('/users', { email: 'fresh@zulip.com', password: 'Fresh-pa55word!x', full_name: 'Fresh Person' }, 'owner'));
    const fresh = (await t.app.ctx.db.selectFrom('users').select('id').where('email_lower', '=', 'fresh@zulip.com').executeTakeFirstOrThrow()).id;
    const s = expectSuccess(await t.post('/register', { fetch_event_types: ['user_settings'] }, { id: fresh, email: 'fresh@zulip.com', apiKey: (await t.row(fresh)).api_key, password: '', role: 400, name: 'fresh' } as any)).user_settings;
    expect([s.twenty_four_hour_time, s.notification_sound, s.web_home_view, s.email_address_visibility, s.enter_sends]).toEqual([true, 'ding', 'recent', 3, false]);
    // The user's own settings are independent of later changes to the defaults.
    expectSuccess(await t.patch('/realm/user_settings_defaults', { twenty_four_hour_time: false }, 'iago'));
    expect(JSON.parse((await t.row(fresh)).settings).twenty_four_hour_time).toBe(true);
    const bot = expectSuccess(await t.post('/bots', { full_name: 'Default Bot', short_name: 'defaultbot' }, 'hamlet'));
    expect((await t.row(bot.user_id)).settings).toBe('{}');
  });
});

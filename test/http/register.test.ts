import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doAddAlertWords } from '../../src/domain/actions/alert-words.js';
import { EMOJISET_CHOICES, NOTIFICATION_SOUNDS, USER_SETTING_DEFAULTS } from '../../src/domain/rules/user-settings.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../../src/domain/version.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { getEvents, registerQueue } from '../support/events.js';
import { NO_CAPABILITIES } from '../../src/state/register.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const MODERN = { notification_settings_null: true, user_settings_object: true };
const gravatar = /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/;

describe('POST /register: the response', () => {
  it('always: queue_id, last_event_id and the version triple', async () => {
    const body = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    expect(Object.keys(body).sort()).toEqual(['alert_words', 'last_event_id', 'msg', 'queue_id', 'result', 'zulip_feature_level', 'zulip_merge_base', 'zulip_version']);
    expect(body).toMatchObject({
      result: 'success',
      msg: '',
      queue_id: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
      last_event_id: -1,
      zulip_version: ZULIP_VERSION,
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_merge_base: ZULIP_MERGE_BASE,
      alert_words: [],
    });
  });

  it('realm: limits, protocol constants and settings', async () => {
    const body = await registerQueue(t, 'hamlet', { fetch_event_types: ['realm'] });
    expect(body).toMatchObject({
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_topic_length: 60,
      max_message_length: 10000,
      max_channel_folder_name_length: 60,
      max_channel_folder_description_length: 1024,
      max_bulk_new_subscription_messages: 100,
      max_avatar_file_size_mib: 5,
      max_icon_file_size_mib: 5,
      server_typing_started_expiry_period_milliseconds: 45000,
      server_typing_stopped_wait_period_milliseconds: 12000,
      server_typing_started_wait_period_milliseconds: 30000,
      server_presence_ping_interval_seconds: 60,
      server_presence_offline_threshold_seconds: 200,
      event_queue_longpoll_timeout_seconds: 90,
      realm_empty_topic_display_name: 'general chat',
      realm_name: 'Parley',
      realm_url: 'http://zulip.testserver',
      realm_uri: 'http://zulip.testserver',
      realm_allow_message_editing: true,
      realm_message_content_edit_limit_seconds: 600,
      realm_message_retention_days: -1,
      realm_name_changes_disabled: false,
      realm_password_auth_enabled: true,
      realm_new_stream_announcements_stream_id: -1,
      password_min_length: 6,
    });
    // Group-valued permission settings are presented as group ids (system groups by default).
    const everyone = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('name', '=', 'role:everyone').executeTakeFirstOrThrow()).id;
    expect(body.realm_can_access_all_users_group).toBe(everyone);
    expect(body).not.toHaveProperty('realm_users');
    expect(body).not.toHaveProperty('user_settings');
  });

  it('realm_user: realm_users, realm_non_active_users, cross_realm_bots and the caller\'s own keys', async () => {
    const gone = await t.createUser({ email: 'gone-reg@zulip.com', fullName: 'Gone Reg' });
    expectSuccess(await t.delete(`/users/${gone.id}`, {}, 'iago'));
    const body = await registerQueue(t, 'hamlet', { fetch_event_types: ['realm_user'] });
    const ids = body.realm_users.map((u: { user_id: number }) => u.user_id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toContain(t.users.bot.id);
    expect(ids).not.toContain(gone.id);
    expect(body.realm_non_active_users.map((u: { user_id: number }) => u.user_id)).toEqual([gone.id]);
    const othello = body.realm_users.find((u: { user_id: number }) => u.user_id === t.users.othello.id);
    expect(othello).toEqual({
      email: 'othello@zulip.com',
      user_id: t.users.othello.id,
      avatar_version: 1,
      is_admin: false,
      is_owner: false,
      is_guest: false,
      role: 400,
      is_bot: false,
      full_name: 'Othello, the Moor of Venice',
      timezone: '',
      date_joined: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d\+00:00$/),
      is_imported_stub: false,
      delivery_email: 'othello@zulip.com',
      // client_gravatar defaults to true for /register.
      avatar_url: null,
      profile_data: {},
    });
    const bot = body.realm_users.find((u: { user_id: number }) => u.user_id === t.users.bot.id);
    expect(bot).toMatchObject({ is_bot: true, bot_type: 1, bot_owner_id: t.users.hamlet.id });
    expect(bot).not.toHaveProperty('profile_data');
    // Zulip's get_cross_realm_dicts: the system bots, sorted by name, with is_system_bot and no owner.
    const systemBot = (full_name: string, email: string, user_id: number) => ({
      email,
      user_id,
      avatar_version: 1,
      is_admin: false,
      is_owner: false,
      is_guest: false,
      role: 400,
      is_bot: true,
      full_name,
      timezone: '',
      is_active: true,
      date_joined: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d/),
      is_imported_stub: false,
      delivery_email: email,
      avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\//),
      bot_type: 1,
      bot_owner_id: null,
      is_system_bot: true,
    });
    expect(body.cross_realm_bots).toEqual([
      systemBot('Notification Bot', 'notification-bot@zulip.com', t.users.bot.id + 1),
      systemBot('Welcome Bot', 'welcome-bot@zulip.com', t.users.bot.id + 2),
    ]);
    // They are not members of the organization.
    expect(body.realm_users.some((u: { is_system_bot?: boolean; email: string }) => u.email.endsWith('-bot@zulip.com'))).toBe(false);
    expect(body).toMatchObject({
      user_id: t.users.hamlet.id,
      email: 'hamlet@zulip.com',
      delivery_email: 'hamlet@zulip.com',
      full_name: 'King Hamlet',
      is_admin: false,
      is_owner: false,
      is_moderator: false,
      is_guest: false,
      avatar_source: 'G',
      // The caller's own avatar is always a full URL.
      avatar_url: expect.stringMatching(gravatar),
      avatar_url_medium: expect.stringMatching(/&s=500/),
    });
    const withUrls = await registerQueue(t, 'hamlet', { fetch_event_types: ['realm_user'], client_gravatar: false });
    expect(withUrls.realm_users.find((u: { user_id: number }) => u.user_id === t.users.othello.id).avatar_url).toMatch(gravatar);
    const shiva = await registerQueue(t, 'shiva', { fetch_event_types: ['realm_user'] });
    expect(shiva).toMatchObject({ is_moderator: true, is_admin: false });
  });

  it('user_settings: every setting with its default, plus choices, time zone and sounds', async () => {
    const body = await registerQueue(t, 'polonius', { fetch_event_types: ['user_settings'], client_capabilities: MODERN });
    expect(body.user_settings).toEqual({
      ...USER_SETTING_DEFAULTS,
      emojiset_choices: EMOJISET_CHOICES,
      timezone: '',
      available_notification_sounds: [...NOTIFICATION_SOUNDS],
    });
    expect(body.user_settings).toMatchObject({ twenty_four_hour_time: false, web_home_view: 'inbox', color_scheme: 1, emojiset: 'google', default_language: 'en', receives_typing_notifications: true });
    expect(body).not.toHaveProperty('twenty_four_hour_time');
  });

  it('legacy top-level settings keys for clients without user_settings_object', async () => {
    const legacy = await registerQueue(t, 'polonius');
    expect(legacy).toMatchObject({
      twenty_four_hour_time: false,
      enable_sounds: true,
      emojiset: 'google',
      timezone: '',
      emojiset_choices: EMOJISET_CHOICES,
      available_notification_sounds: [...NOTIFICATION_SOUNDS],
    });
    expect(legacy.user_settings).toMatchObject({ twenty_four_hour_time: false });
    const modern = await registerQueue(t, 'polonius', { client_capabilities: MODERN });
    expect(modern).not.toHaveProperty('twenty_four_hour_time');
    expect(modern).not.toHaveProperty('enable_sounds');
    // zulip-terminal names user_settings but not the legacy types: the object only.
    const terminal = await registerQueue(t, 'polonius', { event_types: ['user_settings', 'realm_user'], fetch_event_types: ['realm', 'realm_user', 'user_settings', 'zulip_version'] });
    expect(terminal.user_settings).toMatchObject({ send_private_typing_notifications: true, twenty_four_hour_time: false, pm_content_in_desktop_notifications: true });
    expect(terminal).not.toHaveProperty('twenty_four_hour_time');
    expect(terminal).toHaveProperty('realm_users');
    expect(terminal).toHaveProperty('realm_name');
  });

  it('fetch_event_types decides the state, event_types the queue', async () => {
    const body = await registerQueue(t, 'hamlet', { event_types: ['alert_words'], fetch_event_types: ['realm_user'] });
    expect(body).toHaveProperty('realm_users');
    expect(body).not.toHaveProperty('alert_words');
    expectSuccess(await t.patch('/settings', { full_name: 'King Hamlet' }, 'cordelia'));
    await t.post('/users/me/alert_words', { alert_words: ['queue only'] }, 'hamlet');
    expect((await getEvents(t, 'hamlet', body.queue_id, -1)).map((e) => e.type)).toEqual(['alert_words']);
  });

  it('parameters: unknown ones are reported; zulip-js sends event_types=null', async () => {
    const body = await registerQueue(t, 'hamlet', { event_types: 'null', presence_history_limit_days: 3, bogus: 1 });
    expect(body.ignored_parameters_unsupported).toEqual(['bogus']);
    expect(body).toHaveProperty('realm_users');
  });
});

describe('POST /register: client_capabilities', () => {
  // Zulip's ClientCapabilities TypedDict (zerver/lib/events.py): notification_settings_null is
  // required (kept so since Zulip 2.1 for compatibility), every other key is optional and
  // defaults to false, and keys it does not know are ignored.
  it('a partial object is accepted; missing keys are false', async () => {
    const body = await registerQueue(t, 'hamlet', { fetch_event_types: ['user_settings', 'update_display_settings'], client_capabilities: { notification_settings_null: false, user_settings_object: true } });
    expect(body).toHaveProperty('user_settings');
    expect(body).not.toHaveProperty('twenty_four_hour_time');
    const queue = (await t.app.ctx.queues.store.get(body.queue_id))!;
    expect(queue.capabilities).toEqual({ ...NO_CAPABILITIES, user_settings_object: true });
  });

  it('unknown keys are ignored (not an error, not reported as ignored parameters)', async () => {
    const res = await t.post('/register', { event_types: ['alert_words'], client_capabilities: { notification_settings_null: true, some_future_capability: true, another: 'x' } }, 'hamlet');
    const body = expectSuccess(res);
    expect(body).not.toHaveProperty('ignored_parameters_unsupported');
    expect((await t.app.ctx.queues.store.get(body.queue_id))!.capabilities).toEqual({ ...NO_CAPABILITIES, notification_settings_null: true });
  });

  it('a value that is not an object is refused', async () => {
    for (const v of ['[1]', 'true', '"caps"', '3']) {
      expectError(await t.post('/register', { client_capabilities: v }, 'hamlet'), 400, 'BAD_REQUEST', 'client_capabilities is not a dict');
    }
  });
});

describe('POST /register: refusals create no queue', () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['hamlet', { event_types: 'message' }, 'BAD_REQUEST', 'event_types is not valid JSON'],
    ['hamlet', { event_types: '"message"' }, 'BAD_REQUEST', 'event_types is not a list'],
    ['hamlet', { fetch_event_types: '[1]' }, 'BAD_REQUEST', 'fetch_event_types[0] is not a string'],
    ['hamlet', { apply_markdown: 'yes' }, 'BAD_REQUEST', 'apply_markdown is not valid JSON'],
    ['hamlet', { client_gravatar: '1' }, 'BAD_REQUEST', 'client_gravatar is not a boolean'],
    ['hamlet', { client_capabilities: {} }, 'BAD_REQUEST', 'client_capabilities["notification_settings_null"] field is missing'],
    ['hamlet', { client_capabilities: '[1]' }, 'BAD_REQUEST', 'client_capabilities is not a dict'],
    ['hamlet', { client_capabilities: { notification_settings_null: true, user_settings_object: 1 } }, 'BAD_REQUEST', 'client_capabilities["user_settings_object"] is not a boolean'],
    ['hamlet', { include_subscribers: 'maybe' }, 'BAD_REQUEST', 'Invalid include_subscribers'],
    ['hamlet', { narrow: '[["stream"]]' }, 'BAD_REQUEST', 'narrow[0] is too short.'],
    ['hamlet', { narrow: [['sender', 'x'], ['search', 'y']] }, 'BAD_REQUEST', 'Operator search not supported.'],
    ['hamlet', { queue_lifespan_secs: 'long' }, 'BAD_REQUEST', 'queue_lifespan_secs is not valid JSON'],
    ['polonius', { all_public_streams: true }, 'BAD_REQUEST', 'User not authorized for this query'],
  ];
  for (const [who, params, code, msg] of cases) {
    it(`${who} ${JSON.stringify(params)} -> ${msg}`, async () => {
      const before = await t.app.ctx.queues.store.count();
      expectError(await t.post('/register', params, who as 'hamlet'), 400, code, msg);
      expect(await t.app.ctx.queues.store.count()).toBe(before);
    });
  }

  it('without credentials', async () => {
    expectError(await t.post('/register', {}, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });
});

describe('POST /register: a change racing with registration', () => {
  it('an event that reaches the queue while the state is read is applied, and last_event_id covers it', async () => {
    const queues = t.app.ctx.queues;
    const original = queues.register.bind(queues);
    // Commit a change right after the queue exists and before the state is read.
    (queues as { register: typeof original }).register = async (spec) => {
      const desc = await original(spec);
      await transact(t.app.ctx, (tx) => doAddAlertWords(tx, t.realmId, t.users.cordelia.id, ['raced']));
      return desc;
    };
    try {
      const body = await registerQueue(t, 'cordelia', { fetch_event_types: ['alert_words'] });
      expect(body.alert_words).toEqual(['raced']);
      expect(body.last_event_id).toBe(0);
      // The client resumes after it: nothing is delivered twice.
      expect(await getEvents(t, 'cordelia', body.queue_id, body.last_event_id)).toEqual([]);
    } finally {
      (queues as { register: typeof original }).register = original;
    }
  });
});

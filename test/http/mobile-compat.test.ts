import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProblems } from '../support/flutter-fields.js';
import { APP_REGISTER_PARAMS, populate } from '../support/mobile-app.js';
import { sendChannelMessage } from '../support/messages.js';
import { expectSuccess, FIXTURE_PASSWORD, startTestServer, type FixtureName, type TestServer } from '../support/server.js';

/**
 * The Zulip mobile app (zulip-flutter) decodes our answers with generated
 * decoders that throw on a missing required key or a wrong type: one such
 * key and the app shows an error instead of the organization. These tests
 * hold /register, server_settings, fetch_api_key and GET /messages against
 * the app's field lists (test/support/flutter-fields.json). Events: see
 * mobile-compat-events.test.ts.
 */

describe('the Zulip mobile app decodes our answers', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    await populate(t);
  });
  afterAll(() => t.close());

  it.each<FixtureName>(['owner', 'iago', 'hamlet', 'polonius', 'bot'])('/register as %s with the app parameters', async (who) => {
    const body = expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, who));
    expect(decodeProblems('InitialSnapshot', body)).toEqual([]);
  });

  it('the realm really has something of everything (the check above is not vacuous)', async () => {
    const body = expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, 'hamlet'));
    expect(body.muted_users.map((m: { id: number }) => m.id)).toEqual([t.users.othello.id]);
    expect(Object.values(body.realm_emoji).map((e: any) => e.name)).toContain('parrot');
    expect(body.realm_user_groups.map((g: any) => g.name)).toContain('designers');
    expect(body.user_status[String(t.users.cordelia.id)]).toMatchObject({ status_text: 'on a break', emoji_name: 'coffee' });
    expect(Object.keys(body.presences)).toEqual(expect.arrayContaining([String(t.users.cordelia.id), String(t.users.othello.id)]));
    expect(body.unread_msgs.streams.length).toBeGreaterThan(0);
    expect(body.unread_msgs.pms.length + body.unread_msgs.huddles.length).toBeGreaterThan(0);
    expect(body.recent_private_conversations.length).toBeGreaterThan(0);
    expect(body.starred_messages.length).toBe(1);
    expect(body.subscriptions.map((s: any) => s.name)).toEqual(expect.arrayContaining(['design', 'secret']));
    expect(body.user_topics.length).toBe(1);
    expect(body.custom_profile_fields.length).toBe(1);
    expect(body.saved_snippets.length).toBe(1);
    expect(body.realm_wildcard_mention_policy).toBe(5);
    expect(body.server_emoji_data_url).toMatch(/^http:\/\/zulip\.testserver\/static\/generated\/emoji\/emoji_api\.[0-9a-f]+\.json$/);
    // Each role decodes with a realm of several users, bots included.
    expect(body.realm_users.length).toBeGreaterThan(5);
  });

  it('a missing key is reported (the checker itself works)', async () => {
    const body = expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, 'hamlet'));
    delete body.muted_users;
    body.subscriptions[0].color = 'red';
    body.realm_wildcard_mention_policy = 4;
    body.realm_users[0].role = 150; // UserRole has an "unknown" value: accepted
    expect(decodeProblems('InitialSnapshot', body)).toEqual([
      'InitialSnapshot.muted_users: missing (required array)',
      'InitialSnapshot.subscriptions[0].color: expected #rrggbb, got "red"',
      'InitialSnapshot.realm_wildcard_mention_policy: 4 not among [1,2,3,5,6,7]',
    ]);
  });

  it('server_settings (the login screen) decodes', async () => {
    const body = expectSuccess(await t.get('/server_settings', {}, null));
    expect(decodeProblems('GetServerSettingsResult', body)).toEqual([]);
  });

  it('fetch_api_key decodes, for a member and for a guest', async () => {
    for (const who of ['hamlet', 'polonius'] as const) {
      const body = expectSuccess(await t.post('/fetch_api_key', { username: t.users[who].email, password: FIXTURE_PASSWORD }, null));
      expect(decodeProblems('FetchApiKeyResult', body)).toEqual([]);
      expect(body.user_id).toBe(t.users[who].id);
    }
  });

  it('GET /messages and GET /messages/{id} with the app\'s parameters decode: channel and direct messages, reactions, edits', async () => {
    const edited = await sendChannelMessage(t, 'hamlet', 'design', 'logo', 'first draft');
    expectSuccess(await t.patch(`/messages/${edited}`, { content: 'second draft' }, 'hamlet'));
    expectSuccess(await t.patch(`/messages/${edited}`, { topic: 'logo v2' }, 'hamlet'));
    for (const who of ['hamlet', 'polonius', 'owner'] as const) {
      const body = expectSuccess(
        await t.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [], apply_markdown: true, client_gravatar: false, allow_empty_topic_name: true }, who),
      );
      expect(decodeProblems('GetMessagesResult', body)).toEqual([]);
      expect(body.messages.length).toBeGreaterThan(0);
    }
    const all = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, allow_empty_topic_name: true }, 'hamlet')).messages;
    expect(new Set(all.map((m: any) => m.type))).toEqual(new Set(['stream', 'private']));
    expect(all.some((m: any) => m.reactions.length > 0)).toBe(true);
    expect(all.some((m: any) => Array.isArray(m.edit_history))).toBe(true);
    for (const m of all) {
      const one = expectSuccess(await t.get(`/messages/${m.id}`, { apply_markdown: true, allow_empty_topic_name: true }, 'hamlet'));
      expect(decodeProblems('GetMessageResult', one)).toEqual([]);
    }
  });

  it('the emoji data at server_emoji_data_url decodes as ServerEmojiData, without authentication', async () => {
    const { server_emoji_data_url: url } = expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, 'hamlet'));
    const base = await t.listen();
    const res = await fetch(base + new URL(url).pathname);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const data = await res.json();
    expect(decodeProblems('ServerEmojiData', data)).toEqual([]);
    expect(Object.keys(data)).toEqual(['code_to_names']);
    // Codes are unqualified (no FE0F) and every name is the one reactions and Markdown accept.
    expect(data.code_to_names['1f600']).toEqual(['grinning', 'happy']);
    expect(data.code_to_names['2764']).toContain('heart');
    expect(Object.keys(data.code_to_names).some((c) => c.includes('fe0f'))).toBe(false);
    expect(Object.keys(data.code_to_names).length).toBeGreaterThan(1500);
  });

  it('another file name beside the emoji data is a missing static file, as elsewhere under /static', async () => {
    const { server_emoji_data_url: url } = expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, 'hamlet'));
    const base = await t.listen();
    const path = new URL(url).pathname;
    const missing = async (p: string) => {
      const res = await fetch(base + p);
      return { status: res.status, body: await res.json() };
    };
    const elsewhere = await missing('/static/no-such-file.json');
    expect(elsewhere).toEqual({ status: 404, body: { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' } });
    expect(await missing(path.replace(/emoji_api\.[0-9a-f]+/, 'emoji_api.0000'))).toEqual(elsewhere);
    expect(await missing('/static/generated/emoji/other.json')).toEqual(elsewhere);
    expect((await fetch(base + path)).status).toBe(200);
  });
});

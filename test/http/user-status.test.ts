import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emojiCodeForName } from '../../src/domain/rules/emoji.js';
import { userStatusModule } from '../../src/state/profiles.js';
import { activeUserIds } from '../../src/store/users.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const active = async () => (await activeUserIds(t.app.ctx.db, t.realmId)).sort((a, b) => a - b);
/** Recipients of a delivery, sorted (emitters need not sort them). */
const rcpt = (d: { userIds: readonly number[] }) => [...d.userIds].sort((a, b) => a - b);
const statusRows = () => t.app.ctx.db.selectFrom('user_statuses').selectAll().orderBy('user_id').execute();
const car = emojiCodeForName('car')!;

describe('POST /users/me/status', () => {
  it('sets text and emoji: one user_status event to every active user; GET /users/{id}/status', async () => {
    const events = await t.captureEvents(async () => {
      expectSuccess(await t.post('/users/me/status', { status_text: '  In a meeting ', emoji_name: 'car' }, 'hamlet'));
    });
    expect(events.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'user_status', user_id: t.users.hamlet.id, status_text: 'In a meeting', emoji_name: 'car', emoji_code: car, reaction_type: 'unicode_emoji' }, await active()],
    ]);
    expect(expectSuccess(await t.get(`/users/${t.users.hamlet.id}/status`, {}, 'polonius'))).toEqual({
      result: 'success',
      msg: '',
      status: { status_text: 'In a meeting', emoji_name: 'car', emoji_code: car, reaction_type: 'unicode_emoji' },
    });
    expect(expectSuccess(await t.get(`/users/${t.users.cordelia.id}/status`)).status).toEqual({});
  });

  it('away mirrors presence_enabled: a user_settings update to the user, then user_status', async () => {
    const events = await t.captureEvents(async () => expectSuccess(await t.post('/users/me/status', { away: true }, 'othello')));
    // The settings events come from the settings action (issue 3), legacy update_global_notifications included.
    const settingsEvents = events.filter((e) => e.event.type !== 'user_status' && e.event.type !== 'presence');
    expect(settingsEvents.map((e) => e.event.type)).toEqual(['user_settings', 'update_global_notifications']);
    // Sharing presence off: after the action's own events, everyone gets an idle presence
    // backdated 320 s (past the 200 s offline threshold), as Zulip sends it.
    const presence = events.filter((e) => e.event.type === 'presence');
    expect(presence).toHaveLength(1);
    expect(events.at(-1)!.event.type).toBe('presence');
    const p = presence[0]!.event as unknown as { __modern: { idle_timestamp: number }; server_timestamp: number };
    // (The legacy status is derived from active_timestamp, which for a user with no
    // activity falls back to date_joined: this fixture joined seconds ago.)
    // idle_timestamp is whole seconds (floored), server_timestamp fractional and read later.
    const backdated = p.server_timestamp - p.__modern.idle_timestamp;
    expect(backdated).toBeGreaterThanOrEqual(320);
    expect(backdated).toBeLessThan(322);
    expect(settingsEvents.map((e) => [e.event, rcpt(e)])[0]).toEqual([{ type: 'user_settings', op: 'update', property: 'presence_enabled', value: false }, [t.users.othello.id]]);
    expect(events.filter((e) => e.event.type === 'user_status').map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'user_status', user_id: t.users.othello.id, away: true }, await active()],
    ]);
    expect(events.at(-2)!.event.type).toBe('user_status');
    expect(expectSuccess(await t.get(`/users/${t.users.othello.id}/status`)).status).toEqual({ away: true });
    expect(JSON.parse((await t.row(t.users.othello.id)).settings).presence_enabled).toBe(false);
    expectSuccess(await t.post('/users/me/status', { away: false }, 'othello'));
    expect(expectSuccess(await t.get(`/users/${t.users.othello.id}/status`)).status).toEqual({});
  });

  it('clearing: "" for text and emoji', async () => {
    const events = await t.captureEvents(async () => expectSuccess(await t.post('/users/me/status', { status_text: '', emoji_name: '' }, 'hamlet')));
    expect(events.map((e) => e.event)).toEqual([
      { type: 'user_status', user_id: t.users.hamlet.id, status_text: '', emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' },
    ]);
    expect(expectSuccess(await t.get(`/users/${t.users.hamlet.id}/status`)).status).toEqual({});
  });

  it('refusals with Zulip\'s wording change nothing and send nothing', async () => {
    const before = await statusRows();
    const err = async (params: Record<string, unknown>, msg: string, as: 'cordelia' | 'bot' = 'cordelia') =>
      expectError(await t.post('/users/me/status', params, as), 400, 'BAD_REQUEST', msg);
    const events = await t.captureEvents(async () => {
      await err({}, 'Client did not pass any new values.');
      await err({ emoji_code: car }, 'Client did not pass any new values.');
      await err({ status_text: 'x', emoji_code: car }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.');
      await err({ away: true, reaction_type: 'unicode_emoji' }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.');
      await err({ emoji_name: 'definitely_not_an_emoji' }, "Emoji 'definitely_not_an_emoji' does not exist");
      await err({ emoji_name: 'car', emoji_code: 'zzzz', reaction_type: 'unicode_emoji' }, 'Invalid emoji code.');
      await err({ emoji_name: 'smile', emoji_code: car, reaction_type: 'unicode_emoji' }, 'Invalid emoji name.');
      await err({ emoji_name: 'car', emoji_code: car, reaction_type: 'sticker' }, 'Invalid emoji type.');
      await err({ status_text: 'x'.repeat(61) }, 'status_text is too long (limit: 60 characters)');
      await err({ away: 'yes' }, 'away is not valid JSON');
      await err({ status_text: 'beep' }, 'This endpoint does not accept bot requests.', 'bot');
    });
    expect(events).toEqual([]);
    expect(await statusRows()).toEqual(before);
    expectError(await t.post('/users/me/status', { status_text: 'x' }, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('GET /users/{id}/status: bots and unknown users are "No such user"', async () => {
    expectError(await t.get(`/users/${t.users.bot.id}/status`), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.get('/users/99999/status'), 400, 'BAD_REQUEST', 'No such user');
  });

  it("administrators set another user's status", async () => {
    expectError(await t.post(`/users/${t.users.cordelia.id}/status`, { status_text: 'Hacked' }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    const events = await t.captureEvents(async () => expectSuccess(await t.post(`/users/${t.users.cordelia.id}/status`, { status_text: 'On leave' }, 'iago')));
    expect(events.map((e) => e.event)).toEqual([{ type: 'user_status', user_id: t.users.cordelia.id, status_text: 'On leave' }]);
  });
});

describe('/register consistency: user_status', () => {
  it('set, change, clear, away', async () => {
    await expectModuleConsistent(t, userStatusModule, 'polonius', async () => {
      expectSuccess(await t.post('/users/me/status', { status_text: 'Busy', emoji_name: 'car' }, 'shiva'));
      expectSuccess(await t.post('/users/me/status', { status_text: 'Busier' }, 'shiva'));
      expectSuccess(await t.post('/users/me/status', { away: true }, 'cordelia'));
      expectSuccess(await t.post('/users/me/status', { emoji_name: '' }, 'shiva'));
      expectSuccess(await t.post('/users/me/status', { status_text: '' }, 'cordelia'));
      expectSuccess(await t.post('/users/me/status', { away: false }, 'cordelia'));
      expectSuccess(await t.post('/users/me/status', { status_text: '' }, 'shiva'));
    });
  });
});

describe('POST /users/me/status: custom emoji', () => {
  it('a realm emoji by name (it overrides a Unicode name) or by id; wrong ids, names and deactivated ones are refused', async () => {
    const png = await pngImage(64, 64);
    const upload = (name: string) => multipartRequest(t, 'POST', `/realm/emoji/${name}`, [{ field: 'f1', filename: 'e.png', contentType: 'image/png', data: png }], {}, 'iago');
    expectSuccess(await upload('parley_status'));
    expectSuccess(await upload('car'));
    const emoji = expectSuccess(await t.get('/realm/emoji', {}, 'hamlet')).emoji as Record<string, { id: string; name: string }>;
    const idOf = (name: string) => Object.values(emoji).find((e) => e.name === name)!.id;

    const events = await t.captureEvents(async () => expectSuccess(await t.post('/users/me/status', { emoji_name: 'parley_status' }, 'cordelia')));
    expect(events.map((e) => e.event)).toEqual([
      { type: 'user_status', user_id: t.users.cordelia.id, emoji_name: 'parley_status', emoji_code: idOf('parley_status'), reaction_type: 'realm_emoji' },
    ]);
    expectSuccess(await t.post('/users/me/status', { emoji_name: 'car' }, 'cordelia'));
    expect(expectSuccess(await t.get(`/users/${t.users.cordelia.id}/status`)).status).toEqual({ emoji_name: 'car', emoji_code: idOf('car'), reaction_type: 'realm_emoji' });
    expectSuccess(await t.post('/users/me/status', { emoji_name: 'parley_status', emoji_code: idOf('parley_status'), reaction_type: 'realm_emoji' }, 'cordelia'));
    expect(expectSuccess(await t.get(`/users/${t.users.cordelia.id}/status`)).status).toEqual({
      emoji_name: 'parley_status',
      emoji_code: idOf('parley_status'),
      reaction_type: 'realm_emoji',
    });

    const before = await statusRows();
    const err = async (params: Record<string, unknown>, msg: string) =>
      expectError(await t.post('/users/me/status', { reaction_type: 'realm_emoji', ...params }, 'cordelia'), 400, 'BAD_REQUEST', msg);
    await err({ emoji_name: 'parley_status', emoji_code: '999999' }, 'Invalid custom emoji.');
    await err({ emoji_name: 'car', emoji_code: idOf('parley_status') }, 'Invalid custom emoji name.');
    expectSuccess(await t.delete('/realm/emoji/parley_status', {}, 'iago'));
    await err({ emoji_name: 'parley_status', emoji_code: idOf('parley_status') }, 'This custom emoji has been deactivated.');
    expectError(await t.post('/users/me/status', { emoji_name: 'parley_status' }, 'cordelia'), 400, 'BAD_REQUEST', "Emoji 'parley_status' does not exist");
    expect(await statusRows()).toEqual(before);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { everyone, expectNoChange, group, mkChannel, plain } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('PATCH /realm', () => {
  it('changes settings; one realm event each to every active user; the response lists what changed', async () => {
    let body: any;
    const d = plain(await t.captureEvents(async () => {
      body = expectSuccess(await t.patch('/realm', { name: 'Acme', name_changes_disabled: true, message_edit_history_visibility_policy: 'moves', message_content_edit_limit_seconds: 'unlimited' }, 'iago'));
    }));
    expect(body).toEqual({ result: 'success', msg: '', name_changes_disabled: true, name: 'updated', message_edit_history_visibility_policy: 'updated', message_content_edit_limit_seconds: null });
    expect(d).toEqual([
      { event: { type: 'realm', op: 'update', property: 'name_changes_disabled', value: true }, userIds: everyone(t) },
      { event: { type: 'realm', op: 'update', property: 'name', value: 'Acme' }, userIds: everyone(t) },
      { event: { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'moves' }, userIds: everyone(t) },
      { event: { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: null } }, userIds: everyone(t) },
    ]);
    // Unchanged values: no event, not in the response.
    await expectNoChange(t, async () => expect(expectSuccess(await t.patch('/realm', { name: 'Acme' }, 'iago'))).toEqual({ result: 'success', msg: '' }));
  });

  it('group settings: update_dict with the new value', async () => {
    const admins = await group(t, 'role:administrators');
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch('/realm', { can_create_public_channel_group: { new: admins } }, 'iago'))));
    expect(d).toEqual([{ event: { type: 'realm', op: 'update_dict', property: 'default', data: { can_create_public_channel_group: admins } }, userIds: everyone(t) }]);
    expectError(await t.post('/channels/create', { name: 'denied', subscribers: [] }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await expectNoChange(t, async () =>
      expectError(await t.patch('/realm', { can_create_public_channel_group: { new: admins, old: await group(t, 'role:members') } }, 'iago'), 400, 'BAD_REQUEST', "'old' value does not match the expected value."),
    );
    expectSuccess(await t.patch('/realm', { can_create_public_channel_group: { new: await group(t, 'role:members') } }, 'iago'));
  });

  it('announcement channels must be visible to the caller; -1 unsets', async () => {
    const pub = await mkChannel(t, 'announce');
    const priv = await mkChannel(t, 'announce-private', { invite_only: true }, 'hamlet');
    expectSuccess(await t.patch('/realm', { new_stream_announcements_stream_id: pub, signup_announcements_stream_id: priv }, 'iago'));
    await expectNoChange(t, async () => expectError(await t.patch('/realm', { zulip_update_announcements_stream_id: 99999 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID'));
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch('/realm', { new_stream_announcements_stream_id: -1 }, 'iago'))));
    expect(d.map((x) => x.event)).toEqual([{ type: 'realm', op: 'update', property: 'new_stream_announcements_stream_id', value: -1 }]);
  });

  it('permission matrix: administrators; owner-only settings', async () => {
    for (const who of ['shiva', 'hamlet', 'polonius', 'bot'] as const) {
      await expectNoChange(t, async () => expectError(await t.patch('/realm', { name: 'Nope' }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'));
    }
    for (const key of ['invite_required', 'emails_restricted_to_domains', 'disallow_disposable_email_addresses']) {
      await expectNoChange(t, async () => expectError(await t.patch('/realm', { [key]: true }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner'));
    }
    await expectNoChange(t, async () => {
      expectError(await t.patch('/realm', { waiting_period_threshold: 3 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
      expectError(await t.patch('/realm', { message_retention_days: 30 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
      expectError(await t.patch('/realm', { can_invite_users_group: { new: await group(t, 'role:administrators') } }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    });
    expectSuccess(await t.patch('/realm', { waiting_period_threshold: 3, message_retention_days: 'unlimited', invite_required: false }, 'owner'));
    expectSuccess(await t.patch('/realm', { email_changes_disabled: true }, 'iago'));
  });

  it('validation errors', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ default_language: 'xx' }, 'BAD_REQUEST', "Invalid language 'xx'"],
      [{ message_edit_history_visibility_policy: 'some' }, 'BAD_REQUEST', 'Invalid message_edit_history_visibility_policy'],
      [{ topics_policy: 'inherit' }, 'BAD_REQUEST', 'Invalid topics_policy'],
      [{ video_chat_provider: 42 }, 'BAD_REQUEST', 'Invalid video_chat_provider 42'],
      [{ giphy_rating: 9 }, 'BAD_REQUEST', 'Invalid giphy_rating 9'],
      [{ message_content_delete_limit_seconds: 0 }, 'REQUEST_VARIABLE_INVALID', "Bad value for 'message_content_delete_limit_seconds': 0"],
      [{ name: 'n'.repeat(41) }, 'BAD_REQUEST', 'name is too long (limit: 40 characters)'],
      [{ allow_message_editing: 'yes' }, 'BAD_REQUEST', 'allow_message_editing is not valid JSON'],
      [{ can_create_public_channel_group: { new: await group(t, 'role:internet') } }, 'BAD_REQUEST', "'can_create_public_channel_group' setting cannot be set to 'role:internet' group."],
    ];
    for (const [params, code, msg] of cases) {
      await expectNoChange(t, async () => expectError(await t.patch('/realm', params, 'owner'), 400, code, msg));
    }
  });
});

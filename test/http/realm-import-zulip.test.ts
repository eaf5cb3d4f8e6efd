import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTarGz } from '../../src/files/tar.js';
import { importRealm } from '../../src/domain/export/import-realm.js';
import { emptyTarget, tableCounts, type ImportTarget } from '../support/import-target.js';

/**
 * Issue 19: a tarball shaped as Zulip's `./manage.py export` writes it
 * (zerver/lib/export.py): Zulip's field names only, float timestamps, the
 * sending client as an id into zerver_client, cross-realm system bots in
 * zerver_userprofile_crossrealm, direct-message groups known only through
 * their subscriptions, fields Parley does not know, channel permission
 * settings an older Zulip did not have.
 */

const SYSTEM = ['role:owners', 'role:administrators', 'role:moderators', 'role:fullmembers', 'role:members', 'role:everyone', 'role:internet', 'role:nobody'];
const gid = (name: string): number => 20 + SYSTEM.indexOf(name);

function zulipTarball(): Buffer {
  const realm = {
    zerver_realm: [{ id: 2, string_id: 'zulip', name: 'Zulip Dev', description: 'Our old home', date_created: 1700000000.123, deactivated: false, invite_required: false, org_type: 10, want_advertise_in_communities_directory: false }],
    zerver_userprofile: [
      { id: 10, realm: 2, email: 'alice@example.com', delivery_email: 'alice@example.com', full_name: 'Alice', role: 100, is_bot: false, bot_type: null, bot_owner: null, is_active: true, is_mirror_dummy: false, date_joined: 1700000000.5, tos_version: null, avatar_source: 'U', avatar_version: 3, timezone: 'Europe/Paris', twenty_four_hour_time: true, last_login: 1700000500.0 },
      { id: 11, realm: 2, email: 'bob@example.com', delivery_email: 'bob@example.com', full_name: 'Bob', role: 400, is_bot: false, bot_type: null, bot_owner: null, is_active: true, is_mirror_dummy: false, date_joined: 1700000001.5, tos_version: null, avatar_source: 'G', avatar_version: 1, timezone: '', twenty_four_hour_time: false },
      { id: 12, realm: 2, email: 'carol@example.com', delivery_email: 'carol@example.com', full_name: 'Carol', role: 400, is_bot: false, bot_type: null, bot_owner: null, is_active: true, date_joined: 1700000002.5, tos_version: null, avatar_source: 'G', avatar_version: 1, timezone: '' },
    ],
    zerver_userprofile_mirrordummy: [{ id: 13, realm: 2, email: 'dave@example.com', delivery_email: 'dave@example.com', full_name: 'Dave', role: 400, is_bot: false, is_active: false, is_mirror_dummy: true, date_joined: 1700000003.5, tos_version: null, avatar_source: 'G', timezone: '' }],
    zerver_userprofile_crossrealm: [{ id: 1, email: 'notification-bot@zulip.com', email_domain: 'zulip.com' }],
    zerver_usergroup: SYSTEM.map((name) => ({ id: gid(name), realm: 2 })),
    zerver_namedusergroup: SYSTEM.map((name) => ({ usergroup_ptr: gid(name), realm_for_sharding: 2, name, description: name, is_system_group: true, can_mention_group: gid('role:nobody') })),
    zerver_usergroupmembership: [
      { id: 1, user_group: gid('role:owners'), user_profile: 10 },
      { id: 2, user_group: gid('role:members'), user_profile: 11 },
      { id: 3, user_group: gid('role:members'), user_profile: 12 },
      { id: 4, user_group: gid('role:fullmembers'), user_profile: 11 },
      { id: 5, user_group: gid('role:fullmembers'), user_profile: 12 },
    ],
    zerver_groupgroupmembership: SYSTEM.slice(0, 6).map((name, i) => ({ id: i + 1, supergroup: gid(SYSTEM[i + 1]!), subgroup: gid(name) })),
    zerver_recipient: [
      { id: 30, type: 1, type_id: 10 },
      { id: 31, type: 1, type_id: 11 },
      { id: 32, type: 2, type_id: 40 },
      { id: 33, type: 1, type_id: 1 },
      { id: 34, type: 1, type_id: 12 },
      { id: 35, type: 3, type_id: 70 },
    ],
    zerver_stream: [
      { id: 40, realm: 2, name: 'general', description: 'For everyone', rendered_description: '<p>For everyone</p>', date_created: 1700000003.0, deactivated: false, invite_only: false, is_web_public: false, history_public_to_subscribers: true, is_in_zephyr_realm: false, message_retention_days: null, recipient: 32, first_message_id: 100, stream_post_policy: 1, can_remove_subscribers_group: gid('role:administrators') },
    ],
    zerver_subscription: [
      { id: 50, user_profile: 10, recipient: 32, active: true, is_user_active: true, is_muted: false, color: '#76ce90', pin_to_top: false, desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null },
      { id: 51, user_profile: 11, recipient: 32, active: true, is_user_active: true, is_muted: true, color: '#fae589', pin_to_top: true, desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null },
      { id: 52, user_profile: 10, recipient: 30, active: true, is_muted: false, color: '#c2c2c2', pin_to_top: false },
      { id: 53, user_profile: 10, recipient: 35, active: true, is_muted: false, color: '#c2c2c2', pin_to_top: false },
      { id: 54, user_profile: 11, recipient: 35, active: true, is_muted: false, color: '#c2c2c2', pin_to_top: false },
      { id: 55, user_profile: 12, recipient: 35, active: true, is_muted: false, color: '#c2c2c2', pin_to_top: false },
    ],
    zerver_huddle: [{ id: 70, huddle_hash: 'c0ffee', group_size: 3 }],
    zerver_client: [{ id: 1, name: 'website' }, { id: 2, name: 'ZulipMobile' }],
    zerver_reaction: [{ id: 60, user_profile: 11, message: 100, emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }],
    zerver_realmauditlog: [],
    zerver_defaultstream: [{ id: 1, realm: 2, stream: 40 }],
  };
  const messages = {
    zerver_message: [
      { id: 100, sender: 10, recipient: 32, realm: 2, subject: 'hello', content: 'Hi **Bob**', rendered_content: '<p>Hi <strong>Bob</strong></p>', rendered_content_version: 1, date_sent: 1700000100.25, sending_client: 1, last_edit_time: null, edit_history: null, has_attachment: false, has_image: false, has_link: false, type: 1, is_channel_message: true },
      { id: 101, sender: 11, recipient: 30, realm: 2, subject: '', content: 'psst', rendered_content: '<p>psst</p>', rendered_content_version: 1, date_sent: 1700000200.75, sending_client: 2, last_edit_time: null, edit_history: null, has_attachment: false, has_image: false, has_link: false, type: 1, is_channel_message: false },
      { id: 103, sender: 1, recipient: 32, realm: 2, subject: 'hello', content: 'A new channel', rendered_content: '<p>A new channel</p>', rendered_content_version: 1, date_sent: 1700000400.0, sending_client: 1, last_edit_time: null, edit_history: null, has_attachment: false, has_image: false, has_link: false, type: 1, is_channel_message: true },
      { id: 102, sender: 12, recipient: 35, realm: 2, subject: '', content: 'all three', rendered_content: '<p>all three</p>', rendered_content_version: 1, date_sent: 1700000300.0, sending_client: 1, last_edit_time: null, edit_history: null, has_attachment: false, has_image: false, has_link: false, type: 1, is_channel_message: false },
    ],
    zerver_usermessage: [
      { id: 1, user_profile: 10, message: 100, flags_mask: 1 },
      { id: 2, user_profile: 11, message: 100, flags_mask: 2 },
      { id: 3, user_profile: 10, message: 101, flags_mask: 2048 },
      { id: 4, user_profile: 11, message: 101, flags_mask: 2049 },
      { id: 5, user_profile: 10, message: 102, flags_mask: 2048 },
      { id: 6, user_profile: 11, message: 102, flags_mask: 2048 },
      { id: 7, user_profile: 12, message: 102, flags_mask: 2049 },
      { id: 8, user_profile: 10, message: 103, flags_mask: 0 },
      { id: 9, user_profile: 11, message: 103, flags_mask: 0 },
    ],
  };
  const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
  return writeTarGz([
    { name: 'zulip-export-abc123/realm.json', data: json(realm) },
    { name: 'zulip-export-abc123/messages-000001.json', data: json(messages) },
    { name: 'zulip-export-abc123/attachment.json', data: json({ zerver_attachment: [] }) },
    { name: 'zulip-export-abc123/uploads/records.json', data: json([]) },
    { name: 'zulip-export-abc123/avatars/records.json', data: json([]) },
    { name: 'zulip-export-abc123/emoji/records.json', data: json([]) },
  ]);
}

describe('importing a tarball from Zulip', () => {
  let target: ImportTarget;
  beforeAll(async () => {
    target = await emptyTarget();
    const summary = await importRealm(target.app.ctx, zulipTarball());
    expect(summary.realmId).toBe(2);
    expect(summary.counts).toMatchObject({ users: 4, system_bots: 1, channels: 1, subscriptions: 2, messages: 4, user_messages: 9, reactions: 1 });
  });
  afterAll(async () => target?.close());

  it('carries users, with Zulip settings, and the system bot', async () => {
    const users = (await target.get(11, '/users')).members.map((u: any) => ({ id: u.user_id, email: u.email, name: u.full_name, role: u.role, bot: u.is_bot, tz: u.timezone }));
    expect(users).toEqual([
      { id: 10, email: 'alice@example.com', name: 'Alice', role: 100, bot: false, tz: 'Europe/Paris' },
      { id: 11, email: 'bob@example.com', name: 'Bob', role: 400, bot: false, tz: '' },
      { id: 12, email: 'carol@example.com', name: 'Carol', role: 400, bot: false, tz: '' },
      { id: 13, email: 'dave@example.com', name: 'Dave', role: 400, bot: false, tz: '' },
    ]);
    // A mirror dummy (a user whose data stayed in Zulip) is a deactivated account.
    const dave = (await target.get(10, '/users/13')).user;
    expect([dave.full_name, dave.is_active]).toEqual(['Dave', false]);
    const me = await target.get(10, '/users/me');
    expect([me.role, me.is_owner, me.date_joined]).toEqual([100, true, '2023-11-14T22:13+00:00']);
    const settings = await target.post(10, '/register', { fetch_event_types: ['user_settings', 'realm_user'] });
    expect(settings.user_settings.twenty_four_hour_time).toBe(true);
    // Zulip's cross-realm bot is Parley's system bot, outside the organization.
    expect(settings.cross_realm_bots.map((b: any) => [b.user_id, b.email, b.full_name, b.is_system_bot])).toEqual([[1, 'notification-bot@zulip.com', 'Notification Bot', true]]);
  });

  it('carries channels, subscriptions and their settings', async () => {
    const subs = (await target.get(11, '/users/me/subscriptions')).subscriptions;
    expect(subs.map((s: any) => ({ id: s.stream_id, name: s.name, muted: s.is_muted, pin: s.pin_to_top, color: s.color, desc: s.rendered_description, send: s.can_send_message_group, remove: s.can_remove_subscribers_group }))).toEqual([
      { id: 40, name: 'general', muted: true, pin: true, color: '#fae589', desc: '<p>For everyone</p>', send: gid('role:everyone'), remove: gid('role:administrators') },
    ]);
    expect((await target.post(10, '/register', { fetch_event_types: ['default_streams'] })).realm_default_streams).toEqual([40]);
  });

  it('carries messages with each user\'s flags, reactions and clients; direct-message groups from subscriptions', async () => {
    const narrow = encodeURIComponent('[]');
    const bob = (await target.get(11, `/messages?anchor=newest&num_before=10&num_after=0&narrow=${narrow}`)).messages;
    expect(bob.map((m: any) => ({ id: m.id, content: m.content, flags: m.flags, ts: m.timestamp, client: m.client, topic: m.subject, type: m.type }))).toEqual([
      { id: 100, content: '<p>Hi <strong>Bob</strong></p>', flags: ['starred'], ts: 1700000100, client: 'website', topic: 'hello', type: 'stream' },
      { id: 101, content: '<p>psst</p>', flags: ['read'], ts: 1700000200, client: 'ZulipMobile', topic: '', type: 'private' },
      { id: 102, content: '<p>all three</p>', flags: [], ts: 1700000300, client: 'website', topic: '', type: 'private' },
      { id: 103, content: '<p>A new channel</p>', flags: [], ts: 1700000400, client: 'website', topic: 'hello', type: 'stream' },
    ]);
    expect([bob[3].sender_id, bob[3].sender_full_name, bob[3].sender_email]).toEqual([1, 'Notification Bot', 'notification-bot@zulip.com']);
    expect(bob[0].reactions).toEqual([{ emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: 11, user: { email: 'bob@example.com', full_name: 'Bob', id: 11 } }]);
    expect(bob[2].display_recipient.map((r: any) => r.id)).toEqual([10, 11, 12]);
    const carol = (await target.get(12, `/messages?anchor=newest&num_before=10&num_after=0&narrow=${encodeURIComponent(JSON.stringify([{ operator: 'dm', operand: [10, 11] }]))}`)).messages;
    expect(carol.map((m: any) => [m.id, m.flags])).toEqual([[102, ['read']]]);
    const search = (await target.get(10, `/messages?anchor=newest&num_before=10&num_after=0&narrow=${encodeURIComponent(JSON.stringify([{ operator: 'search', operand: 'psst' }]))}`)).messages;
    expect(search.map((m: any) => m.id)).toEqual([101]);
  });

  it('a second import is refused and writes nothing', async () => {
    const before = await tableCounts(target.app);
    await expect(importRealm(target.app.ctx, zulipTarball())).rejects.toThrow(/^the database already holds an organization/);
    expect(await tableCounts(target.app)).toEqual(before);
  });
});

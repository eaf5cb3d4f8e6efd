import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectNoChange, group, ids, mkChannel, nonGuests, plain, realmSetting } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const CANNOT = ['CANNOT_ADMINISTER_CHANNEL', 'You do not have permission to administer this channel.'] as const;

describe('PATCH /streams/{stream_id}', () => {
  it('permission matrix: administrators and the channel administrators; content-access users get CANNOT_ADMINISTER_CHANNEL; others Invalid channel ID', async () => {
    const pub = await mkChannel(t, 'adm-public', { subscribers: [t.users.polonius.id] }, 'iago');
    const priv = await mkChannel(t, 'adm-private', { invite_only: true }, 'iago');
    const n = { i: 0 };
    for (const who of ['owner', 'iago'] as const) {
      expectSuccess(await t.patch(`/streams/${pub}`, { description: `by ${who} ${n.i++}` }, who));
      expectSuccess(await t.patch(`/streams/${priv}`, { description: `by ${who} ${n.i++}` }, who));
    }
    for (const who of ['shiva', 'hamlet', 'bot', 'polonius'] as const) {
      await expectNoChange(t, async () => expectError(await t.patch(`/streams/${pub}`, { description: 'x' }, who), 400, ...CANNOT));
    }
    for (const who of ['shiva', 'hamlet', 'bot', 'polonius'] as const) {
      await expectNoChange(t, async () => expectError(await t.patch(`/streams/${priv}`, { description: 'x' }, who), 400, 'BAD_REQUEST', 'Invalid channel ID'));
      await expectNoChange(t, async () => expectError(await t.delete(`/streams/${priv}`, {}, who), 400, 'BAD_REQUEST', 'Invalid channel ID'));
    }
    await expectNoChange(t, async () => expectError(await t.patch('/streams/99999', { description: 'x' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID'));
    // The creator administers their own channel (can_administer_channel_group defaults to them).
    const mine = await mkChannel(t, 'adm-mine', {}, 'hamlet');
    expectSuccess(await t.patch(`/streams/${mine}`, { description: 'mine' }, 'hamlet'));
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${mine}`, { description: 'x' }, 'cordelia'), 400, ...CANNOT));
  });

  it('rename and description: events to everyone who sees the channel', async () => {
    const id = await mkChannel(t, 'old name', { subscribers: [t.users.polonius.id] });
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { new_name: ' new name ', description: 'Now with *style*\nand lines' }, 'iago'))));
    const audience = [...nonGuests(t), t.users.polonius.id].sort((a, b) => a - b);
    expect(d).toEqual([
      {
        event: { type: 'stream', op: 'update', stream_id: id, name: 'old name', property: 'description', value: 'Now with *style* and lines', rendered_description: '<p>Now with <em>style</em> and lines</p>' },
        userIds: audience,
      },
      { event: { type: 'stream', op: 'update', stream_id: id, name: 'old name', property: 'name', value: 'new name' }, userIds: audience },
    ]);
    await mkChannel(t, 'occupied');
    await expectNoChange(t, async () => {
      expectError(await t.patch(`/streams/${id}`, { new_name: 'new name' }, 'iago'), 400, 'BAD_REQUEST', 'Channel already has that name.');
      expectError(await t.patch(`/streams/${id}`, { new_name: 'OCCUPIED' }, 'iago'), 409, 'CHANNEL_ALREADY_EXISTS', "Channel 'OCCUPIED' already exists.", { is_private: false, can_view_channel: true });
      expectError(await t.patch(`/streams/${id}`, { new_name: '' }, 'iago'), 400, 'BAD_REQUEST', "Channel name can't be empty.");
      expectError(await t.patch(`/streams/${id}`, { description: 'x'.repeat(1025) }, 'iago'), 400, 'BAD_REQUEST', 'description is too long (limit: 1024 characters)');
    });
    // Changing only the case is allowed.
    expectSuccess(await t.patch(`/streams/${id}`, { new_name: 'New Name' }, 'iago'));
  });

  it('privacy: public to private and back, with the Zulip rules', async () => {
    const id = await mkChannel(t, 'privacy', { subscribers: [t.users.iago.id, t.users.othello.id] });
    await expectNoChange(t, async () => {
      expectError(await t.patch(`/streams/${id}`, { history_public_to_subscribers: false }, 'iago'), 400, 'BAD_REQUEST', 'Invalid parameters');
      expectError(await t.patch(`/streams/${id}`, { is_web_public: true, is_private: true }, 'iago'), 400, 'BAD_REQUEST', 'Invalid parameters');
      expectError(await t.patch(`/streams/${id}`, { is_web_public: true }, 'iago'), 400, 'BAD_REQUEST', 'Web-public channels are not enabled.');
    });
    const toPrivate = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { is_private: true }, 'iago'))));
    expect(toPrivate).toEqual([
      {
        event: { type: 'stream', op: 'update', stream_id: id, name: 'privacy', property: 'invite_only', value: true, history_public_to_subscribers: false, is_web_public: false },
        userIds: ids(t, 'owner', 'iago', 'othello'),
      },
      // Those who lost sight of it.
      { event: { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id], for_archiving: false }, userIds: ids(t, 'shiva', 'hamlet', 'cordelia', 'bot') },
    ]);
    expectError(await t.get(`/streams/${id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    const toPublic = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { is_private: false }, 'iago'))));
    expect(toPublic.map((x) => [x.event.type, x.event.op, x.userIds])).toEqual([
      ['stream', 'create', ids(t, 'shiva', 'hamlet', 'cordelia', 'bot')],
      ['stream', 'update', ids(t, 'owner', 'iago', 'othello')],
    ]);
    expect((toPublic[0]!.event.streams as any[])[0].subscribers).toEqual(ids(t, 'iago', 'othello'));
    // Changing privacy needs content access: an administrator not subscribed to a private channel is refused.
    const other = await mkChannel(t, 'privacy-2', { invite_only: true, subscribers: [t.users.othello.id] });
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${other}`, { is_private: false }, 'iago'), 400, 'BAD_REQUEST', 'Channel content access is required.'));
    // And the realm permission for the target kind.
    await realmSetting(t, 'can_create_private_channel_group', 'role:owners');
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${id}`, { is_private: true }, 'iago'), 400, 'BAD_REQUEST', 'Insufficient permission'));
    await realmSetting(t, 'can_create_private_channel_group', 'role:members');
  });

  it('default channel, retention (owners), topics policy, folder', async () => {
    const id = await mkChannel(t, 'settings-target', { subscribers: [t.users.iago.id] });
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { is_default_stream: true }, 'iago'))));
    expect(d).toEqual([{ event: { type: 'default_streams', default_streams: [id] }, userIds: nonGuests(t) }]);
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${id}`, { is_private: true }, 'iago'), 400, 'BAD_REQUEST', 'A default channel cannot be private.'));
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${id}`, { message_retention_days: 7 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner'));
    const r = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { message_retention_days: 7 }, 'owner'))));
    expect(r).toEqual([{ event: { type: 'stream', op: 'update', stream_id: id, name: 'settings-target', property: 'message_retention_days', value: 7 }, userIds: nonGuests(t) }]);
    expectSuccess(await t.patch(`/streams/${id}`, { message_retention_days: 'realm_default' }, 'owner'));
    const tp = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { topics_policy: 'allow_empty_topic' }, 'iago'))));
    expect(tp).toEqual([{ event: { type: 'stream', op: 'update', stream_id: id, name: 'settings-target', property: 'topics_policy', value: 'allow_empty_topic' }, userIds: nonGuests(t) }]);
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${id}`, { topics_policy: 'nope' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid topics_policy'));
    const folder = expectSuccess(await t.post('/channel_folders/create', { name: 'Admin folder', description: '' }, 'iago')).channel_folder_id;
    const f = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { folder_id: folder }, 'iago'))));
    expect(f).toEqual([{ event: { type: 'stream', op: 'update', stream_id: id, name: 'settings-target', property: 'folder_id', value: folder }, userIds: nonGuests(t) }]);
    expectSuccess(await t.patch(`/streams/${id}`, { folder_id: null }, 'iago'));
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${id}`, { folder_id: 4242 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel folder ID'));
    await expectNoChange(t, async () =>
      expectError(await t.patch(`/streams/${id}`, { is_default_stream: false }, 'hamlet'), 400, ...CANNOT),
    );
  });

  it('group settings: {new, old}; metadata-granting settings move users in and out of the audience', async () => {
    const id = await mkChannel(t, 'gs-channel', { invite_only: true, subscribers: [t.users.iago.id] });
    const mods = await group(t, 'role:moderators');
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { can_subscribe_group: { new: mods } }, 'iago'))));
    expect(d.map((x) => [x.event.type, x.event.op, x.event.property ?? null, x.userIds])).toEqual([
      ['stream', 'update', 'can_subscribe_group', ids(t, 'owner', 'iago')],
      ['stream', 'create', null, [t.users.shiva.id]],
    ]);
    await expectNoChange(t, async () =>
      expectError(await t.patch(`/streams/${id}`, { can_subscribe_group: { new: mods, old: await group(t, 'role:nobody') } }, 'iago'), 400, 'BAD_REQUEST', "'old' value does not match the expected value."),
    );
    // Unchanged value: nothing happens.
    await expectNoChange(t, async () => expectSuccess(await t.patch(`/streams/${id}`, { can_subscribe_group: { new: mods, old: mods } }, 'iago')));
    const back = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { can_subscribe_group: { new: await group(t, 'role:nobody') } }, 'iago'))));
    expect(back.map((x) => [x.event.type, x.event.op, x.userIds])).toEqual([
      ['stream', 'update', ids(t, 'owner', 'iago')],
      ['stream', 'delete', [t.users.shiva.id]],
    ]);
    // can_send_message_group also changes the legacy stream_post_policy.
    const admins = await group(t, 'role:administrators');
    const send = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { can_send_message_group: { new: admins } }, 'iago'))));
    expect(send.map((x) => [x.event.property, x.event.value])).toEqual([
      ['can_send_message_group', admins],
      ['stream_post_policy', 2],
      ['is_announcement_only', true],
    ]);
    await expectNoChange(t, async () =>
      expectError(await t.patch(`/streams/${id}`, { can_administer_channel_group: { new: await group(t, 'role:everyone') } }, 'iago'), 400, 'BAD_REQUEST', "'can_administer_channel_group' setting cannot be set to 'role:everyone' group."),
    );
    await expectNoChange(t, async () =>
      expectError(await t.patch(`/streams/${id}`, { can_create_topic_group: { new: mods } }, 'iago'), 400, 'BAD_REQUEST', 'Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group', { parameters: 'history_public_to_subscribers, can_create_topic_group' }),
    );
    // Settings needing content access: administrators without it are refused.
    const hidden = await mkChannel(t, 'gs-hidden', { invite_only: true });
    await expectNoChange(t, async () =>
      expectError(await t.patch(`/streams/${hidden}`, { can_resolve_topics_group: { new: mods } }, 'iago'), 400, 'BAD_REQUEST', 'Channel content access is required.'),
    );
    expectSuccess(await t.patch(`/streams/${hidden}`, { can_remove_subscribers_group: { new: mods } }, 'iago'));
  });
});

describe('archiving: DELETE /streams/{stream_id}, PATCH is_archived=false', () => {
  it('archives: is_archived update and delete (the queue picks by capability); stops being default and an announcement channel', async () => {
    const id = await mkChannel(t, 'to-archive', { subscribers: [t.users.hamlet.id] });
    expectSuccess(await t.patch(`/streams/${id}`, { is_default_stream: true }, 'iago'));
    expectSuccess(await t.patch('/realm', { new_stream_announcements_stream_id: id }, 'iago'));
    const otherDefaults = (expectSuccess(await t.get('/streams', { include_default: true }, 'iago')).streams as any[])
      .filter((s) => s.is_default && s.stream_id !== id)
      .map((s) => s.stream_id)
      .sort((a: number, b: number) => a - b);
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.delete(`/streams/${id}`, {}, 'iago'))));
    expect(d).toEqual([
      { event: { type: 'realm', op: 'update_dict', property: 'default', data: { new_stream_announcements_stream_id: -1 } }, userIds: [...nonGuests(t), t.users.polonius.id].sort((a, b) => a - b) },
      { event: { type: 'default_streams', default_streams: otherDefaults }, userIds: nonGuests(t) },
      { event: { type: 'stream', op: 'update', stream_id: id, name: 'to-archive', property: 'is_archived', value: true }, userIds: nonGuests(t) },
      { event: { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id], for_archiving: true }, userIds: nonGuests(t) },
    ]);
    // Subscriptions stay; the channel is gone from the lists.
        await expectNoChange(t, async () => expectError(await t.delete(`/streams/${id}`, {}, 'iago'), 400, 'BAD_REQUEST', 'Channel is already deactivated'));
    // Archived channels refuse subscription changes.
    await expectNoChange(t, async () =>
      expectError(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'to-archive' }] }, 'cordelia'), 400, 'BAD_REQUEST', 'Unable to access channel (to-archive).'),
    );
    const un = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/streams/${id}`, { is_archived: false }, 'iago'))));
    expect(un.map((x) => [x.event.type, x.event.op, x.event.for_unarchiving ?? null, x.userIds])).toEqual([
      ['stream', 'update', null, nonGuests(t)],
      ['stream', 'create', true, nonGuests(t)],
      // For clients without archived_channels, which dropped the channel (the queue filters it for the others).
      ['subscription', 'add', null, [t.users.hamlet.id]],
    ]);
    await expectNoChange(t, async () => expectError(await t.patch(`/streams/${id}`, { is_archived: false }, 'iago'), 400, 'BAD_REQUEST', 'Channel is not currently deactivated'));
  });

  it('permission matrix for archiving', async () => {
    for (const who of ['shiva', 'hamlet', 'bot', 'polonius'] as const) {
      const id = await mkChannel(t, `arch-${who}`, { subscribers: [t.users.polonius.id] });
      await expectNoChange(t, async () => expectError(await t.delete(`/streams/${id}`, {}, who), 400, ...CANNOT));
    }
    for (const who of ['owner', 'iago'] as const) {
      const id = await mkChannel(t, `arch-ok-${who}`);
      expectSuccess(await t.delete(`/streams/${id}`, {}, who));
    }
    const mine = await mkChannel(t, 'arch-mine', {}, 'hamlet');
    expectSuccess(await t.delete(`/streams/${mine}`, {}, 'hamlet'));
  });
});

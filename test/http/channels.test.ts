import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { everyone, expectNoChange, group, ids, mkChannel, nonGuests, plain, realmSetting } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const MEMBERS_ONLY = (t: TestServer) => ids(t, 'owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'bot');

describe('POST /channels/create', () => {
  it('creates a public channel: the full object, defaults, and the events', async () => {
    const everyoneGroup = await group(t, 'role:everyone');
    const nobody = await group(t, 'role:nobody');
    const admins = await group(t, 'role:administrators');
    let id = 0;
    const raw = await t.captureEvents(async () => {
      id = expectSuccess(
        await t.post('/channels/create', { name: '  design  ', description: 'All about\n**design**', subscribers: [t.users.hamlet.id, t.users.cordelia.id] }, 'hamlet'),
      ).id;
    });
    // Notification Bot's "channel events" message in the new channel comes last (Zulip's send_messages_for_new_subscribers).
    const note = raw.pop()!;
    const message = note.event.message as Record<string, unknown>;
    expect([note.userIds, message.sender_email, message.subject, note.event.__raw_content, note.event.__flags]).toEqual([
      ids(t, 'hamlet', 'cordelia'),
      'notification-bot@zulip.com',
      'channel events',
      `**Public** channel created by @_**King Hamlet|${t.users.hamlet.id}**. **Description:**\n\`\`\`\` quote\nAll about **design**\n\`\`\`\``,
      { [t.users.hamlet.id]: ['read'] },
    ]);
    const deliveries = plain(raw);
    const stream = expectSuccess(await t.get(`/streams/${id}`, {}, 'othello')).stream;
    const expected = {
      is_archived: false,
      can_add_subscribers_group: nobody,
      can_administer_channel_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [] },
      can_create_topic_group: everyoneGroup,
      can_delete_any_message_group: nobody,
      can_delete_own_message_group: nobody,
      can_move_messages_out_of_channel_group: nobody,
      can_move_messages_within_channel_group: nobody,
      can_remove_subscribers_group: admins,
      can_resolve_topics_group: nobody,
      can_send_message_group: everyoneGroup,
      can_subscribe_group: nobody,
      creator_id: t.users.hamlet.id,
      date_created: expect.any(Number),
      description: 'All about **design**',
      first_message_id: message.id,
      folder_id: null,
      is_recently_active: true,
      history_public_to_subscribers: true,
      invite_only: false,
      is_web_public: false,
      message_retention_days: null,
      name: 'design',
      rendered_description: '<p>All about <strong>design</strong></p>',
      stream_id: id,
      stream_post_policy: 1,
      is_announcement_only: false,
      stream_weekly_traffic: null,
      subscriber_count: 2,
      topics_policy: 'inherit',
    };
    expect(stream).toEqual(expected);
    const created = { ...expected, first_message_id: null, subscriber_count: 0, date_created: stream.date_created };
    const sub = (userId: number, color: string) => ({
      ...expected,
      first_message_id: null,
      date_created: stream.date_created,
      audible_notifications: null,
      color,
      desktop_notifications: null,
      email_notifications: null,
      in_home_view: true,
      is_muted: false,
      pin_to_top: false,
      push_notifications: null,
      wildcard_mentions_notify: null,
      subscribers: ids(t, 'hamlet', 'cordelia'),
    });
    expect(deliveries).toEqual([
      { event: { type: 'stream', op: 'create', streams: [created], for_unarchiving: false }, userIds: MEMBERS_ONLY(t) },
      { event: { type: 'subscription', op: 'add', subscriptions: [sub(t.users.hamlet.id, '#76ce90')] }, userIds: [t.users.hamlet.id] },
      { event: { type: 'subscription', op: 'add', subscriptions: [sub(t.users.cordelia.id, '#76ce90')] }, userIds: [t.users.cordelia.id] },
      {
        event: { type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: ids(t, 'hamlet', 'cordelia') },
        userIds: ids(t, 'owner', 'iago', 'shiva', 'othello', 'bot'),
      },
      // The channel's first message (Notification Bot's notice) sets first_message_id for everyone who sees it.
      { event: { type: 'stream', op: 'update', property: 'first_message_id', value: message.id, stream_id: id, name: 'design' }, userIds: MEMBERS_ONLY(t) },
    ]);
  });

  it('a private channel goes to administrators only; new subscribers get it before their subscription', async () => {
    let id = 0;
    const deliveries = plain(
      await t.captureEvents(async () => {
        id = expectSuccess(await t.post('/channels/create', { name: 'secret plans', invite_only: true, subscribers: [t.users.othello.id] }, 'hamlet')).id;
      }),
    );
    expect(deliveries.map((d) => [d.event.type, d.event.op, d.userIds])).toEqual([
      // Administrators, plus hamlet through can_administer_channel_group (the creator).
      ['stream', 'create', ids(t, 'owner', 'iago', 'hamlet')],
      ['stream', 'create', [t.users.othello.id]],
      ['subscription', 'add', [t.users.othello.id]],
      ['subscription', 'peer_add', ids(t, 'owner', 'iago', 'hamlet')],
      ['stream', 'update', ids(t, 'owner', 'iago', 'hamlet', 'othello')],
      ['message', undefined, [t.users.othello.id]],
    ]);
    expect(deliveries[5]!.event.message).toMatchObject({ sender_email: 'notification-bot@zulip.com', subject: 'channel events' });
    const s = expectSuccess(await t.get(`/streams/${id}`, {}, 'othello')).stream;
    expect(s.invite_only).toBe(true);
    expect(s.history_public_to_subscribers).toBe(false);
  });

  it('announce, folder, topics policy, retention (owner), default channel, group settings', async () => {
    const folder = expectSuccess(await t.post('/channel_folders/create', { name: 'Engineering', description: '' }, 'iago')).channel_folder_id;
    const mods = await group(t, 'role:moderators');
    const id = expectSuccess(
      await t.post(
        '/channels/create',
        {
          name: 'ops',
          subscribers: [],
          announce: true,
          folder_id: folder,
          topics_policy: 'disable_empty_topic',
          message_retention_days: 30,
          is_default_stream: true,
          can_send_message_group: mods,
          can_subscribe_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [mods] },
        },
        'owner',
      ),
    ).id;
    const s = expectSuccess(await t.get(`/streams/${id}`, {}, 'owner')).stream;
    expect(s).toMatchObject({
      folder_id: folder,
      topics_policy: 'disable_empty_topic',
      message_retention_days: 30,
      can_send_message_group: mods,
      stream_post_policy: 4,
      can_subscribe_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [mods] },
    });
    const listed = expectSuccess(await t.get('/streams', { include_default: true }, 'owner')).streams.find((x: any) => x.stream_id === id);
    expect(listed.is_default).toBe(true);
    const unlimited = await mkChannel(t, 'forever', { message_retention_days: 'unlimited' }, 'owner');
    expect(expectSuccess(await t.get(`/streams/${unlimited}`, {}, 'owner')).stream.message_retention_days).toBe(-1);
    const dflt = await mkChannel(t, 'realm default retention', { message_retention_days: 'realm_default' }, 'hamlet');
    expect(expectSuccess(await t.get(`/streams/${dflt}`, {}, 'owner')).stream.message_retention_days).toBe(null);
  });

  it('validation errors, each writing nothing', async () => {
    const cases: [Record<string, unknown>, number, string, string, Record<string, unknown>?][] = [
      [{ subscribers: [] }, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'name' argument", { var_name: 'name' }],
      [{ name: 'x' }, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'subscribers' argument", { var_name: 'subscribers' }],
      // Issue 18 regression: Zulip's check_stream_name wording, not a generic "cannot be blank".
      [{ name: '', subscribers: [] }, 400, 'BAD_REQUEST', "Channel name can't be empty."],
      [{ name: '   ', subscribers: [] }, 400, 'BAD_REQUEST', "Channel name can't be empty."],
      [{ name: 'a'.repeat(61), subscribers: [] }, 400, 'BAD_REQUEST', 'Channel name too long (limit: 60 characters).'],
      [{ name: 'bad\u0007name', subscribers: [] }, 400, 'BAD_REQUEST', 'Invalid character in channel name, at position 4.'],
      [{ name: 'x', subscribers: [], description: 'd'.repeat(1025) }, 400, 'BAD_REQUEST', 'description is too long (limit: 1024 characters)'],
      [{ name: 'x', subscribers: 'all' }, 400, 'BAD_REQUEST', 'subscribers is not valid JSON'],
      [{ name: 'x', subscribers: [424242] }, 400, 'BAD_REQUEST', 'Invalid user ID: 424242'],
      [{ name: 'x', subscribers: [], folder_id: 999 }, 400, 'BAD_REQUEST', 'Invalid channel folder ID'],
      [{ name: 'x', subscribers: [], message_retention_days: 0 }, 400, 'REQUEST_VARIABLE_INVALID', "Bad value for 'message_retention_days': 0"],
      [{ name: 'x', subscribers: [], message_retention_days: 'never' }, 400, 'REQUEST_VARIABLE_INVALID', "Bad value for 'message_retention_days': never"],
      [{ name: 'x', subscribers: [], message_retention_days: 10 }, 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner'],
      [{ name: 'x', subscribers: [], topics_policy: 'sometimes' }, 400, 'BAD_REQUEST', 'Invalid topics_policy'],
      [{ name: 'x', subscribers: [], invite_only: true, is_default_stream: true }, 400, 'BAD_REQUEST', 'A default channel cannot be private.'],
      [{ name: 'x', subscribers: [], is_web_public: true }, 400, 'BAD_REQUEST', 'Web-public channels are not enabled.'],
      [{ name: 'x', subscribers: [], invite_only: true, is_web_public: true }, 400, 'BAD_REQUEST', 'Invalid parameters'],
    ];
    for (const [params, status, code, msg, extra] of cases) {
      await expectNoChange(t, async () => expectError(await t.post('/channels/create', params, 'iago'), status, code, msg, extra));
    }
  });

  it('group settings are validated as Zulip does', async () => {
    const everyoneGroup = await group(t, 'role:everyone');
    const internet = await group(t, 'role:internet');
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ can_add_subscribers_group: everyoneGroup }, "'can_add_subscribers_group' setting cannot be set to 'role:everyone' group."],
      [{ can_administer_channel_group: everyoneGroup }, "'can_administer_channel_group' setting cannot be set to 'role:everyone' group."],
      [{ can_subscribe_group: { direct_members: [], direct_subgroups: [everyoneGroup] } }, "'can_subscribe_group' setting cannot be set to 'role:everyone' group."],
      [{ can_send_message_group: internet }, "'can_send_message_group' setting cannot be set to 'role:internet' group."],
      [{ can_send_message_group: 99999 }, 'Invalid user group'],
      [{ can_send_message_group: { direct_members: [424242], direct_subgroups: [] } }, 'Invalid user ID: 424242'],
      [{ can_send_message_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [99999] } }, 'Invalid user group ID: 99999'],
      [{ invite_only: true, can_create_topic_group: await group(t, 'role:members') }, 'Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group'],
      [{ can_send_message_group: 'abc' }, 'can_send_message_group is not valid JSON'],
    ];
    for (const [params, msg] of cases) {
      const extra = msg.startsWith('Unsupported') ? { parameters: 'history_public_to_subscribers, can_create_topic_group' } : {};
      await expectNoChange(t, async () => expectError(await t.post('/channels/create', { name: 'gs', subscribers: [], ...params }, 'iago'), 400, 'BAD_REQUEST', msg, extra));
    }
    // Members may not set the delete-message settings (can_set_delete_message_policy_group is moderators).
    await expectNoChange(t, async () =>
      expectError(await t.post('/channels/create', { name: 'gs', subscribers: [], can_delete_own_message_group: everyoneGroup }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission'),
    );
    expectSuccess(await t.post('/channels/create', { name: 'gs-mod', subscribers: [], can_delete_own_message_group: everyoneGroup }, 'shiva'));
    // A protected-history channel with can_create_topic_group everyone is fine.
    expectSuccess(await t.post('/channels/create', { name: 'gs-priv', subscribers: [], invite_only: true, can_create_topic_group: everyoneGroup }, 'hamlet'));
  });

  it('duplicate names: 409, details only for those who can see the channel', async () => {
    await mkChannel(t, 'taken', {}, 'iago');
    await mkChannel(t, 'hidden room', { invite_only: true }, 'iago');
    const archived = await mkChannel(t, 'old room', {}, 'iago');
    expectSuccess(await t.delete(`/streams/${archived}`, {}, 'iago'));
    await expectNoChange(t, async () => {
      expectError(await t.post('/channels/create', { name: 'TAKEN', subscribers: [] }, 'hamlet'), 409, 'CHANNEL_ALREADY_EXISTS', "Channel 'TAKEN' already exists.", {
        is_private: false,
        can_view_channel: true,
      });
      expectError(await t.post('/channels/create', { name: 'hidden room', subscribers: [] }, 'hamlet'), 409, 'CHANNEL_ALREADY_EXISTS', "Channel 'hidden room' already exists.", {
        is_private: false,
        can_view_channel: false,
      });
      expectError(await t.post('/channels/create', { name: 'hidden room', subscribers: [] }, 'iago'), 409, 'CHANNEL_ALREADY_EXISTS', "Channel 'hidden room' already exists.", {
        is_private: true,
        can_view_channel: true,
      });
      expectError(await t.post('/channels/create', { name: 'old room', subscribers: [] }, 'hamlet'), 409, 'CHANNEL_ALREADY_EXISTS', "Channel 'old room' already exists and is archived.", {
        is_private: false,
        can_view_channel: true,
      });
    });
  });

  it('permission matrix: public and private channels, from the realm settings', async () => {
    // Defaults: members create public and private channels; guests never.
    for (const who of ['owner', 'iago', 'shiva', 'hamlet', 'bot'] as const) {
      expectSuccess(await t.post('/channels/create', { name: `pub-${who}`, subscribers: [] }, who));
    }
    await expectNoChange(t, async () =>
      expectError(await t.post('/channels/create', { name: 'pub-guest', subscribers: [] }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users'),
    );
    await realmSetting(t, 'can_create_private_channel_group', 'role:administrators');
    await realmSetting(t, 'can_create_public_channel_group', 'role:moderators');
    for (const who of ['owner', 'iago'] as const) expectSuccess(await t.post('/channels/create', { name: `priv-${who}`, subscribers: [], invite_only: true }, who));
    for (const who of ['shiva', 'hamlet', 'bot'] as const) {
      await expectNoChange(t, async () =>
        expectError(await t.post('/channels/create', { name: `priv-${who}`, subscribers: [], invite_only: true }, who), 400, 'BAD_REQUEST', 'Insufficient permission'),
      );
    }
    expectSuccess(await t.post('/channels/create', { name: 'pub2-shiva', subscribers: [] }, 'shiva'));
    for (const who of ['hamlet', 'bot'] as const) {
      await expectNoChange(t, async () => expectError(await t.post('/channels/create', { name: `pub2-${who}`, subscribers: [] }, who), 400, 'BAD_REQUEST', 'Insufficient permission'));
    }
    // Default channels: administrators only.
    await expectNoChange(t, async () =>
      expectError(await t.post('/channels/create', { name: 'dflt', subscribers: [], is_default_stream: true }, 'shiva'), 400, 'BAD_REQUEST', 'Insufficient permission'),
    );
    // Web-public: the realm must enable spectator access; then owners only by default.
    await realmSetting(t, 'enable_spectator_access', true);
    await expectNoChange(t, async () =>
      expectError(await t.post('/channels/create', { name: 'web', subscribers: [], is_web_public: true }, 'iago'), 400, 'BAD_REQUEST', 'Insufficient permission'),
    );
    let webId = 0;
    const deliveries = plain(await t.captureEvents(async () => {
      webId = expectSuccess(await t.post('/channels/create', { name: 'web', subscribers: [], is_web_public: true }, 'owner')).id;
    }));
    // Web-public channels are visible to guests too (the creation, then the first message id of
    // Notification Bot's notice, which has no recipient in a channel without subscribers).
    expect(deliveries.map((d) => [d.event.type, d.event.op, d.userIds])).toEqual([
      ['stream', 'create', everyone(t)],
      ['stream', 'update', everyone(t)],
    ]);
    expect(expectSuccess(await t.get(`/streams/${webId}`, {}, 'polonius')).stream.is_web_public).toBe(true);
    await realmSetting(t, 'can_create_private_channel_group', 'role:members');
    await realmSetting(t, 'can_create_public_channel_group', 'role:members');
  });

  it('topics_policy other than inherit needs can_set_topics_policy_group', async () => {
    await realmSetting(t, 'can_set_topics_policy_group', 'role:administrators');
    await expectNoChange(t, async () =>
      expectError(await t.post('/channels/create', { name: 'tp', subscribers: [], topics_policy: 'empty_topic_only' }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission'),
    );
    expectSuccess(await t.post('/channels/create', { name: 'tp-inherit', subscribers: [], topics_policy: 'inherit' }, 'hamlet'));
    const id = expectSuccess(await t.post('/channels/create', { name: 'tp', subscribers: [], topics_policy: '"empty_topic_only"' }, 'iago')).id;
    expect(expectSuccess(await t.get(`/streams/${id}`, {}, 'iago')).stream.topics_policy).toBe('empty_topic_only');
    await realmSetting(t, 'can_set_topics_policy_group', 'role:members');
  });
});

describe('GET /streams, /streams/{id}, /get_stream_id, members', () => {
  let pub = 0;
  let priv = 0;
  let groupPriv = 0;
  let arch = 0;
  beforeAll(async () => {
    pub = await mkChannel(t, 'list-public', { subscribers: [t.users.polonius.id] }, 'iago');
    priv = await mkChannel(t, 'list-private', { invite_only: true, subscribers: [t.users.othello.id] }, 'iago');
    groupPriv = await mkChannel(t, 'list-group-private', { invite_only: true, can_subscribe_group: { direct_members: [t.users.cordelia.id, t.users.polonius.id], direct_subgroups: [] } }, 'iago');
    arch = await mkChannel(t, 'list-archived', {}, 'iago');
    expectSuccess(await t.delete(`/streams/${arch}`, {}, 'iago'));
  });

  const names = async (who: Parameters<TestServer['get']>[2], q: Record<string, unknown> = {}) =>
    (expectSuccess(await t.get('/streams', q, who)).streams as { name: string; stream_id: number }[])
      .map((s) => s.stream_id)
      .filter((id) => [pub, priv, groupPriv, arch].includes(id))
      .sort((a, b) => a - b);

  it('default flags: public + subscribed, archived excluded', async () => {
    expect(await names('hamlet')).toEqual([pub]);
    expect(await names('othello')).toEqual([pub, priv]);
    // Guests: subscribed channels only.
    expect(await names('polonius')).toEqual([pub]);
    expect(await names('polonius', { include_public: true, include_subscribed: false })).toEqual([]);
  });

  it('include_all: metadata access; admins see every channel; include_can_access_content', async () => {
    expect(await names('hamlet', { include_all: true })).toEqual([pub]);
    expect((await names('cordelia', { include_all: true }))).toEqual([pub, groupPriv].sort((a, b) => a - b));
    expect((await names('iago', { include_all: true }))).toEqual([pub, priv, groupPriv].sort((a, b) => a - b));
    expect((await names('iago', { include_all_active: true }))).toEqual([pub, priv, groupPriv].sort((a, b) => a - b));
    expect((await names('iago', { include_all: true, exclude_archived: false }))).toEqual([pub, priv, groupPriv, arch].sort((a, b) => a - b));
    // Group membership grants nothing to guests.
    expect(await names('polonius', { include_all: true })).toEqual([pub]);
    // Administrators do not get content access to private channels.
    expect(await names('iago', { include_can_access_content: true })).toEqual([pub]);
    expect((await names('cordelia', { include_can_access_content: true }))).toEqual([pub, groupPriv].sort((a, b) => a - b));
    expect(await names('hamlet', { include_public: false, include_subscribed: false })).toEqual([]);
  });

  it('include_owner_subscribed: a bot sees its owner\'s channels', async () => {
    const mine = await mkChannel(t, 'owner-private', { invite_only: true, subscribers: [t.users.hamlet.id] }, 'hamlet');
    expect(await names('bot', { include_public: false, include_owner_subscribed: true })).toEqual([]);
    const all = (expectSuccess(await t.get('/streams', { include_public: false, include_owner_subscribed: true }, 'bot')).streams as { stream_id: number }[]).map((s) => s.stream_id);
    expect(all).toContain(mine);
    const plainBot = (expectSuccess(await t.get('/streams', { include_public: false }, 'bot')).streams as { stream_id: number }[]).map((s) => s.stream_id);
    expect(plainBot).not.toContain(mine);
  });

  it('private channels stay invisible: same error as a missing channel', async () => {
    for (const url of [`/streams/${priv}`, `/streams/${priv}/members`, '/streams/999999', '/streams/999999/members']) {
      expectError(await t.get(url, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    }
    // Guests see only what they are subscribed to (or web-public).
    expectError(await t.get(`/streams/${groupPriv}`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expectSuccess(await t.get(`/streams/${pub}`, {}, 'polonius'));
    // Archived channels: "Invalid channel ID".
    expectError(await t.get(`/streams/${arch}`, {}, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    // Metadata access is enough for GET /streams/{id}: administrators and group members.
    expectSuccess(await t.get(`/streams/${priv}`, {}, 'iago'));
    expectSuccess(await t.get(`/streams/${groupPriv}`, {}, 'cordelia'));
  });

  it('GET /get_stream_id needs content access', async () => {
    expect(expectSuccess(await t.get('/get_stream_id', { stream: 'LIST-PUBLIC' }, 'hamlet')).stream_id).toBe(pub);
    expectError(await t.get('/get_stream_id', { stream: 'list-private' }, 'hamlet'), 400, 'BAD_REQUEST', "Invalid channel name 'list-private'");
    expectError(await t.get('/get_stream_id', { stream: 'list-private' }, 'iago'), 400, 'BAD_REQUEST', "Invalid channel name 'list-private'");
    expectError(await t.get('/get_stream_id', { stream: 'nope' }, 'iago'), 400, 'BAD_REQUEST', "Invalid channel name 'nope'");
    expect(expectSuccess(await t.get('/get_stream_id', { stream: 'list-private' }, 'othello')).stream_id).toBe(priv);
    expectError(await t.get('/get_stream_id', {}, 'othello'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'stream' argument", { var_name: 'stream' });
  });

  it('members', async () => {
    expect(expectSuccess(await t.get(`/streams/${priv}/members`, {}, 'iago')).subscribers).toEqual([t.users.othello.id]);
    expect(expectSuccess(await t.get(`/streams/${pub}/members`, {}, 'hamlet')).subscribers).toEqual([t.users.polonius.id]);
  });

  it('bad flags', async () => {
    expectError(await t.get('/streams', { include_all: 'yes' }, 'hamlet'), 400, 'BAD_REQUEST', 'include_all is not valid JSON');
  });
});

describe('read endpoints: permission matrix', () => {
  it('public and private channels, for owner, admin, moderator, member, guest and bot', async () => {
    const pub = await mkChannel(t, 'matrix-public', { subscribers: [t.users.hamlet.id] });
    const priv = await mkChannel(t, 'matrix-private', { invite_only: true, subscribers: [t.users.hamlet.id] });
    const invalid = (res: Awaited<ReturnType<TestServer['get']>>) => expectError(res, 400, 'BAD_REQUEST', 'Invalid channel ID');
    const table: [string, { pub: boolean; privMeta: boolean; privContent: boolean }][] = [
      ['owner', { pub: true, privMeta: true, privContent: false }],
      ['iago', { pub: true, privMeta: true, privContent: false }],
      ['shiva', { pub: true, privMeta: false, privContent: false }],
      ['hamlet', { pub: true, privMeta: true, privContent: true }],
      ['polonius', { pub: false, privMeta: false, privContent: false }],
      ['bot', { pub: true, privMeta: false, privContent: false }],
    ];
    for (const [who, can] of table) {
      const as = who as Parameters<TestServer['get']>[2];
      for (const url of [`/streams/${pub}`, `/streams/${pub}/members`, `/users/${t.users.hamlet.id}/subscriptions/${pub}`]) {
        if (can.pub) expectSuccess(await t.get(url, {}, as));
        else invalid(await t.get(url, {}, as));
      }
      for (const url of [`/streams/${priv}`, `/streams/${priv}/members`, `/users/${t.users.hamlet.id}/subscriptions/${priv}`]) {
        if (can.privMeta) expectSuccess(await t.get(url, {}, as));
        else invalid(await t.get(url, {}, as));
      }
      const byName = await t.get('/get_stream_id', { stream: 'matrix-private' }, as);
      if (can.privContent) expect(expectSuccess(byName).stream_id).toBe(priv);
      else expectError(byName, 400, 'BAD_REQUEST', "Invalid channel name 'matrix-private'");
      const byNamePub = await t.get('/get_stream_id', { stream: 'matrix-public' }, as);
      if (can.pub) expectSuccess(byNamePub);
      else expectError(byNamePub, 400, 'BAD_REQUEST', "Invalid channel name 'matrix-public'");
      expectSuccess(await t.get('/users/me/subscriptions', {}, as));
      const listed = (expectSuccess(await t.get('/streams', { include_all: true }, as)).streams as { stream_id: number }[]).map((s) => s.stream_id);
      expect(listed.includes(pub)).toBe(can.pub);
      expect(listed.includes(priv)).toBe(can.privMeta);
      // Personal settings need a subscription (and visibility first).
      const prop = await t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: pub, property: 'pin_to_top', value: true }] }, as);
      if (who === 'hamlet') expectSuccess(prop);
      else if (!can.pub) invalid(prop);
      else expectError(prop, 400, 'BAD_REQUEST', `Not subscribed to channel ID ${pub}`);
    }
  });
});

describe('bad input is never a 500', () => {
  it('ids beyond any column, odd JSON', async () => {
    const huge = 999999999999999;
    const id = await mkChannel(t, 'robust', { subscribers: [t.users.hamlet.id] });
    await expectNoChange(t, async () => {
      expectError(await t.get(`/streams/${huge}`, {}, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID');
      expectError(await t.patch(`/streams/${huge}`, { description: 'x' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel ID');
      expectError(await t.post('/channels/create', { name: 'r2', subscribers: [huge] }, 'iago'), 400, 'BAD_REQUEST', `Invalid user ID: ${huge}`);
      expectError(await t.post('/channels/create', { name: 'r2', subscribers: [], can_send_message_group: huge }, 'iago'), 400, 'BAD_REQUEST', 'Invalid user group');
      expectError(await t.post('/channels/create', { name: 'r2', subscribers: [], folder_id: huge }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel folder ID');
      expectError(await t.patch(`/streams/${id}`, { can_send_message_group: { new: { direct_members: [huge], direct_subgroups: [] } } }, 'iago'), 400, 'BAD_REQUEST', `Invalid user ID: ${huge}`);
      expectError(await t.post('/user_topics', { stream_id: huge, topic: 'x', visibility_policy: 1 }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
      expectError(await t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: huge, property: 'pin_to_top', value: true }] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
      expectError(await t.patch(`/channel_folders/${huge}`, { name: 'x' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel folder ID');
      expectError(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 5 }] }, 'hamlet'), 400, 'BAD_REQUEST', 'subscriptions[0]["name"] is not a string');
      expectError(await t.patch(`/streams/${id}`, { can_send_message_group: { old: 1 } }, 'iago'), 400, 'BAD_REQUEST', 'Invalid can_send_message_group["new"]');
      expectError(await t.get(`/users/${huge}/subscriptions/${id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    });
  });
});

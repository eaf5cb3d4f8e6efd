import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectNoChange, group, ids, mkChannel, plain, realmSetting } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const subNames = async (who: Parameters<TestServer['get']>[2]) =>
  (expectSuccess(await t.get('/users/me/subscriptions', {}, who)).subscriptions as { name: string }[]).map((s) => s.name);

describe('POST /users/me/subscriptions', () => {
  it('subscribes oneself; events: subscription add, then peer_add to everyone else who sees it', async () => {
    const id = await mkChannel(t, 'sub-public', { subscribers: [t.users.othello.id] });
    const deliveries = plain(
      await t.captureEvents(async () => {
        const body = expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-public' }] }, 'hamlet'));
        expect(body).toEqual({ result: 'success', msg: '', subscribed: { [t.users.hamlet.id]: ['sub-public'] }, already_subscribed: {}, new_subscription_messages_sent: true });
      }),
    );
    expect(deliveries.map((d) => [d.event.type, d.event.op, d.userIds])).toEqual([
      ['subscription', 'add', [t.users.hamlet.id]],
      ['subscription', 'peer_add', ids(t, 'owner', 'iago', 'shiva', 'cordelia', 'othello', 'bot')],
    ]);
    expect(deliveries[1]!.event).toEqual({ type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: [t.users.hamlet.id] });
    const sub = (deliveries[0]!.event.subscriptions as any[])[0];
    expect(sub.subscribers).toEqual(ids(t, 'hamlet', 'othello'));
    expect(sub.subscriber_count).toBe(2);
    // Again: already subscribed, no event.
    const again = await t.captureEvents(async () => {
      const body = expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-public' }] }, 'hamlet'));
      expect(body.already_subscribed).toEqual({ [t.users.hamlet.id]: ['sub-public'] });
      expect(body.subscribed).toEqual({});
    });
    expect(again).toEqual([]);
  });

  it('creates channels that do not exist, with the request settings and colours', async () => {
    const body = expectSuccess(
      await t.post('/users/me/subscriptions', { subscriptions: [{ name: ' brand new ', description: 'A\nB', color: '#abcdef' }], invite_only: true }, 'hamlet'),
    );
    expect(body.subscribed).toEqual({ [t.users.hamlet.id]: ['brand new'] });
    const subs = expectSuccess(await t.get('/users/me/subscriptions', {}, 'hamlet')).subscriptions;
    const s = subs.find((x: any) => x.name === 'brand new');
    expect(s).toMatchObject({ invite_only: true, description: 'A B', color: '#abcdef', history_public_to_subscribers: false });
  });

  it('subscribing others: principals by id or email; permission from the realm and channel settings', async () => {
    const id = await mkChannel(t, 'sub-others', {});
    const body = expectSuccess(
      await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-others' }], principals: [t.users.cordelia.id, t.users.polonius.id] }, 'hamlet'),
    );
    expect(body.subscribed).toEqual({ [t.users.cordelia.id]: ['sub-others'], [t.users.polonius.id]: ['sub-others'] });
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-others' }], principals: ['othello@zulip.com'] }, 'hamlet'));
    expect(expectSuccess(await t.get(`/streams/${id}/members`, {}, 'iago')).subscribers).toEqual(ids(t, 'cordelia', 'othello', 'polonius'));
    // Restrict the realm permission to administrators: members need a channel permission now.
    await realmSetting(t, 'can_add_subscribers_group', 'role:administrators');
    await expectNoChange(t, async () =>
      expectError(
        await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-others' }], principals: [t.users.shiva.id] }, 'hamlet'),
        400,
        'BAD_REQUEST',
        'Insufficient permission',
      ),
    );
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-others' }], principals: [t.users.shiva.id] }, 'iago'));
    // The channel's own can_add_subscribers_group lets hamlet in again.
    expectSuccess(await t.patch(`/streams/${id}`, { can_add_subscribers_group: { new: { direct_members: [t.users.hamlet.id], direct_subgroups: [] } } }, 'iago'));
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-others' }], principals: [t.users.owner.id] }, 'hamlet'));
    await realmSetting(t, 'can_add_subscribers_group', 'role:members');
  });

  it('private channels: "Unable to access channel" unless the user has content access; non-fatal mode', async () => {
    await mkChannel(t, 'sub-private', { invite_only: true, subscribers: [t.users.othello.id] });
    for (const who of ['hamlet', 'iago', 'shiva'] as const) {
      await expectNoChange(t, async () =>
        expectError(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-private' }] }, who), 400, 'BAD_REQUEST', 'Unable to access channel (sub-private).'),
      );
    }
    const body = expectSuccess(
      await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-private' }, { name: 'sub-public' }], authorization_errors_fatal: false }, 'cordelia'),
    );
    expect(body).toEqual({
      result: 'success',
      msg: '',
      subscribed: { [t.users.cordelia.id]: ['sub-public'] },
      already_subscribed: {},
      new_subscription_messages_sent: true,
      unauthorized: ['sub-private'],
    });
    // A subscriber may add others.
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-private' }], principals: [t.users.hamlet.id] }, 'othello'));
    expect(await subNames('hamlet')).toContain('sub-private');
  });

  it('a private channel\'s can_subscribe_group lets members join; a create event precedes the subscription', async () => {
    const id = await mkChannel(t, 'sub-joinable', { invite_only: true, can_subscribe_group: { direct_members: [t.users.cordelia.id], direct_subgroups: [] } });
    const deliveries = plain(await t.captureEvents(async () => expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-joinable' }] }, 'cordelia'))));
    // Cordelia already had metadata access through the group: no create event.
    expect(deliveries.map((d) => [d.event.type, d.event.op, d.userIds])).toEqual([
      ['subscription', 'add', [t.users.cordelia.id]],
      ['subscription', 'peer_add', ids(t, 'owner', 'iago')],
    ]);
    const added = plain(await t.captureEvents(async () => expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-joinable' }], principals: [t.users.hamlet.id] }, 'cordelia'))));
    expect(added.map((d) => [d.event.type, d.event.op, d.userIds])).toEqual([
      ['stream', 'create', [t.users.hamlet.id]],
      ['subscription', 'add', [t.users.hamlet.id]],
      ['subscription', 'peer_add', ids(t, 'owner', 'iago', 'cordelia')],
      // Notification Bot tells Hamlet (a direct message: Hamlet and the bot).
      ['message', undefined, [t.users.hamlet.id, t.users.bot.id + 1].sort((a, b) => a - b)],
    ]);
    const dm = added[3]!.event.message as Record<string, unknown>;
    expect([dm.sender_email, dm.content, dm.type]).toEqual([
      'notification-bot@zulip.com',
      `<p><span class="user-mention silent" data-user-id="${t.users.cordelia.id}">Cordelia, Lear's daughter</span> subscribed you to <a class="stream" data-stream-id="${id}" href="/#narrow/channel/${id}-sub-joinable">#sub-joinable</a>.</p>`,
      'private',
    ]);
    expect(expectSuccess(await t.get(`/streams/${id}/members`, {}, 'hamlet')).subscribers).toEqual(ids(t, 'hamlet', 'cordelia'));
  });

  it('permission matrix: guests refused before anything; every other role may subscribe itself', async () => {
    await mkChannel(t, 'sub-matrix');
    await expectNoChange(t, async () =>
      expectError(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-matrix' }] }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users'),
    );
    for (const who of ['owner', 'iago', 'shiva', 'hamlet', 'bot'] as const) {
      expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-matrix' }] }, who));
    }
  });

  it('errors', async () => {
    const cases: [Record<string, unknown>, number, string, string, Record<string, unknown>?][] = [
      [{}, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'subscriptions' argument", { var_name: 'subscriptions' }],
      [{ subscriptions: ['x'] }, 400, 'BAD_REQUEST', 'subscriptions[0] is not a dict'],
      [{ subscriptions: [{}] }, 400, 'BAD_REQUEST', 'subscriptions[0]["name"] field is missing'],
      [{ subscriptions: [{ name: '' }] }, 400, 'BAD_REQUEST', "Channel name can't be empty."],
      [{ subscriptions: [{ name: '  ' }] }, 400, 'BAD_REQUEST', "Channel name can't be empty."],
      [{ subscriptions: [{ name: 'x'.repeat(61) }] }, 400, 'BAD_REQUEST', 'Channel name too long (limit: 60 characters).'],
      [{ subscriptions: [{ name: 'ok', color: 'red' }] }, 400, 'BAD_REQUEST', 'Invalid subscriptions[0]: Value error, add.color is not a valid hex color code'],
      [{ subscriptions: [{ name: 'sub-matrix' }], principals: [424242] }, 400, 'BAD_REQUEST', 'Invalid user ID: 424242'],
      [{ subscriptions: [{ name: 'sub-matrix' }], principals: ['nobody@zulip.com'] }, 400, 'BAD_REQUEST', 'No such user'],
      [{ subscriptions: [{ name: 'new-x' }], invite_only: true, is_default_stream: true }, 400, 'BAD_REQUEST', 'Insufficient permission'],
      [{ subscriptions: [{ name: 'new-x' }], folder_id: 12345 }, 400, 'BAD_REQUEST', 'Invalid channel folder ID'],
    ];
    for (const [params, status, code, msg, extra] of cases) {
      await expectNoChange(t, async () => expectError(await t.post('/users/me/subscriptions', params, 'hamlet'), status, code, msg, extra));
    }
  });
});

describe('DELETE /users/me/subscriptions', () => {
  it('unsubscribes oneself: peer_remove, then subscription remove; not_removed when not subscribed', async () => {
    const id = await mkChannel(t, 'unsub-public', { subscribers: [t.users.hamlet.id, t.users.othello.id] });
    const deliveries = plain(
      await t.captureEvents(async () => {
        const body = expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-public'] }, 'hamlet'));
        expect(body).toEqual({ result: 'success', msg: '', removed: ['unsub-public'], not_removed: [] });
      }),
    );
    expect(deliveries).toEqual([
      { event: { type: 'subscription', op: 'peer_remove', stream_ids: [id], user_ids: [t.users.hamlet.id] }, userIds: ids(t, 'owner', 'iago', 'shiva', 'cordelia', 'othello', 'bot') },
      { event: { type: 'subscription', op: 'remove', subscriptions: [{ name: 'unsub-public', stream_id: id }] }, userIds: [t.users.hamlet.id] },
    ]);
    const none = await t.captureEvents(async () =>
      expect(expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-public'] }, 'hamlet')).not_removed).toEqual(['unsub-public']),
    );
    expect(none).toEqual([]);
  });

  it('leaving a private channel: the user no longer sees it (stream delete)', async () => {
    const id = await mkChannel(t, 'unsub-private', { invite_only: true, subscribers: [t.users.hamlet.id, t.users.othello.id] });
    const deliveries = plain(await t.captureEvents(async () => expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-private'] }, 'hamlet'))));
    expect(deliveries).toEqual([
      { event: { type: 'subscription', op: 'peer_remove', stream_ids: [id], user_ids: [t.users.hamlet.id] }, userIds: ids(t, 'owner', 'iago', 'othello') },
      { event: { type: 'subscription', op: 'remove', subscriptions: [{ name: 'unsub-private', stream_id: id }] }, userIds: [t.users.hamlet.id] },
      { event: { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id], for_archiving: false }, userIds: [t.users.hamlet.id] },
    ]);
    // Now it is as if it did not exist.
    expectError(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-private'] }, 'hamlet'), 400, 'BAD_REQUEST', 'Channel(s) (unsub-private) do not exist');
  });

  it('removing others: realm administrators, channel administrators, and own bots', async () => {
    await mkChannel(t, 'unsub-others', { subscribers: [t.users.cordelia.id, t.users.othello.id, t.users.bot.id, t.users.shiva.id] });
    for (const who of ['hamlet', 'shiva'] as const) {
      await expectNoChange(t, async () =>
        expectError(
          await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-others'], principals: [t.users.cordelia.id] }, who),
          400,
          'BAD_REQUEST',
          'Insufficient permission',
        ),
      );
    }
    // Hamlet owns the bot: that is not "others".
    expect(expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-others'], principals: [t.users.bot.id] }, 'hamlet')).removed).toEqual(['unsub-others']);
    expect(expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-others'], principals: [t.users.cordelia.id] }, 'iago')).removed).toEqual(['unsub-others']);
    expect(expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-others'], principals: ['othello@zulip.com'] }, 'owner')).removed).toEqual(['unsub-others']);
    // A channel administrator (the creator by default) may remove others too.
    await mkChannel(t, 'unsub-mine', { subscribers: [t.users.cordelia.id] }, 'hamlet');
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-mine'], principals: [t.users.cordelia.id] }, 'hamlet'));
    // Guests may leave channels.
    await mkChannel(t, 'unsub-guest', { subscribers: [t.users.polonius.id] });
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-guest'] }, 'polonius'))));
    // A guest who leaves a public channel stops seeing it.
    expect(d.map((x) => [x.event.type, x.event.op, x.userIds])).toEqual([
      ['subscription', 'peer_remove', ids(t, 'owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'bot')],
      ['subscription', 'remove', [t.users.polonius.id]],
      ['stream', 'delete', [t.users.polonius.id]],
    ]);
  });

  it('errors', async () => {
    await expectNoChange(t, async () => {
      expectError(await t.delete('/users/me/subscriptions', { subscriptions: ['nope', 'nada'] }, 'hamlet'), 400, 'BAD_REQUEST', 'Channel(s) (nope, nada) do not exist');
      expectError(await t.delete('/users/me/subscriptions', {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'subscriptions' argument", { var_name: 'subscriptions' });
      expectError(await t.delete('/users/me/subscriptions', { subscriptions: ['unsub-others'], principals: [999] }, 'iago'), 400, 'BAD_REQUEST', 'Invalid user ID: 999');
      expectError(await t.patch('/users/me/subscriptions', {}, 'hamlet'), 400, 'BAD_REQUEST', 'Nothing to do. Specify at least one of "add" or "delete".');
    });
  });

  it('PATCH /users/me/subscriptions adds and removes in one request', async () => {
    await mkChannel(t, 'bulk-a', { subscribers: [t.users.cordelia.id] });
    await mkChannel(t, 'bulk-b');
    const body = expectSuccess(await t.patch('/users/me/subscriptions', { add: [{ name: 'bulk-b' }], delete: ['bulk-a'] }, 'cordelia'));
    expect(body).toMatchObject({ subscribed: { [t.users.cordelia.id]: ['bulk-b'] }, removed: ['bulk-a'], not_removed: [] });
  });
});

describe('GET /users/me/subscriptions and subscription status', () => {
  it('lists active subscriptions by name; include_subscribers', async () => {
    const u = await t.createUser({ email: 'lister@zulip.com', fullName: 'Lister' });
    await mkChannel(t, 'zz-list', { subscribers: [u.id, t.users.othello.id] });
    await mkChannel(t, 'aa-list', { subscribers: [u.id] });
    const plainList = expectSuccess(await t.get('/users/me/subscriptions', {}, u)).subscriptions;
    expect(plainList.map((s: any) => s.name)).toEqual(['aa-list', 'zz-list']);
    expect(plainList[0]).not.toHaveProperty('subscribers');
    const full = expectSuccess(await t.get('/users/me/subscriptions', { include_subscribers: 'true' }, u)).subscriptions;
    expect(full[1].subscribers).toEqual([t.users.othello.id, u.id].sort((a, b) => a - b));
    expectError(await t.get('/users/me/subscriptions', { include_subscribers: 'maybe' }, u), 400, 'BAD_REQUEST', 'Invalid include_subscribers');
  });

  it('is_subscribed for oneself and others; invisible channels are "Invalid channel ID"', async () => {
    const pub = await mkChannel(t, 'status-pub', { subscribers: [t.users.othello.id] });
    const priv = await mkChannel(t, 'status-priv', { invite_only: true, subscribers: [t.users.othello.id] });
    expect(expectSuccess(await t.get(`/users/${t.users.othello.id}/subscriptions/${pub}`, {}, 'hamlet')).is_subscribed).toBe(true);
    expect(expectSuccess(await t.get(`/users/me/subscriptions/${pub}`, {}, 'hamlet')).is_subscribed).toBe(false);
    expectError(await t.get(`/users/${t.users.othello.id}/subscriptions/${priv}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expectError(await t.get(`/users/me/subscriptions/${priv}`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    expect(expectSuccess(await t.get(`/users/${t.users.othello.id}/subscriptions/${priv}`, {}, 'iago')).is_subscribed).toBe(true);
    expectError(await t.get(`/users/424242/subscriptions/${pub}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    // Zulip's access_user_by_id defaults: bots are "No such user", deactivated users "User is deactivated".
    expectError(await t.get(`/users/${t.users.bot.id}/subscriptions/${pub}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    const gone = await t.createUser({ email: 'status-gone@zulip.com', fullName: 'Status Gone' });
    expectSuccess(await t.delete(`/users/${gone.id}`, {}, 'owner'));
    expectError(await t.get(`/users/${gone.id}/subscriptions/${pub}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'User is deactivated');
    // One's own status by id works for anyone, bots included.
    expect(expectSuccess(await t.get(`/users/${t.users.bot.id}/subscriptions/${pub}`, {}, 'bot')).is_subscribed).toBe(false);
  });
});

describe('GET /users/{user_id}/channels', () => {
  it("lists the user's channels the caller may know about; archived and left channels are out", async () => {
    const { othello } = t.users;
    const pub = await mkChannel(t, 'uc-pub', { subscribers: [othello.id] });
    const priv = await mkChannel(t, 'uc-priv', { invite_only: true, subscribers: [othello.id] });
    const left = await mkChannel(t, 'uc-left', { subscribers: [othello.id] });
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['uc-left'] }, 'othello'));
    const gone = await mkChannel(t, 'uc-gone', { subscribers: [othello.id] });
    expectSuccess(await t.delete(`/streams/${gone}`, {}, 'iago'));
    const own = (expectSuccess(await t.get('/users/me/subscriptions', {}, 'othello')).subscriptions as { stream_id: number }[]).map((s) => s.stream_id).sort((a, b) => a - b);
    expect(own).toContain(pub);
    expect(own).toContain(priv);
    expect(own).not.toContain(left);
    expect(own).not.toContain(gone);
    const body = expectSuccess(await t.get(`/users/${othello.id}/channels`, {}, 'iago'));
    expect(body).toEqual({ result: 'success', msg: '', subscribed_channel_ids: own });
    expect(expectSuccess(await t.get(`/users/${othello.id}/channels`, {}, 'othello')).subscribed_channel_ids).toEqual(own);
    // Hamlet is not in the private channel: it is left out.
    const forHamlet = expectSuccess(await t.get(`/users/${othello.id}/channels`, {}, 'hamlet')).subscribed_channel_ids as number[];
    expect(forHamlet).toContain(pub);
    expect(forHamlet).not.toContain(priv);
    // Exactly those of Othello's channels that Hamlet's channel list shows (public ones, and private ones he is in).
    const hamletSees = new Set((expectSuccess(await t.get('/streams', {}, 'hamlet')).streams as { stream_id: number }[]).map((c) => c.stream_id));
    expect(forHamlet).toEqual(own.filter((id) => hamletSees.has(id)));
    expectError(await t.get('/users/424242/channels', {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    // The same answers by /users/{id}/subscriptions.
    expect(expectSuccess(await t.get(`/users/${othello.id}/subscriptions`, {}, 'hamlet'))).toEqual({ result: 'success', msg: '', subscribed_channel_ids: forHamlet });
    expectError(await t.get('/users/424242/subscriptions', {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.get('/users/abc/channels', {}, 'hamlet'), 404, 'BAD_REQUEST', 'Not Found');
  });
});

describe('subscription properties', () => {
  it('changes color, pin_to_top, is_muted (with the legacy in_home_view event) and notification settings', async () => {
    const id = await mkChannel(t, 'props', { subscribers: [t.users.hamlet.id] });
    const deliveries = plain(
      await t.captureEvents(async () =>
        expectSuccess(
          await t.post(
            '/users/me/subscriptions/properties',
            {
              subscription_data: [
                { stream_id: id, property: 'color', value: '#123456' },
                { stream_id: id, property: 'is_muted', value: true },
                { stream_id: id, property: 'desktop_notifications', value: false },
              ],
            },
            'hamlet',
          ),
        ),
      ),
    );
    expect(deliveries).toEqual([
      { event: { type: 'subscription', op: 'update', property: 'color', value: '#123456', stream_id: id }, userIds: [t.users.hamlet.id] },
      { event: { type: 'subscription', op: 'update', property: 'in_home_view', value: false, stream_id: id }, userIds: [t.users.hamlet.id] },
      { event: { type: 'subscription', op: 'update', property: 'is_muted', value: true, stream_id: id }, userIds: [t.users.hamlet.id] },
      { event: { type: 'subscription', op: 'update', property: 'desktop_notifications', value: false, stream_id: id }, userIds: [t.users.hamlet.id] },
    ]);
    expectSuccess(await t.patch(`/users/me/subscriptions/${id}`, { property: 'in_home_view', value: 'true' }, 'hamlet'));
    expectSuccess(await t.patch(`/users/me/subscriptions/${id}`, { property: 'pin_to_top', value: true }, 'hamlet'));
    const s = expectSuccess(await t.get('/users/me/subscriptions', {}, 'hamlet')).subscriptions.find((x: any) => x.stream_id === id);
    expect(s).toMatchObject({ color: '#123456', is_muted: false, in_home_view: true, desktop_notifications: false, pin_to_top: true });
  });

  it('errors change nothing', async () => {
    const id = await mkChannel(t, 'props-err', { subscribers: [t.users.hamlet.id] });
    const priv = await mkChannel(t, 'props-priv', { invite_only: true });
    const other = await mkChannel(t, 'props-other');
    const cases: [unknown[], string][] = [
      [[{ stream_id: id, property: 'volume', value: true }], 'Unknown subscription property: volume'],
      [[{ stream_id: id, property: 'is_muted', value: 'yes' }], 'is_muted is not a boolean'],
      [[{ stream_id: id, property: 'color', value: 'blue' }], 'Invalid subscription_data[0]: Value error, color is not a valid hex color code'],
      [[{ stream_id: priv, property: 'pin_to_top', value: true }], 'Invalid channel ID'],
      [[{ stream_id: other, property: 'pin_to_top', value: true }], `Not subscribed to channel ID ${other}`],
      [[{ stream_id: id, property: 'pin_to_top', value: true }, { stream_id: 99999, property: 'pin_to_top', value: true }], 'Invalid channel ID'],
    ];
    for (const [data, msg] of cases) {
      await expectNoChange(t, async () => expectError(await t.post('/users/me/subscriptions/properties', { subscription_data: data }, 'hamlet'), 400, 'BAD_REQUEST', msg));
    }
    await expectNoChange(t, async () =>
      expectError(await t.post('/users/me/subscriptions/properties', {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'subscription_data' argument", { var_name: 'subscription_data' }),
    );
    void group;
  });
});

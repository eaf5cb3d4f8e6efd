import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { systemGroupId } from '../../src/domain/rules/group-settings.js';
import { doCreateChannel } from '../../src/domain/actions/channels.js';
import { doSubscribe } from '../../src/domain/actions/subscriptions.js';
import { realmBotsModule } from '../../src/state/profiles.js';
import { usersModule } from '../../src/state/users.js';
import { activeUserIds } from '../../src/store/users.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { expectError, expectSuccess, startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const active = async () => (await activeUserIds(t.app.ctx.db, t.realmId)).sort((a, b) => a - b);
/** Recipients of a delivery, sorted (emitters need not sort them). */
const rcpt = (d: { userIds: readonly number[] }) => [...d.userIds].sort((a, b) => a - b);
/** Owner (desdemona) and iago are the human administrators. */
const ownerAndAdmins = (ownerId: number) => [...new Set([t.users.owner.id, t.users.iago.id, ownerId])].sort((a, b) => a - b);

async function makeBot(owner: TestUser | 'hamlet' | 'cordelia' | 'othello', short: string, fullName: string, extra: Record<string, unknown> = {}) {
  const body = expectSuccess(await t.post('/bots', { full_name: fullName, short_name: short, ...extra }, owner));
  return { id: body.user_id as number, apiKey: body.api_key as string, email: `${short}-bot@zulip.testserver` };
}

async function setRealmGroupSetting(setting: string, groupName: string): Promise<() => Promise<void>> {
  const realm = await t.app.ctx.db.selectFrom('realms').select('settings').where('id', '=', t.realmId).executeTakeFirstOrThrow();
  const group = await t.app.ctx.db.selectFrom('user_groups').select('id').where('name', '=', groupName).executeTakeFirstOrThrow();
  await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ ...JSON.parse(realm.settings), [setting]: group.id }) }).where('id', '=', t.realmId).execute();
  return async () => {
    await t.app.ctx.db.updateTable('realms').set({ settings: realm.settings }).where('id', '=', t.realmId).execute();
  };
}

describe('POST /bots', () => {
  it('sends realm_bot add (after realm_user add) to the owner and the admins', async () => {
    let id = 0;
    const events = await t.captureEvents(async () => {
      id = (await makeBot('cordelia', 'adder', 'Adder Bot')).id;
    });
    const row = await t.row(id);
    const add = events.find((e) => e.event.type === 'realm_bot')!;
    expect(events[0]!.event.type).toBe('realm_user');
    expect(add.event).toEqual({
      type: 'realm_bot',
      op: 'add',
      bot: {
        email: 'adder-bot@zulip.testserver',
        user_id: id,
        full_name: 'Adder Bot',
        bot_type: 1,
        is_active: true,
        api_key: row.api_key,
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
        owner_id: t.users.cordelia.id,
        avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/),
        services: [],
      },
    });
    expect(rcpt(add)).toEqual(ownerAndAdmins(t.users.cordelia.id));
  });

  it('bot types and can_create_bots_group / can_create_write_only_bots_group', async () => {
    expectError(await t.post('/bots', { full_name: 'Embedded', short_name: 'embedded', bot_type: 4 }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid bot type');
    expectSuccess(await t.post('/bots', { full_name: 'Hook', short_name: 'hook', bot_type: 2 }, 'hamlet'));
    const restoreBots = await setRealmGroupSetting('can_create_bots_group', 'role:administrators');
    try {
      expectError(await t.post('/bots', { full_name: 'Generic Two', short_name: 'generic2' }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
      // Members may still create incoming webhooks (can_create_write_only_bots_group is role:members).
      expectSuccess(await t.post('/bots', { full_name: 'Hook Two', short_name: 'hook2', bot_type: 2 }, 'hamlet'));
      expectSuccess(await t.post('/bots', { full_name: 'Admin Generic', short_name: 'admingeneric' }, 'iago'));
      const restoreWriteOnly = await setRealmGroupSetting('can_create_write_only_bots_group', 'role:administrators');
      try {
        expectError(await t.post('/bots', { full_name: 'Hook Three', short_name: 'hook3', bot_type: 2 }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
      } finally {
        await restoreWriteOnly();
      }
    } finally {
      await restoreBots();
    }
    expect(await t.app.ctx.db.selectFrom('users').select('id').where('email_lower', 'in', ['generic2-bot@zulip.testserver', 'hook3-bot@zulip.testserver']).execute()).toEqual([]);
  });

  it('guests and bots are refused', async () => {
    expectError(await t.post('/bots', { full_name: 'G Bot', short_name: 'gbot' }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    expectError(await t.post('/bots', { full_name: 'B Bot', short_name: 'bbot' }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    expectError(await t.get('/bots', {}, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
  });

  it('an avatar may come with the bot; a bad image creates no bot', async () => {
    const bad = await multipartRequest(t, 'POST', '/bots', [{ filename: 'a.png', contentType: 'image/png', data: Buffer.from('nope') }], { full_name: 'Pic Bot', short_name: 'picbot' }, 'hamlet');
    expectError(bad, 400, 'BAD_IMAGE', 'Could not decode image; did you upload an image file?');
    expect(await t.app.ctx.db.selectFrom('users').select('id').where('email_lower', '=', 'picbot-bot@zulip.testserver').execute()).toEqual([]);
    const res = await multipartRequest(t, 'POST', '/bots', [{ filename: 'a.png', contentType: 'image/png', data: await pngImage() }], { full_name: 'Pic Bot', short_name: 'picbot' }, 'hamlet');
    const body = expectSuccess(res);
    const row = await t.row(body.user_id);
    expect([row.avatar_source, row.avatar_version]).toEqual(['U', 1]);
    expect(body.avatar_url).toBe(`/user_avatars/${t.realmId}/${row.avatar_file}.png?version=1`);
  });

  it('default channels must be visible to the creator', async () => {
    expectError(await t.post('/bots', { full_name: 'Chan Bot', short_name: 'chan', default_sending_stream: 'nowhere' }, 'hamlet'), 400, 'BAD_REQUEST', "Invalid channel name 'nowhere'");
  });
});

describe('GET /bots', () => {
  it("lists the caller's active bots", async () => {
    const body = expectSuccess(await t.get('/bots', {}, 'hamlet'));
    expect(body.bots[0]).toEqual({
      username: 'test-bot@zulip.testserver',
      full_name: 'Test Bot',
      api_key: t.users.bot.apiKey,
      avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com/),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    });
    expect(body.bots.map((b: { username: string }) => b.username)).toEqual(['test-bot@zulip.testserver', 'hook-bot@zulip.testserver', 'hook2-bot@zulip.testserver', 'picbot-bot@zulip.testserver']);
    expectError(await t.get('/bots', {}, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
  });
});

describe('PATCH /bots/{bot_id}', () => {
  it('access: "No such bot", "Insufficient permission"; nothing changes', async () => {
    const bot = await makeBot('othello', 'guarded', 'Guarded Bot');
    const events = await t.captureEvents(async () => {
      expectError(await t.patch(`/bots/${t.users.hamlet.id}`, { full_name: 'X Y' }, 'iago'), 400, 'BAD_REQUEST', 'No such bot');
      expectError(await t.patch('/bots/99999', { full_name: 'X Y' }, 'iago'), 400, 'BAD_REQUEST', 'No such bot');
      expectError(await t.patch('/bots/99999999999999', { full_name: 'X Y' }, 'iago'), 400, 'BAD_REQUEST', 'No such bot');
      expectError(await t.delete('/bots/99999999999999', {}, 'iago'), 400, 'BAD_REQUEST', 'No such bot');
      expectError(await t.patch(`/bots/${bot.id}`, { bot_owner_id: 99999999999999 }, 'othello'), 400, 'BAD_REQUEST', 'Failed to change owner, no such user');
      expectError(await t.patch(`/bots/${bot.id}`, { full_name: 'Stolen Bot' }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
      expectError(await t.patch(`/bots/${bot.id}`, { full_name: 'Guest Bot' }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
      expectError(await t.patch(`/bots/${bot.id}`, { full_name: 'Adder Bot' }, 'othello'), 400, 'BAD_REQUEST', 'Name is already in use!');
      expectError(await t.patch(`/bots/${bot.id}`, { role: 200 }, 'othello'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      expectError(await t.patch(`/bots/${bot.id}`, { bot_owner_id: 99999 }, 'othello'), 400, 'BAD_REQUEST', 'Failed to change owner, no such user');
      expectError(await t.patch(`/bots/${bot.id}`, { bot_owner_id: t.users.bot.id }, 'othello'), 400, 'BAD_REQUEST', "Failed to change owner, bots can't own other bots");
      expectError(await t.patch(`/bots/${bot.id}`, { default_sending_stream: 'nowhere' }, 'othello'), 400, 'BAD_REQUEST', "Invalid channel name 'nowhere'");
      // A later refusal leaves earlier valid changes unapplied.
      expectError(await t.patch(`/bots/${bot.id}`, { full_name: 'Renamed Guard', bot_owner_id: 99999 }, 'othello'), 400, 'BAD_REQUEST', 'Failed to change owner, no such user');
    });
    expect(events).toEqual([]);
    expect((await t.row(bot.id)).full_name).toBe('Guarded Bot');
  });

  it('renames: realm_user update to all, realm_bot update to owner and admins; response shape', async () => {
    const bot = await makeBot('othello', 'renamee', 'Renamee Bot');
    let body: any;
    const events = await t.captureEvents(async () => {
      body = expectSuccess(await t.patch(`/bots/${bot.id}`, { full_name: ' Renamed Bot ' }, 'othello'));
    });
    expect(body).toEqual({
      result: 'success',
      msg: '',
      full_name: 'Renamed Bot',
      avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com/),
      service_interface: 1,
      service_payload_url: null,
      config_data: null,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
      bot_owner: 'othello@zulip.com',
    });
    expect(events.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_user', op: 'update', person: { user_id: bot.id, full_name: 'Renamed Bot' } }, await active()],
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, full_name: 'Renamed Bot' } }, ownerAndAdmins(t.users.othello.id)],
    ]);
  });

  it('changes owner: delete to the old owner, add to the new, update to admins, bot_owner_id to all', async () => {
    const bot = await makeBot('othello', 'moving', 'Moving Bot');
    const events = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/bots/${bot.id}`, { bot_owner_id: t.users.cordelia.id }, 'othello'));
    });
    const row = await t.row(bot.id);
    expect(row.bot_owner_id).toBe(t.users.cordelia.id);
    expect(events.map((e) => [e.event.type, e.event.op, rcpt(e)])).toEqual([
      ['realm_bot', 'delete', [t.users.othello.id]],
      ['realm_bot', 'add', [t.users.cordelia.id]],
      ['realm_bot', 'update', [t.users.owner.id, t.users.iago.id]],
      ['realm_user', 'update', await active()],
    ]);
    expect(events[0]!.event).toEqual({ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } });
    expect(events[1]!.event).toMatchObject({ type: 'realm_bot', op: 'add', bot: { user_id: bot.id, owner_id: t.users.cordelia.id, api_key: row.api_key } });
    expect(events[2]!.event).toEqual({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, owner_id: t.users.cordelia.id } });
    expect(events[3]!.event).toEqual({ type: 'realm_user', op: 'update', person: { user_id: bot.id, bot_owner_id: t.users.cordelia.id } });
    // The previous owner no longer administers it.
    expectError(await t.patch(`/bots/${bot.id}`, { full_name: 'Back Bot' }, 'othello'), 400, 'BAD_REQUEST', 'Insufficient permission');
  });

  it('admins change a bot role; default_all_public_streams; avatar upload', async () => {
    const bot = await makeBot('othello', 'roles', 'Roles Bot');
    const roleEvents = await t.captureEvents(async () => expectSuccess(await t.patch(`/bots/${bot.id}`, { role: 300 }, 'iago')));
    expect(roleEvents[0]!.event).toEqual({ type: 'realm_user', op: 'update', person: { user_id: bot.id, role: 300 } });
    expect(rcpt(roleEvents[0]!)).toEqual(await active());
    const pub = await t.captureEvents(async () => expectSuccess(await t.patch(`/bots/${bot.id}`, { default_all_public_streams: true }, 'othello')));
    expect(pub.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, default_all_public_streams: true } }, ownerAndAdmins(t.users.othello.id)],
    ]);
    const up = await t.captureEvents(async () =>
      expectSuccess(await multipartRequest(t, 'PATCH', `/bots/${bot.id}`, [{ filename: 'x.bin', contentType: 'application/octet-stream', data: await pngImage() }], {}, 'othello')),
    );
    const row = await t.row(bot.id);
    const url = `/user_avatars/${t.realmId}/${row.avatar_file}.png?version=2`;
    expect(up.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, avatar_url: url } }, ownerAndAdmins(t.users.othello.id)],
      [
        { type: 'realm_user', op: 'update', person: { user_id: bot.id, avatar_source: 'U', avatar_url: url, avatar_url_medium: url.replace('.png', '-medium.png'), avatar_version: 2 } },
        await active(),
      ],
    ]);
  });

  it('default channels: names in realm_bot events; a private default makes the bot private to its owner', async () => {
    const othello = await t.row(t.users.othello.id);
    const [pub, priv] = await transact(t.app.ctx, async (tx) => {
      const spec = { description: '', isWebPublic: false, historyPublicToSubscribers: null, messageRetentionDays: null, topicsPolicy: 'inherit', folderId: null, isDefault: false, groupSettings: {} } as const;
      const a = await doCreateChannel(t.app.ctx, tx, t.realmId, t.users.iago.id, { ...spec, name: 'bot-public', inviteOnly: false } as never);
      const b = await doCreateChannel(t.app.ctx, tx, t.realmId, t.users.iago.id, { ...spec, name: 'bot-private', inviteOnly: true } as never);
      await doSubscribe(tx, t.realmId, [b], [othello], new Map(), t.app.ctx);
      return [a, b];
    });
    const bot = await makeBot('othello', 'chans', 'Chans Bot');
    expectError(await t.patch(`/bots/${bot.id}`, { default_sending_stream: 'bot-private' }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    const first = await t.captureEvents(async () => expectSuccess(await t.patch(`/bots/${bot.id}`, { default_sending_stream: 'Bot-Public' }, 'othello')));
    expect(first.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, default_sending_stream: 'bot-public' } }, ownerAndAdmins(t.users.othello.id)],
    ]);
    const second = await t.captureEvents(async () => expectSuccess(await t.patch(`/bots/${bot.id}`, { default_events_register_stream: 'bot-private' }, 'othello')));
    expect(second.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, default_events_register_stream: 'bot-private' } }, [t.users.othello.id]],
    ]);
    const row = await t.row(bot.id);
    expect([row.default_sending_stream_id, row.default_events_register_stream_id]).toEqual([pub.id, priv.id]);
    const cleared = await t.captureEvents(async () => expectSuccess(await t.patch(`/bots/${bot.id}`, { default_sending_stream: '' }, 'othello')));
    expect(cleared[0]!.event).toEqual({ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, default_sending_stream: null } });
    // A member not subscribed to the private channel cannot pick it.
    const other = await makeBot('cordelia', 'chans2', 'Chans Two Bot');
    expectError(await t.patch(`/bots/${other.id}`, { default_sending_stream: 'bot-private' }, 'cordelia'), 400, 'BAD_REQUEST', "Invalid channel name 'bot-private'");
  });
});

describe('API keys', () => {
  it('POST /bots/{id}/api_key/regenerate: new key, realm_bot update to owner and admins, old key dead', async () => {
    const bot = await makeBot('othello', 'keyed', 'Keyed Bot');
    expectError(await t.post(`/bots/${bot.id}/api_key/regenerate`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    let key = '';
    const events = await t.captureEvents(async () => {
      key = expectSuccess(await t.post(`/bots/${bot.id}/api_key/regenerate`, {}, 'othello')).api_key;
    });
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(key).not.toBe(bot.apiKey);
    expect(events.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, api_key: key } }, ownerAndAdmins(t.users.othello.id)],
    ]);
    const as = (apiKey: string): TestUser => ({ id: bot.id, email: bot.email, apiKey, password: '', role: 400, name: '' });
    expectError(await t.get('/users/me', {}, as(bot.apiKey)), 401, 'UNAUTHORIZED', 'Invalid API key');
    expectSuccess(await t.get('/users/me', {}, as(key)));
  });

  it('POST /users/me/api_key/regenerate: humans only; no events', async () => {
    const u = await t.createUser({ email: 'rekey@zulip.com', fullName: 'Re Key' });
    let key = '';
    const events = await t.captureEvents(async () => {
      key = expectSuccess(await t.post('/users/me/api_key/regenerate', {}, u)).api_key;
    });
    expect(events).toEqual([]);
    expectError(await t.get('/users/me', {}, u), 401, 'UNAUTHORIZED', 'Invalid API key');
    expectSuccess(await t.get('/users/me', {}, { ...u, apiKey: key }));
    expectError(await t.post('/users/me/api_key/regenerate', {}, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
  });
});

describe('DELETE /bots/{bot_id}', () => {
  it('deactivates: realm_user and realm_bot updates; again is a no-op; reactivation reports is_active true', async () => {
    const bot = await makeBot('othello', 'doomed', 'Doomed Bot');
    expectError(await t.delete(`/bots/${bot.id}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    const events = await t.captureEvents(async () => expectSuccess(await t.delete(`/bots/${bot.id}`, {}, 'othello')));
    expect(events.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } }, await active()],
      [{ type: 'realm_bot', op: 'update', bot: { user_id: bot.id, is_active: false } }, ownerAndAdmins(t.users.othello.id)],
    ]);
    expect(expectSuccess(await t.get('/bots', {}, 'othello')).bots.map((b: { username: string }) => b.username)).not.toContain(bot.email);
    expect(await t.captureEvents(async () => expectSuccess(await t.delete(`/bots/${bot.id}`, {}, 'othello')))).toEqual([]);
    const re = await t.captureEvents(async () => expectSuccess(await t.post(`/users/${bot.id}/reactivate`, {}, 'iago')));
    const groups = [await systemGroupId(t.app.ctx.db, t.realmId, 'role:members'), await systemGroupId(t.app.ctx.db, t.realmId, 'role:fullmembers')].sort((a, b) => a - b);
    expect(re.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: true } },
      { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, is_active: true } },
      // Back in its system groups, which clients dropped it from on deactivation.
      ...groups.map((group_id) => ({ type: 'user_group', op: 'add_members', group_id, user_ids: [bot.id] })),
    ]);
  });
});

describe('/register consistency: realm_bots and realm_users', () => {
  it('for the owner, the new owner and an admin, across every bot change', async () => {
    const flow = async () => {
      const bot = await makeBot('othello', `flow${Math.random().toString(36).slice(2, 8)}`, `Flow Bot ${Math.random().toString(36).slice(2, 8)}`);
      expectSuccess(await t.patch(`/bots/${bot.id}`, { full_name: `Flowed ${bot.id}`, default_all_public_streams: true }, 'othello'));
      expectSuccess(await t.post(`/bots/${bot.id}/api_key/regenerate`, {}, 'othello'));
      expectSuccess(await multipartRequest(t, 'PATCH', `/bots/${bot.id}`, [{ filename: 'a.png', contentType: 'image/png', data: await pngImage() }], {}, 'othello'));
      expectSuccess(await t.patch(`/bots/${bot.id}`, { bot_owner_id: t.users.cordelia.id }, 'othello'));
      expectSuccess(await t.delete(`/bots/${bot.id}`, {}, 'cordelia'));
      expectSuccess(await t.post(`/users/${bot.id}/reactivate`, {}, 'iago'));
    };
    for (const who of ['othello', 'cordelia', 'iago'] as const) {
      await expectModuleConsistent(t, realmBotsModule, who, flow);
      await expectModuleConsistent(t, usersModule, who, flow);
    }
  });

  it('an outgoing-webhook bot: created, its service changed, its owner changed', async () => {
    const flow = async () => {
      const tag = Math.random().toString(36).slice(2, 8);
      const bot = await makeBot('othello', `out${tag}`, `Outgoing ${tag}`, { bot_type: 3, payload_url: JSON.stringify('https://bots.example.com/a'), interface_type: 2 });
      expectSuccess(await t.patch(`/bots/${bot.id}`, { service_payload_url: JSON.stringify('https://bots.example.com/b'), service_interface: 1 }, 'othello'));
      expectSuccess(await t.patch(`/bots/${bot.id}`, { bot_owner_id: t.users.cordelia.id }, 'othello'));
    };
    for (const who of ['othello', 'cordelia', 'iago'] as const) await expectModuleConsistent(t, realmBotsModule, who, flow);
  });

  it('a user who becomes an administrator sees every bot, and stops seeing them after', async () => {
    const u = await t.createUser({ email: 'promoted@zulip.com', fullName: 'Promoted Person' });
    await expectModuleConsistent(t, realmBotsModule, u, async () => expectSuccess(await t.patch(`/users/${u.id}`, { role: 200 }, 'owner')));
    await expectModuleConsistent(t, realmBotsModule, u, async () => expectSuccess(await t.patch(`/users/${u.id}`, { role: 400 }, 'owner')));
  });
});

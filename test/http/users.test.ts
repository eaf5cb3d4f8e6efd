import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { systemGroupId } from '../../src/domain/rules/group-settings.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

async function setVisibility(userId: number, value: number): Promise<void> {
  await t.app.ctx.db.updateTable('users').set({ settings: JSON.stringify({ email_address_visibility: value }) }).where('id', '=', userId).execute();
}

async function groupMembers(name: string): Promise<number[]> {
  const rows = await t.app.ctx.db
    .selectFrom('user_group_members')
    .innerJoin('user_groups', 'user_groups.id', 'user_group_members.group_id')
    .select('user_group_members.user_id')
    .where('user_groups.name', '=', name)
    .orderBy('user_group_members.user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

describe('GET /users/{email} and /users/{user_id}', () => {
  it('returns the full user object', async () => {
    const body = expectSuccess(await t.get('/users/othello@zulip.com', {}, 'hamlet'));
    expect(body.user).toEqual({
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
      is_active: true,
      date_joined: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d\+00:00$/),
      is_imported_stub: false,
      delivery_email: 'othello@zulip.com',
      avatar_url: null,
    });
  });

  it('client_gravatar=false gives the gravatar URL; include_custom_profile_fields adds profile_data', async () => {
    const body = expectSuccess(await t.get(`/users/${t.users.othello.id}`, { client_gravatar: false, include_custom_profile_fields: true }));
    expect(body.user.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
    expect(body.user.profile_data).toEqual({});
  });

  it('bots carry bot_type and bot_owner_id', async () => {
    const body = expectSuccess(await t.get(`/users/${t.users.bot.id}`));
    expect(body.user.is_bot).toBe(true);
    expect(body.user.bot_type).toBe(1);
    expect(body.user.bot_owner_id).toBe(t.users.hamlet.id);
    expect(body.user.delivery_email).toBe('test-bot@zulip.testserver');
  });

  it('unknown user: 400 "No such user"', async () => {
    expectError(await t.get('/users/nobody@zulip.com'), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.get('/users/99999'), 400, 'BAD_REQUEST', 'No such user');
    // Beyond a 32-bit row id: still "No such user", never a database error.
    expectError(await t.get('/users/99999999999999'), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.get('/users/user99999999999999@zulip.testserver'), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.patch('/users/99999999999999', { full_name: 'X Y' }, 'iago'), 400, 'BAD_REQUEST', 'No such user');
  });

  it('no credentials', async () => {
    expectError(await t.get('/users/othello@zulip.com', {}, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('email visibility: admins-only addresses are hidden from members, found by admins, dummy email works for all', async () => {
    const u = await t.createUser({ email: 'private@zulip.com', fullName: 'Private Person' });
    await setVisibility(u.id, 3);
    expectError(await t.get('/users/private@zulip.com', {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    const asAdmin = expectSuccess(await t.get('/users/private@zulip.com', {}, 'iago'));
    expect(asAdmin.user.email).toBe(`user${u.id}@zulip.testserver`);
    expect(asAdmin.user.delivery_email).toBe('private@zulip.com');
    const dummy = expectSuccess(await t.get(`/users/user${u.id}@zulip.testserver`, {}, 'hamlet'));
    expect(dummy.user.user_id).toBe(u.id);
    expect(dummy.user.delivery_email).toBeNull();
    expect(dummy.user.email).toBe(`user${u.id}@zulip.testserver`);
    // client_gravatar never nulls avatar_url when the viewer cannot see the real email.
    expect(dummy.user.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com/);
  });

  it('email visibility by role: members (2), moderators (5), nobody (4)', async () => {
    const m = await t.createUser({ email: 'vis-members@zulip.com', fullName: 'Vis Members' });
    await setVisibility(m.id, 2);
    expectSuccess(await t.get('/users/vis-members@zulip.com', {}, 'hamlet'));
    expectError(await t.get('/users/vis-members@zulip.com', {}, 'polonius'), 400, 'BAD_REQUEST', 'No such user');
    const mod = await t.createUser({ email: 'vis-mods@zulip.com', fullName: 'Vis Mods' });
    await setVisibility(mod.id, 5);
    expectSuccess(await t.get('/users/vis-mods@zulip.com', {}, 'shiva'));
    expectError(await t.get('/users/vis-mods@zulip.com', {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    const nobody = await t.createUser({ email: 'vis-nobody@zulip.com', fullName: 'Vis Nobody' });
    await setVisibility(nobody.id, 4);
    expectError(await t.get('/users/vis-nobody@zulip.com', {}, 'owner'), 400, 'BAD_REQUEST', 'No such user');
  });

  it('deactivated users are found', async () => {
    const u = await t.createUser({ email: 'found-deact@zulip.com', fullName: 'Found Deact' });
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    const body = expectSuccess(await t.get('/users/found-deact@zulip.com'));
    expect(body.user.is_active).toBe(false);
  });
});

describe('GET /users and /users/me', () => {
  it('lists every user of the realm, bots and deactivated included', async () => {
    const body = expectSuccess(await t.get('/users', {}, 'polonius'));
    const ids = body.members.map((m: { user_id: number }) => m.user_id);
    for (const u of Object.values(t.users)) expect(ids).toContain(u.id);
  });

  it('user_ids that do not exist', async () => {
    expectError(await t.get('/users', { user_ids: [t.users.hamlet.id, 424242] }), 400, 'BAD_REQUEST', 'Invalid user ID: 424242');
  });

  it('/users/me adds max_message_id and profile_data', async () => {
    const body = expectSuccess(await t.get('/users/me', {}, 'cordelia'));
    expect(body.user_id).toBe(t.users.cordelia.id);
    expect(body.max_message_id).toBe(-1);
    expect(body.profile_data).toEqual({});
    expect(body.avatar_url).toMatch(/^https:/);
  });
});

describe('POST /users', () => {
  it('non-admins: "Must be an organization administrator", before parameters are read', async () => {
    expectError(await t.post('/users', {}, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    expectError(await t.post('/users', {}, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    expectError(await t.post('/users', {}, 'bot'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
  });

  it('admins without can_create_users', async () => {
    expectError(await t.post('/users', {}, 'iago'), 400, 'BAD_REQUEST', 'User not authorized to create users');
  });

  it('no credentials', async () => {
    expectError(await t.post('/users', {}, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('missing parameters in order: email, password, full_name', async () => {
    expectError(await t.post('/users', {}, 'owner'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'email' argument", { var_name: 'email' });
    expectError(await t.post('/users', { email: 'a@zulip.com' }, 'owner'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'password' argument", { var_name: 'password' });
    expectError(await t.post('/users', { email: 'a@zulip.com', password: 'x' }, 'owner'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'full_name' argument", { var_name: 'full_name' });
  });

  it('validation order and messages', async () => {
    const ok = { email: 'valid@zulip.com', password: 'Strong-Enough-9', full_name: 'Valid Name' };
    expectError(await t.post('/users', { ...ok, full_name: 'x'.repeat(101) }, 'owner'), 400, 'BAD_REQUEST', 'Name too long!');
    expectError(await t.post('/users', { ...ok, full_name: ' a ' }, 'owner'), 400, 'BAD_REQUEST', 'Name too short!');
    expectError(await t.post('/users', { ...ok, full_name: 'Bad @ Name' }, 'owner'), 400, 'BAD_REQUEST', 'Invalid characters in name!');
    expectError(await t.post('/users', { ...ok, full_name: 'Name|123' }, 'owner'), 400, 'BAD_REQUEST', 'Invalid format!');
    expectError(await t.post('/users', { ...ok, email: 'broken' }, 'owner'), 400, 'BAD_REQUEST', 'Bad name or username');
    expectError(await t.post('/users', { ...ok, email: 'throwaway@mailinator.com' }, 'owner'), 400, 'BAD_REQUEST', 'Disposable email addresses are not allowed in this organization');
    expectError(await t.post('/users', { ...ok, email: 'HAMLET@zulip.com' }, 'owner'), 400, 'BAD_REQUEST', 'Email is already in use.');
    expectError(await t.post('/users', { ...ok, password: 'abc' }, 'owner'), 400, 'BAD_REQUEST', 'The password is too weak.');
    // Nothing was written by the refused requests.
    expect(await t.app.ctx.db.selectFrom('users').select('id').where('email_lower', '=', 'valid@zulip.com').execute()).toEqual([]);
  });

  it('creates the user: user_id, events, system groups, ignored short_name', async () => {
    const events = await t.captureEvents(async () => {
      const body = expectSuccess(await t.post('/users', { email: 'Created@zulip.com', password: 'Strong-Enough-9', full_name: '  Created Person ', short_name: 'cp' }, 'owner'));
      expect(body).toEqual({ result: 'success', msg: '', user_id: expect.any(Number), ignored_parameters_unsupported: ['short_name'] });
    });
    const row = await t.app.ctx.db.selectFrom('users').selectAll().where('email_lower', '=', 'created@zulip.com').executeTakeFirstOrThrow();
    expect(row.full_name).toBe('Created Person');
    expect(row.delivery_email).toBe('Created@zulip.com');
    expect(row.role).toBe(400);
    expect(row.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(events.map((e) => e.event.type)).toEqual(['realm_user', 'user_group', 'user_group']);
    const add = events[0]!;
    expect(add.event).toEqual({
      type: 'realm_user',
      op: 'add',
      person: {
        email: 'Created@zulip.com',
        user_id: row.id,
        avatar_version: 1,
        is_admin: false,
        is_owner: false,
        is_guest: false,
        role: 400,
        is_bot: false,
        full_name: 'Created Person',
        timezone: '',
        is_active: true,
        date_joined: expect.any(String),
        is_imported_stub: false,
        delivery_email: 'Created@zulip.com',
        avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com/),
        profile_data: {},
      },
    });
    expect(add.userIds).toContain(t.users.hamlet.id);
    expect(add.userIds).toContain(row.id);
    const fullMembers = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('name', '=', 'role:fullmembers').executeTakeFirstOrThrow()).id;
    const members = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('name', '=', 'role:members').executeTakeFirstOrThrow()).id;
    expect(events.slice(1).map((e) => e.event)).toEqual([
      { type: 'user_group', op: 'add_members', group_id: fullMembers, user_ids: [row.id] },
      { type: 'user_group', op: 'add_members', group_id: members, user_ids: [row.id] },
    ]);
  });
});

describe('system groups follow roles', () => {
  it('fixtures are in their role groups', async () => {
    expect(await groupMembers('role:owners')).toEqual([t.users.owner.id]);
    expect(await groupMembers('role:administrators')).toEqual([t.users.iago.id]);
    expect(await groupMembers('role:moderators')).toEqual([t.users.shiva.id]);
    expect(await groupMembers('role:everyone')).toContain(t.users.polonius.id);
    expect(await groupMembers('role:nobody')).toEqual([]);
    expect(await groupMembers('role:internet')).toEqual([]);
  });

  it('system groups nest owners < administrators < ... < internet', async () => {
    const rows = await t.app.ctx.db
      .selectFrom('user_group_subgroups as s')
      .innerJoin('user_groups as sup', 'sup.id', 's.supergroup_id')
      .innerJoin('user_groups as sub', 'sub.id', 's.subgroup_id')
      .select(['sup.name as sup', 'sub.name as sub'])
      .orderBy('sup.id')
      .execute();
    expect(rows).toEqual([
      { sup: 'role:administrators', sub: 'role:owners' },
      { sup: 'role:moderators', sub: 'role:administrators' },
      { sup: 'role:fullmembers', sub: 'role:moderators' },
      { sup: 'role:members', sub: 'role:fullmembers' },
      { sup: 'role:everyone', sub: 'role:members' },
      { sup: 'role:internet', sub: 'role:everyone' },
    ]);
  });
});

describe('PATCH /users/{user_id}', () => {
  it('members get "Insufficient permission"; nothing changes', async () => {
    const events = await t.captureEvents(async () => {
      expectError(await t.patch(`/users/${t.users.othello.id}`, { full_name: 'Hacked Name' }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
      expectError(await t.patch(`/users/${t.users.othello.id}`, { role: 200 }, 'polonius'), 400, 'BAD_REQUEST', 'Insufficient permission');
    });
    expect(events).toEqual([]);
    expect((await t.row(t.users.othello.id)).full_name).toBe('Othello, the Moor of Venice');
  });

  it('no credentials', async () => {
    expectError(await t.patch(`/users/${t.users.othello.id}`, { full_name: 'X Y' }, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('admins change role: realm_user update and group moves', async () => {
    const u = await t.createUser({ email: 'promote@zulip.com', fullName: 'Promote Me' });
    const events = await t.captureEvents(async () => {
      expect(expectSuccess(await t.patch(`/users/${u.id}`, { role: 300 }, 'iago'))).toEqual({ result: 'success', msg: '' });
    });
    const ids = Object.fromEntries(
      (await t.app.ctx.db.selectFrom('user_groups').select(['id', 'name']).where('is_system_group', '=', 1).execute()).map((g) => [g.name, g.id]),
    );
    expect(events.slice(0, 4).map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, role: 300 } },
      { type: 'user_group', op: 'remove_members', group_id: ids['role:fullmembers'], user_ids: [u.id] },
      { type: 'user_group', op: 'remove_members', group_id: ids['role:members'], user_ids: [u.id] },
      { type: 'user_group', op: 'add_members', group_id: ids['role:moderators'], user_ids: [u.id] },
    ]);
    // As a moderator the user now sees addresses visible to moderators (vis-mods@, from an earlier test).
    const gained = events.slice(4).map((e) => [e.event, e.userIds]);
    const modsOnly = await t.app.ctx.db.selectFrom('users').select(['id', 'delivery_email']).where('email_lower', '=', 'vis-mods@zulip.com').executeTakeFirstOrThrow();
    expect(gained).toEqual([[{ type: 'realm_user', op: 'update', person: { user_id: modsOnly.id, delivery_email: 'vis-mods@zulip.com' } }, [u.id]]]);
    expect((await t.row(u.id)).role).toBe(300);
  });

  it('only owners grant or remove the owner role', async () => {
    const u = await t.createUser({ email: 'wannabe@zulip.com', fullName: 'Wannabe Owner' });
    expectError(await t.patch(`/users/${u.id}`, { role: 100 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    expectSuccess(await t.patch(`/users/${u.id}`, { role: 100 }, 'owner'));
    expectError(await t.patch(`/users/${u.id}`, { role: 400 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    expectSuccess(await t.patch(`/users/${u.id}`, { role: 400 }, 'owner'));
  });

  it('the only owner keeps the role', async () => {
    expectError(
      await t.patch(`/users/${t.users.owner.id}`, { role: 200 }, 'owner'),
      400,
      'BAD_REQUEST',
      'The owner permission cannot be removed from the only organization owner.',
    );
  });

  it('full_name is validated; blank is ignored', async () => {
    const u = await t.createUser({ email: 'rename@zulip.com', fullName: 'Rename Me' });
    expectError(await t.patch(`/users/${u.id}`, { full_name: 'x'.repeat(101) }, 'iago'), 400, 'BAD_REQUEST', 'Name too long!');
    const none = await t.captureEvents(async () => expectSuccess(await t.patch(`/users/${u.id}`, { full_name: '   ' }, 'iago')));
    expect(none).toEqual([]);
    const events = await t.captureEvents(async () => expectSuccess(await t.patch(`/users/${u.id}`, { full_name: 'Renamed Me' }, 'iago')));
    expect(events.map((e) => e.event)).toEqual([{ type: 'realm_user', op: 'update', person: { user_id: u.id, full_name: 'Renamed Me' } }]);
  });

  it('a bot owner may rename their bot but not change its role', async () => {
    expectSuccess(await t.patch(`/users/${t.users.bot.id}`, { full_name: 'Renamed Bot' }, 'hamlet'));
    expectError(await t.patch(`/users/${t.users.bot.id}`, { role: 200 }, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
  });
});

describe('DELETE /users/{user_id} and reactivation', () => {
  it('members cannot deactivate others', async () => {
    expectError(await t.delete(`/users/${t.users.cordelia.id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expect((await t.row(t.users.cordelia.id)).is_active).toBe(1);
  });

  it('admins cannot deactivate owners; the last owner cannot be deactivated', async () => {
    expectError(await t.delete(`/users/${t.users.owner.id}`, {}, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    expectError(await t.delete(`/users/${t.users.owner.id}`, {}, 'owner'), 400, 'BAD_REQUEST', 'Cannot deactivate the only organization owner');
  });

  it('deactivates with an event, and deactivates the user\'s bots', async () => {
    const u = await t.createUser({ email: 'botowner@zulip.com', fullName: 'Bot Owner' });
    const bot = expectSuccess(await t.post('/bots', { full_name: 'Owned Bot', short_name: 'owned' }, u));
    const events = await t.captureEvents(async () => expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago')));
    // The bot's owner and the admins also get realm_bot update {is_active: false} (issue 11).
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: false } },
      { type: 'realm_user', op: 'update', person: { user_id: bot.user_id, is_active: false } },
      { type: 'realm_bot', op: 'update', bot: { user_id: bot.user_id, is_active: false } },
    ]);
    expectError(await t.delete(`/users/${u.id}`, {}, 'iago'), 400, 'BAD_REQUEST', 'User is deactivated');
    const re = await t.captureEvents(async () => expectSuccess(await t.post(`/users/${u.id}/reactivate`, {}, 'iago')));
    // Clients dropped the user from groups on deactivation: add_members for each direct group (Zulip's do_reactivate_user).
    const members = await systemGroupId(t.app.ctx.db, t.realmId, 'role:members');
    const full = await systemGroupId(t.app.ctx.db, t.realmId, 'role:fullmembers');
    expect(re.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, is_active: true } },
      ...[members, full].sort((a, b) => a - b).map((group_id) => ({ type: 'user_group', op: 'add_members', group_id, user_ids: [u.id] })),
    ]);
    expect((await t.row(u.id)).is_active).toBe(1);
  });

  it('reactivation needs admin rights', async () => {
    const u = await t.createUser({ email: 'react@zulip.com', fullName: 'React Ivate' });
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    expectError(await t.post(`/users/${u.id}/reactivate`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expectError(await t.post(`/users/${u.id}/reactivate`, {}, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('DELETE /users/me: the only owner cannot leave', async () => {
    expectError(await t.delete('/users/me', {}, 'owner'), 400, 'CANNOT_DEACTIVATE_LAST_USER', 'Cannot deactivate the only organization owner.', {
      is_last_owner: true,
      entity: 'organization owner',
    });
    const u = await t.createUser({ email: 'leaver@zulip.com', fullName: 'Leaver' });
    expectSuccess(await t.delete('/users/me', {}, u));
    expect((await t.row(u.id)).is_active).toBe(0);
  });
});

describe('POST /bots', () => {
  it('creates a generic bot with its own key, which authenticates', async () => {
    const events = await t.captureEvents(async () => {
      const body = expectSuccess(await t.post('/bots', { full_name: 'Helper Bot', short_name: 'helper' }, 'cordelia'));
      expect(body).toEqual({
        result: 'success',
        msg: '',
        user_id: expect.any(Number),
        api_key: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        avatar_url: expect.stringMatching(/^https:/),
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
      });
      const me = expectSuccess(await t.get('/users/me', {}, { id: body.user_id, email: 'helper-bot@zulip.testserver', apiKey: body.api_key, password: '', role: 400, name: '' }));
      expect(me.is_bot).toBe(true);
      expect(me.email).toBe('helper-bot@zulip.testserver');
    });
    expect(events[0]!.event).toMatchObject({ type: 'realm_user', op: 'add', person: { is_bot: true, bot_type: 1, bot_owner_id: t.users.cordelia.id } });
  });

  it('errors', async () => {
    expectError(await t.post('/bots', { full_name: 'Guest Bot', short_name: 'gb' }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    expectError(await t.post('/bots', { short_name: 'x' }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'full_name' argument", { var_name: 'full_name' });
    expectError(await t.post('/bots', { full_name: 'Dup Bot', short_name: 'test' }, 'hamlet'), 400, 'BAD_REQUEST', 'Username already in use');
    expectError(await t.post('/bots', { full_name: 'Helper Bot', short_name: 'other' }, 'hamlet'), 400, 'BAD_REQUEST', 'Name is already in use!');
    expectError(await t.post('/bots', { full_name: 'Typed Bot', short_name: 'typed', bot_type: 9 }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid bot type');
    expectError(await t.post('/bots', { full_name: 'No Creds', short_name: 'nc' }, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });
});

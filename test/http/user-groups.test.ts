import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doDeactivateUser } from '../../src/domain/actions/users.js';
import { isUserInGroup } from '../../src/domain/rules/group-settings.js';
import { userGroupsModule } from '../../src/state/user-groups.js';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer, type TestUser } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';

let t: TestServer;
let sys: Record<string, number>;
beforeAll(async () => {
  t = await startTestServer();
  const rows = await t.app.ctx.db.selectFrom('user_groups').select(['id', 'name']).where('is_system_group', '=', 1).execute();
  sys = Object.fromEntries(rows.map((r) => [r.name!, r.id]));
});
afterAll(async () => t.close());

const UNAUTH = 'Not logged in: API authentication or user session required';
let seq = 0;
const uniq = (base = 'group') => `${base}-${++seq}`;

async function activeIds(): Promise<number[]> {
  const rows = await t.app.ctx.db.selectFrom('users').select('id').where('realm_id', '=', t.realmId).where('is_active', '=', 1).orderBy('id').execute();
  return rows.map((r) => r.id);
}

/** Every row of the three group tables: a refused request must leave this unchanged. */
async function snapshot(): Promise<unknown> {
  const db = t.app.ctx.db;
  return {
    groups: await db.selectFrom('user_groups').selectAll().orderBy('id').execute(),
    members: await db.selectFrom('user_group_members').selectAll().orderBy('group_id').orderBy('user_id').execute(),
    subgroups: await db.selectFrom('user_group_subgroups').selectAll().orderBy('supergroup_id').orderBy('subgroup_id').execute(),
  };
}

/** Runs a request that must be refused: exact error, nothing written, no event. */
async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await snapshot();
  let res: Res | undefined;
  const events = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res!, status, code, msg, extra);
  expect(events).toEqual([]);
  expect(await snapshot()).toEqual(before);
}

async function create(params: Record<string, unknown> = {}, as: TestUser | string = 'hamlet'): Promise<number> {
  const body = expectSuccess(
    await t.post('/user_groups/create', { name: uniq(), description: 'A group', members: [], ...params }, as as never),
  );
  return body.group_id;
}

async function group(id: number): Promise<any> {
  const body = expectSuccess(await t.get('/user_groups', { include_deactivated_groups: true }, 'iago'));
  return body.user_groups.find((g: any) => g.id === id);
}

const events = (deliveries: { event: unknown; userIds: readonly number[] }[]) =>
  deliveries.map((d) => ({ event: d.event, userIds: [...d.userIds].sort((a, b) => a - b) }));

describe('POST /user_groups/create', () => {
  it('creates the group with Zulip defaults and sends user_group add to every active user', async () => {
    const { hamlet, cordelia, othello } = t.users;
    let res: Res | undefined;
    const deliveries = await t.captureEvents(async () => {
      res = await t.post('/user_groups/create', { name: 'leadership', description: 'The leadership team.', members: [othello.id, cordelia.id] }, 'hamlet');
    });
    const body = expectSuccess(res!);
    expect(Object.keys(body).sort()).toEqual(['group_id', 'msg', 'result']);
    const id = body.group_id;
    const created = await t.app.ctx.db.selectFrom('user_groups').select('date_created').where('id', '=', id).executeTakeFirstOrThrow();
    const expected = {
      name: 'leadership',
      creator_id: hamlet.id,
      date_created: created.date_created,
      members: [cordelia.id, othello.id].sort((a, b) => a - b),
      description: 'The leadership team.',
      id,
      is_system_group: false,
      direct_subgroup_ids: [],
      can_add_members_group: { direct_members: [hamlet.id], direct_subgroups: [] },
      can_join_group: sys['role:nobody'],
      can_leave_group: sys['role:everyone'],
      can_manage_group: { direct_members: [hamlet.id], direct_subgroups: [] },
      can_mention_group: sys['role:everyone'],
      can_remove_members_group: sys['role:nobody'],
      deactivated: false,
    };
    expect(events(deliveries)).toEqual([{ event: { type: 'user_group', op: 'add', group: expected }, userIds: await activeIds() }]);
    expect(await group(id)).toEqual(expected);
  });

  it('adds subgroups after the group (a separate add_subgroups event) and takes given settings', async () => {
    const sub = await create();
    const { cordelia } = t.users;
    let res: Res | undefined;
    const deliveries = await t.captureEvents(async () => {
      res = await t.post('/user_groups/create', {
        name: 'with-settings',
        description: '',
        members: [],
        subgroups: [sub, sys['role:administrators']],
        can_manage_group: sys['role:moderators'],
        can_join_group: { direct_members: [cordelia.id], direct_subgroups: [sub] },
        can_mention_group: { direct_members: [], direct_subgroups: [] },
        can_leave_group: { direct_members: [], direct_subgroups: [sub] },
      });
    });
    const id = expectSuccess(res!).group_id;
    const evs = events(deliveries);
    expect(evs.map((e: any) => e.event.op)).toEqual(['add', 'add_subgroups']);
    expect(evs[1]).toEqual({
      event: { type: 'user_group', op: 'add_subgroups', group_id: id, direct_subgroup_ids: [sys['role:administrators'], sub].sort((a, b) => a - b) },
      userIds: await activeIds(),
    });
    const g = await group(id);
    expect(g.can_manage_group).toBe(sys['role:moderators']);
    expect(g.can_join_group).toEqual({ direct_members: [cordelia.id], direct_subgroups: [sub] });
    // An empty value is role:nobody; one subgroup and no members is that group (Zulip's normal form).
    expect(g.can_mention_group).toBe(sys['role:nobody']);
    expect(g.can_leave_group).toBe(sub);
    expect(g.direct_subgroup_ids).toEqual([sys['role:administrators'], sub].sort((a, b) => a - b));
  });

  it('bots may create groups (feature level 496)', async () => {
    const id = await create({}, 'bot');
    expect((await group(id)).creator_id).toBe(t.users.bot.id);
  });

  it('refuses requests without credentials, from guests, and from users outside can_create_groups', async () => {
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [] }, null), 401, 'UNAUTHORIZED', UNAUTH);
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [] }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    const settings = await t.app.ctx.db.selectFrom('realms').select('settings').where('id', '=', t.realmId).executeTakeFirstOrThrow();
    // No realm-settings endpoint exists yet (issue 4): set the realm permission in the row.
    await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ ...JSON.parse(settings.settings), can_create_groups: sys['role:administrators'] }) }).where('id', '=', t.realmId).execute();
    try {
      await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [] }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
      expectSuccess(await t.post('/user_groups/create', { name: uniq(), description: '', members: [] }, 'iago'));
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ settings: settings.settings }).where('id', '=', t.realmId).execute();
    }
  });

  it('reports missing and malformed parameters', async () => {
    await refused(() => t.post('/user_groups/create', { description: '', members: [] }), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'name' argument", { var_name: 'name' });
    await refused(() => t.post('/user_groups/create', { name: 'x', members: [] }), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'description' argument", { var_name: 'description' });
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '' }), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'members' argument", { var_name: 'members' });
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: '[1,"a"]' }), 400, 'BAD_REQUEST', 'members[1] is not an integer');
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [], can_manage_group: '"x"' }), 400, 'BAD_REQUEST', 'Invalid can_manage_group');
  });

  it('refuses unknown and deactivated members', async () => {
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [t.users.othello.id, 99999] }), 400, 'BAD_REQUEST', 'Invalid user ID: 99999');
    const gone = await t.createUser({ email: 'gone-member@zulip.com', fullName: 'Gone Member' });
    { const row = await t.row(gone.id); await transact(t.app.ctx, (tx) => doDeactivateUser(tx, row)); }
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [gone.id] }), 400, 'BAD_REQUEST', `Invalid user ID: ${gone.id}`);
  });

  it('checks the name as Zulip does', async () => {
    await refused(() => t.post('/user_groups/create', { name: '  ', description: '', members: [] }), 400, 'BAD_REQUEST', "User group name can't be empty!");
    await refused(() => t.post('/user_groups/create', { name: 'a'.repeat(101), description: '', members: [] }), 400, 'BAD_REQUEST', 'User group name cannot exceed 100 characters.');
    for (const prefix of ['@', 'role:', 'user:', 'stream:', 'channel:']) {
      await refused(() => t.post('/user_groups/create', { name: `${prefix}x`, description: '', members: [] }), 400, 'BAD_REQUEST', `User group name cannot start with '${prefix}'.`);
    }
    await create({ name: 'taken' });
    await refused(() => t.post('/user_groups/create', { name: 'taken', description: '', members: [] }), 400, 'BAD_REQUEST', "User group 'taken' already exists.");
    await refused(() => t.post('/user_groups/create', { name: 'role:members', description: '', members: [] }), 400, 'BAD_REQUEST', "User group name cannot start with 'role:'.");
    expectSuccess(await t.post('/user_groups/create', { name: 'a'.repeat(100), description: '', members: [] }));
  });

  it('checks permission settings: groups, allowed system groups, members', async () => {
    const base = { name: 'x', description: '', members: [] };
    await refused(() => t.post('/user_groups/create', { ...base, can_manage_group: 99999 }), 400, 'BAD_REQUEST', 'Invalid user group');
    await refused(() => t.post('/user_groups/create', { ...base, can_manage_group: { direct_members: [], direct_subgroups: [99999, sys['role:members']] } }), 400, 'BAD_REQUEST', 'Invalid user group ID: 99999');
    await refused(() => t.post('/user_groups/create', { ...base, can_manage_group: { direct_members: [99999], direct_subgroups: [] } }), 400, 'BAD_REQUEST', 'Invalid user ID: 99999');
    for (const setting of ['can_add_members_group', 'can_join_group', 'can_manage_group', 'can_remove_members_group']) {
      await refused(() => t.post('/user_groups/create', { ...base, [setting]: sys['role:internet'] }), 400, 'BAD_REQUEST', `'${setting}' setting cannot be set to 'role:internet' group.`);
      await refused(() => t.post('/user_groups/create', { ...base, [setting]: sys['role:everyone'] }), 400, 'BAD_REQUEST', `'${setting}' setting cannot be set to 'role:everyone' group.`);
    }
    await refused(() => t.post('/user_groups/create', { ...base, can_leave_group: sys['role:internet'] }), 400, 'BAD_REQUEST', "'can_leave_group' setting cannot be set to 'role:internet' group.");
    await refused(() => t.post('/user_groups/create', { ...base, can_mention_group: sys['role:internet'] }), 400, 'BAD_REQUEST', "'can_mention_group' setting cannot be set to 'role:internet' group.");
    await refused(() => t.post('/user_groups/create', { ...base, can_mention_group: sys['role:owners'] }), 400, 'BAD_REQUEST', "'can_mention_group' setting cannot be set to 'role:owners' group.");
    // The first bad setting in Zulip's order is the one reported.
    await refused(() => t.post('/user_groups/create', { ...base, can_remove_members_group: 99999, can_add_members_group: sys['role:internet'] }), 400, 'BAD_REQUEST', "'can_add_members_group' setting cannot be set to 'role:internet' group.");
    const off = await create();
    expectSuccess(await t.post(`/user_groups/${off}/deactivate`, {}, 'hamlet'));
    await refused(() => t.post('/user_groups/create', { ...base, can_mention_group: off }), 400, 'BAD_REQUEST', 'User group is deactivated.');
    await refused(() => t.post('/user_groups/create', { ...base, can_mention_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [off] } }), 400, 'BAD_REQUEST', 'User group is deactivated.');
  });

  it('refuses unknown and deactivated subgroups (nothing is created)', async () => {
    const base = { name: uniq(), description: '', members: [] };
    await refused(() => t.post('/user_groups/create', { ...base, subgroups: [99999] }), 400, 'BAD_REQUEST', 'Invalid user group ID: 99999');
    const off = await create();
    expectSuccess(await t.post(`/user_groups/${off}/deactivate`, {}, 'hamlet'));
    await refused(() => t.post('/user_groups/create', { ...base, subgroups: [off] }), 400, 'BAD_REQUEST', 'User group is deactivated.');
  });
});

describe('GET /user_groups', () => {
  it('lists the system groups and the named groups sorted by id; deactivated ones only when asked', async () => {
    const off = await create();
    expectSuccess(await t.post(`/user_groups/${off}/deactivate`, {}, 'hamlet'));
    const body = expectSuccess(await t.get('/user_groups', {}, 'cordelia'));
    const ids = body.user_groups.map((g: any) => g.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    expect(ids).not.toContain(off);
    const admins = body.user_groups.find((g: any) => g.name === 'role:administrators');
    expect(admins).toEqual({
      name: 'role:administrators',
      creator_id: null,
      date_created: admins.date_created,
      members: [t.users.iago.id],
      description: 'Administrators of this organization, including owners',
      id: sys['role:administrators'],
      is_system_group: true,
      direct_subgroup_ids: [sys['role:owners']],
      can_add_members_group: sys['role:nobody'],
      can_join_group: sys['role:nobody'],
      can_leave_group: sys['role:nobody'],
      can_manage_group: sys['role:nobody'],
      can_mention_group: sys['role:nobody'],
      can_remove_members_group: sys['role:nobody'],
      deactivated: false,
    });
    const all = expectSuccess(await t.get('/user_groups', { include_deactivated_groups: true }, 'cordelia'));
    expect(all.user_groups.find((g: any) => g.id === off).deactivated).toBe(true);
  });

  it('refuses no credentials, guests and bots', async () => {
    expectError(await t.get('/user_groups', {}, null), 401, 'UNAUTHORIZED', UNAUTH);
    expectError(await t.get('/user_groups', {}, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    expectError(await t.get('/user_groups', {}, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
  });
});

describe('POST /user_groups/{id}/members', () => {
  it('adds and removes members with add_members / remove_members to every active user', async () => {
    const { othello, cordelia } = t.users;
    const id = await create({ members: [othello.id] });
    let deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([{ event: { type: 'user_group', op: 'add_members', group_id: id, user_ids: [cordelia.id] }, userIds: await activeIds() }]);
    deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post(`/user_groups/${id}/members`, { delete: [othello.id] }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([{ event: { type: 'user_group', op: 'remove_members', group_id: id, user_ids: [othello.id] }, userIds: await activeIds() }]);
    expect((await group(id)).members).toEqual([cordelia.id]);
  });

  it('runs add, delete, add_subgroups, delete_subgroups in one transaction, in that order', async () => {
    const { othello, cordelia } = t.users;
    const sub1 = await create();
    const sub2 = await create();
    const id = await create({ members: [othello.id], subgroups: [sub1] });
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post(`/user_groups/${id}/members`, { delete_subgroups: [sub1], add_subgroups: [sub2], delete: [othello.id], add: [cordelia.id] }, 'hamlet'));
    });
    expect(deliveries.map((d) => d.event.op)).toEqual(['add_members', 'remove_members', 'add_subgroups', 'remove_subgroups']);
    // A failure in the last step undoes the earlier ones.
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [othello.id], delete_subgroups: [sub1] }, 'hamlet'), 400, 'BAD_REQUEST', `User group ${sub1} is not a subgroup of this group.`);
  });

  it('reports every refusal with Zulip wording', async () => {
    const { othello, cordelia, hamlet } = t.users;
    const id = await create({ members: [othello.id] });
    const sub = await create();
    await refused(() => t.post(`/user_groups/${id}/members`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [] }, 'hamlet'), 400, 'BAD_REQUEST', 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
    await refused(() => t.post('/user_groups/99999/members', { add: [cordelia.id] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
    await refused(() => t.post(`/user_groups/${sys['role:members']}/members`, { add: [cordelia.id] }, 'iago'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, 'othello'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [99999] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user ID: 99999');
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [othello.id] }, 'hamlet'), 400, 'BAD_REQUEST', `User ${othello.id} is already a member of this group`);
    await refused(() => t.post(`/user_groups/${id}/members`, { delete: [99999] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user ID: 99999');
    await refused(() => t.post(`/user_groups/${id}/members`, { delete: [cordelia.id] }, 'hamlet'), 400, 'BAD_REQUEST', `There is no member '${cordelia.id}' in this user group`);
    await refused(() => t.post(`/user_groups/${id}/members`, { delete: [othello.id] }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.post(`/user_groups/${id}/members`, { add_subgroups: [99999] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group ID: 99999');
    await refused(() => t.post(`/user_groups/${id}/members`, { add_subgroups: [id] }, 'hamlet'), 400, 'BAD_REQUEST', `User group ${id} is already a subgroup of one of the passed subgroups.`);
    expectSuccess(await t.post(`/user_groups/${id}/members`, { add_subgroups: [sub] }, 'hamlet'));
    await refused(() => t.post(`/user_groups/${id}/members`, { add_subgroups: [sub] }, 'hamlet'), 400, 'BAD_REQUEST', `User group ${sub} is already a subgroup of this group.`);
    // A cycle through a nested subgroup.
    await refused(() => t.post(`/user_groups/${sub}/members`, { add_subgroups: [id] }, 'hamlet'), 400, 'BAD_REQUEST', `User group ${sub} is already a subgroup of one of the passed subgroups.`);
    await refused(() => t.post(`/user_groups/${id}/members`, { delete_subgroups: [99999] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group ID: 99999');
    await refused(() => t.post(`/user_groups/${id}/members`, { delete_subgroups: [sys['role:members']] }, 'hamlet'), 400, 'BAD_REQUEST', `User group ${sys['role:members']} is not a subgroup of this group.`);
    const off = await create();
    expectSuccess(await t.post(`/user_groups/${off}/deactivate`, {}, 'hamlet'));
    await refused(() => t.post(`/user_groups/${id}/members`, { add_subgroups: [off] }, 'hamlet'), 400, 'BAD_REQUEST', 'User group is deactivated.');
    const gone = await t.createUser({ email: 'gone-add@zulip.com', fullName: 'Gone Add' });
    { const row = await t.row(gone.id); await transact(t.app.ctx, (tx) => doDeactivateUser(tx, row)); }
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [gone.id] }, 'hamlet'), 400, 'BAD_REQUEST', `Invalid user ID: ${gone.id}`);
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, null), 401, 'UNAUTHORIZED', UNAUTH);
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    expect(hamlet.id).toBeGreaterThan(0);
  });

  it('joining and leaving oneself follow can_join_group and can_leave_group', async () => {
    const { cordelia, othello } = t.users;
    const id = await create({ members: [othello.id] });
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expectSuccess(await t.patch(`/user_groups/${id}`, { can_join_group: { new: sys['role:members'] } }, 'hamlet'));
    expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, 'cordelia'));
    // can_join_group is only for oneself.
    await refused(() => t.post(`/user_groups/${id}/members`, { add: [t.users.shiva.id] }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    // can_leave_group defaults to role:everyone.
    expectSuccess(await t.post(`/user_groups/${id}/members`, { delete: [othello.id] }, 'othello'));
    expectSuccess(await t.patch(`/user_groups/${id}`, { can_leave_group: { new: sys['role:nobody'] } }, 'hamlet'));
    await refused(() => t.post(`/user_groups/${id}/members`, { delete: [cordelia.id] }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expect((await group(id)).members).toEqual([cordelia.id]);
  });

  it('owners manage every group (can_manage_all_groups); bots may change members; deactivated groups keep working', async () => {
    const { cordelia, othello } = t.users;
    const id = await create({}, 'othello');
    expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [cordelia.id] }, 'owner'));
    const botGroup = await create({}, 'bot');
    expectSuccess(await t.post(`/user_groups/${botGroup}/members`, { add: [othello.id] }, 'bot'));
    expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'othello'));
    expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [othello.id] }, 'othello'));
    expect((await group(id)).members).toEqual([cordelia.id, othello.id].sort((a, b) => a - b));
  });
});

describe('POST /user_groups/{id}/subgroups', () => {
  it('adds and removes subgroups; removing needs can_manage_group', async () => {
    const sub = await create();
    const id = await create();
    let deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post(`/user_groups/${id}/subgroups`, { add: [sub] }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([{ event: { type: 'user_group', op: 'add_subgroups', group_id: id, direct_subgroup_ids: [sub] }, userIds: await activeIds() }]);
    // can_add_members_group alone allows adding subgroups but not removing them.
    expectSuccess(await t.patch(`/user_groups/${id}`, { can_add_members_group: { new: { direct_members: [t.users.hamlet.id, t.users.cordelia.id], direct_subgroups: [] } } }, 'hamlet'));
    await refused(() => t.post(`/user_groups/${id}/subgroups`, { delete: [sub] }, 'cordelia'), 400, 'BAD_REQUEST', 'Insufficient permission');
    deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post(`/user_groups/${id}/subgroups`, { delete: [sub] }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([{ event: { type: 'user_group', op: 'remove_subgroups', group_id: id, direct_subgroup_ids: [sub] }, userIds: await activeIds() }]);
  });

  it('refusals', async () => {
    const id = await create();
    await refused(() => t.post(`/user_groups/${id}/subgroups`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Nothing to do. Specify at least one of "add" or "delete".');
    await refused(() => t.post(`/user_groups/${id}/subgroups`, { add: [sys['role:members']] }, null), 401, 'UNAUTHORIZED', UNAUTH);
    await refused(() => t.post(`/user_groups/${id}/subgroups`, { add: [sys['role:members']] }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    await refused(() => t.post(`/user_groups/${id}/subgroups`, { add: [sys['role:members']] }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    await refused(() => t.post(`/user_groups/${id}/subgroups`, { add: [sys['role:members']] }, 'othello'), 400, 'BAD_REQUEST', 'Insufficient permission');
  });
});

describe('GET /user_groups/{id}/members, /members/{user_id}, /subgroups', () => {
  it('answers directly or recursively', async () => {
    const { othello, cordelia, shiva } = t.users;
    const inner = await create({ members: [cordelia.id] });
    const middle = await create({ members: [shiva.id], subgroups: [inner] });
    const outer = await create({ members: [othello.id], subgroups: [middle] });
    expect(expectSuccess(await t.get(`/user_groups/${outer}/members`, {}, 'hamlet')).members).toEqual([cordelia.id, othello.id, shiva.id].sort((a, b) => a - b));
    expect(expectSuccess(await t.get(`/user_groups/${outer}/members`, { direct_member_only: true }, 'hamlet')).members).toEqual([othello.id]);
    expect(expectSuccess(await t.get(`/user_groups/${outer}/members/${cordelia.id}`, {}, 'hamlet')).is_user_group_member).toBe(true);
    expect(expectSuccess(await t.get(`/user_groups/${outer}/members/${cordelia.id}`, { direct_member_only: true }, 'hamlet')).is_user_group_member).toBe(false);
    expect(expectSuccess(await t.get(`/user_groups/${inner}/members/${othello.id}`, {}, 'hamlet')).is_user_group_member).toBe(false);
    expect(expectSuccess(await t.get(`/user_groups/${outer}/subgroups`, {}, 'hamlet')).subgroups).toEqual([inner, middle].sort((a, b) => a - b));
    expect(expectSuccess(await t.get(`/user_groups/${outer}/subgroups`, { direct_subgroup_only: true }, 'hamlet')).subgroups).toEqual([middle]);
    // System groups nest: owners are members of role:members.
    expect(expectSuccess(await t.get(`/user_groups/${sys['role:members']}/members/${t.users.owner.id}`, {}, 'hamlet')).is_user_group_member).toBe(true);
  });

  it('refusals', async () => {
    const id = await create();
    for (const path of [`/user_groups/${id}/members`, `/user_groups/${id}/members/${t.users.hamlet.id}`, `/user_groups/${id}/subgroups`]) {
      expectError(await t.get(path, {}, null), 401, 'UNAUTHORIZED', UNAUTH);
      expectError(await t.get(path, {}, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
      expectError(await t.get(path, {}, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
      expectError(await t.get(path.replace(String(id), '99999'), {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
    }
    expectError(await t.get(`/user_groups/${id}/members/99999`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'));
    expectError(await t.get(`/user_groups/${id}/members`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'User group is deactivated.');
  });
});

describe('PATCH /user_groups/{id}', () => {
  it('renames and redescribes with update events', async () => {
    const id = await create();
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/user_groups/${id}`, { name: 'renamed', description: 'new words' }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([
      { event: { type: 'user_group', op: 'update', group_id: id, data: { name: 'renamed' }, __deactivated: false }, userIds: await activeIds() },
      { event: { type: 'user_group', op: 'update', group_id: id, data: { description: 'new words' } }, userIds: await activeIds() },
    ]);
    // Unchanged values send nothing.
    expect(await t.captureEvents(async () => expectSuccess(await t.patch(`/user_groups/${id}`, { name: 'renamed', description: 'new words' }, 'hamlet')))).toEqual([]);
  });

  it('changes settings given as {new, old}, refusing a stale old', async () => {
    const id = await create();
    const hamlet = t.users.hamlet.id;
    let deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/user_groups/${id}`, { can_mention_group: { new: { direct_members: [hamlet], direct_subgroups: [sys['role:moderators']] }, old: sys['role:everyone'] } }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([
      { event: { type: 'user_group', op: 'update', group_id: id, data: { can_mention_group: { direct_members: [hamlet], direct_subgroups: [sys['role:moderators']] } } }, userIds: await activeIds() },
    ]);
    await refused(() => t.patch(`/user_groups/${id}`, { can_mention_group: { new: sys['role:members'], old: sys['role:everyone'] } }, 'hamlet'), 400, 'EXPECTATION_MISMATCH', "'old' value does not match the expected value.");
    const anonId = (await t.app.ctx.db.selectFrom('user_groups').select('can_mention_group').where('id', '=', id).executeTakeFirstOrThrow()).can_mention_group!;
    deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/user_groups/${id}`, { can_mention_group: { new: sys['role:members'], old: { direct_members: [hamlet], direct_subgroups: [sys['role:moderators']] } } }, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([{ event: { type: 'user_group', op: 'update', group_id: id, data: { can_mention_group: sys['role:members'] } }, userIds: await activeIds() }]);
    expect((await group(id)).can_mention_group).toBe(sys['role:members']);
    // The anonymous group the setting held before is deleted with its members.
    expect(await t.app.ctx.db.selectFrom('user_groups').select('id').where('id', '=', anonId).executeTakeFirst()).toBeUndefined();
    expect(await t.app.ctx.db.selectFrom('user_group_members').select('user_id').where('group_id', '=', anonId).execute()).toEqual([]);
    // Same value: no event.
    expect(await t.captureEvents(async () => expectSuccess(await t.patch(`/user_groups/${id}`, { can_mention_group: { new: sys['role:members'] } }, 'hamlet')))).toEqual([]);
    await refused(() => t.patch(`/user_groups/${id}`, { can_manage_group: { new: sys['role:everyone'] } }, 'hamlet'), 400, 'BAD_REQUEST', "'can_manage_group' setting cannot be set to 'role:everyone' group.");
    await refused(() => t.patch(`/user_groups/${id}`, { can_manage_group: sys['role:members'] }, 'hamlet'), 400, 'BAD_REQUEST', 'can_manage_group is not a dict');
  });

  it('refusals', async () => {
    const id = await create();
    await refused(() => t.patch(`/user_groups/${id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'No new data supplied');
    await refused(() => t.patch(`/user_groups/${id}`, { name: 'x' }, null), 401, 'UNAUTHORIZED', UNAUTH);
    await refused(() => t.patch(`/user_groups/${id}`, { name: 'x' }, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    await refused(() => t.patch(`/user_groups/${id}`, { name: 'x' }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    await refused(() => t.patch(`/user_groups/${id}`, { name: 'x' }, 'othello'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.patch('/user_groups/99999', { name: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
    await refused(() => t.patch(`/user_groups/${sys['role:members']}`, { description: 'x' }, 'owner'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.patch(`/user_groups/${id}`, { name: '' }, 'hamlet'), 400, 'BAD_REQUEST', "User group name can't be empty!");
    await create({ name: 'patch-taken' });
    await refused(() => t.patch(`/user_groups/${id}`, { name: 'patch-taken' }, 'hamlet'), 400, 'BAD_REQUEST', "User group 'patch-taken' already exists.");
    // Everything or nothing: a bad setting after a good rename undoes the rename.
    await refused(() => t.patch(`/user_groups/${id}`, { name: uniq(), can_join_group: { new: 99999 } }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
  });

  it('reactivates with deactivated=false: update and add (for clients that dropped the group)', async () => {
    const id = await create();
    expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'));
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/user_groups/${id}`, { deactivated: false }, 'hamlet'));
    });
    const g = await group(id);
    expect(g.deactivated).toBe(false);
    expect(events(deliveries)).toEqual([
      { event: { type: 'user_group', op: 'update', group_id: id, data: { deactivated: false } }, userIds: await activeIds() },
      { event: { type: 'user_group', op: 'add', group: g, __for_reactivation: true }, userIds: await activeIds() },
    ]);
  });
});

describe('POST /user_groups/{id}/deactivate', () => {
  it('deactivates: update {deactivated: true} and remove', async () => {
    const id = await create();
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'));
    });
    expect(events(deliveries)).toEqual([
      { event: { type: 'user_group', op: 'update', group_id: id, data: { deactivated: true } }, userIds: await activeIds() },
      { event: { type: 'user_group', op: 'remove', group_id: id }, userIds: await activeIds() },
    ]);
  });

  it('refuses a group in use, listing the objections', async () => {
    const used = await create();
    const user = await create({ can_mention_group: used, can_join_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [used] } });
    const superGroup = await create({ subgroups: [used] });
    const channel = expectSuccess(
      await t.post('/channels/create', { name: uniq('objecting'), subscribers: [t.users.hamlet.id], can_send_message_group: used, can_resolve_topics_group: { direct_members: [t.users.othello.id], direct_subgroups: [used] } }, 'iago'),
    ).id;
    await refused(() => t.post(`/user_groups/${used}/deactivate`, {}, 'hamlet'), 400, 'CANNOT_DEACTIVATE_GROUP_IN_USE', 'Cannot deactivate user group in use.', {
      objections: [
        { type: 'subgroup', supergroup_ids: [superGroup] },
        { type: 'channel', channel_id: channel, settings: ['can_resolve_topics_group', 'can_send_message_group'] },
        { type: 'user_group', group_id: user, settings: ['can_join_group', 'can_mention_group'] },
      ],
    });
    const realmUsed = await create();
    const settings = await t.app.ctx.db.selectFrom('realms').select('settings').where('id', '=', t.realmId).executeTakeFirstOrThrow();
    await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ ...JSON.parse(settings.settings), can_create_groups: realmUsed }) }).where('id', '=', t.realmId).execute();
    try {
      await refused(() => t.post(`/user_groups/${realmUsed}/deactivate`, {}, 'hamlet'), 400, 'CANNOT_DEACTIVATE_GROUP_IN_USE', 'Cannot deactivate user group in use.', {
        objections: [{ type: 'realm', settings: ['can_create_groups'] }],
      });
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ settings: settings.settings }).where('id', '=', t.realmId).execute();
    }
    // Once the supergroup is deactivated it no longer objects.
    const lone = await create();
    const holder = await create({ subgroups: [lone] });
    expectSuccess(await t.post(`/user_groups/${holder}/deactivate`, {}, 'hamlet'));
    expectSuccess(await t.post(`/user_groups/${lone}/deactivate`, {}, 'hamlet'));
  });

  it('refusals', async () => {
    const id = await create();
    await refused(() => t.post(`/user_groups/${id}/deactivate`, {}, null), 401, 'UNAUTHORIZED', UNAUTH);
    await refused(() => t.post(`/user_groups/${id}/deactivate`, {}, 'othello'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.post(`/user_groups/${id}/deactivate`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.post(`/user_groups/${sys['role:members']}/deactivate`, {}, 'owner'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await refused(() => t.post('/user_groups/99999/deactivate', {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
    expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'));
    await refused(() => t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'User group is deactivated.');
  });
});

describe('ids beyond the 32-bit range', () => {
  it('are unknown ids (never a database error)', async () => {
    const big = 999999999999999;
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [big] }), 400, 'BAD_REQUEST', `Invalid user ID: ${big}`);
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [], can_manage_group: big }), 400, 'BAD_REQUEST', 'Invalid user group');
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [], can_manage_group: { direct_members: [big], direct_subgroups: [] } }), 400, 'BAD_REQUEST', `Invalid user ID: ${big}`);
    await refused(() => t.post('/user_groups/create', { name: 'x', description: '', members: [], can_manage_group: { direct_members: [t.users.hamlet.id], direct_subgroups: [big] } }), 400, 'BAD_REQUEST', `Invalid user group ID: ${big}`);
    await refused(() => t.post('/user_groups/create', { name: uniq(), description: '', members: [], subgroups: [big] }), 400, 'BAD_REQUEST', `Invalid user group ID: ${big}`);
    await refused(() => t.post(`/user_groups/${big}/members`, { add: [t.users.hamlet.id] }), 400, 'BAD_REQUEST', 'Invalid user group');
    expectError(await t.get(`/user_groups/${big}/members`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
  });
});

describe('permission checks through nested subgroups', () => {
  it('answers with one query for 1,000 users five levels deep', async () => {
    const db = t.app.ctx.db;
    const users: number[] = [];
    const now = Math.floor(Date.now() / 1000);
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      realm_id: t.realmId,
      delivery_email: `bulk${i}@zulip.com`,
      email_lower: `bulk${i}@zulip.com`,
      full_name: `Bulk ${i}`,
      password_hash: null,
      api_key: `bulkkey${String(i).padStart(25, '0')}`,
      role: 400,
      is_active: 1,
      is_bot: 0,
      bot_type: null,
      bot_owner_id: null,
      date_joined: now,
      timezone: '',
      avatar_source: 'G',
      avatar_version: 1,
      is_imported_stub: 0,
      can_create_users: 0,
      tos_version: 0,
      settings: '{}',
    }));
    // Bulk fixture data for a performance check (creating 1,000 users through actions would take minutes).
    for (let i = 0; i < rows.length; i += 200) {
      const ids = await db.insertInto('users').values(rows.slice(i, i + 200)).returning('id').execute();
      users.push(...ids.map((r) => r.id));
    }
    // Five levels: level k holds 200 users and has level k+1 as a subgroup.
    const levels: number[] = [];
    for (let k = 0; k < 5; k++) levels.push(await create({ members: users.slice(k * 200, (k + 1) * 200) }));
    for (let k = 0; k < 4; k++) expectSuccess(await t.post(`/user_groups/${levels[k]}/subgroups`, { add: [levels[k + 1]] }, 'hamlet'));
    const deepest = users[999]!;
    const before = t.app.ctx.store.stats.queries;
    expect(await isUserInGroup(db, deepest, levels[0]!)).toBe(true);
    expect(t.app.ctx.store.stats.queries - before).toBe(1);
    const before2 = t.app.ctx.store.stats.queries;
    expect(await isUserInGroup(db, t.users.cordelia.id, levels[0]!)).toBe(false);
    expect(t.app.ctx.store.stats.queries - before2).toBe(1);
    expect(expectSuccess(await t.get(`/user_groups/${levels[0]}/members`, {}, 'hamlet')).members).toHaveLength(1000);
  });
});

describe('realm_user_groups in /register stays in step with user_group events', () => {
  it('for every op, with and without include_deactivated_groups', async () => {
    const { othello, cordelia, hamlet } = t.users;
    for (const caps of [{}, { include_deactivated_groups: true }]) {
      let id = 0;
      const sub = await create();
      await expectModuleConsistent(t, userGroupsModule, 'cordelia', async () => {
        id = await create({ members: [othello.id], subgroups: [sub] });
      }, caps);
      await expectModuleConsistent(t, userGroupsModule, 'cordelia', async () => {
        expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [cordelia.id], delete: [othello.id], delete_subgroups: [sub] }, 'hamlet'));
        expectSuccess(await t.post(`/user_groups/${id}/subgroups`, { add: [sub] }, 'hamlet'));
      }, caps);
      await expectModuleConsistent(t, userGroupsModule, 'cordelia', async () => {
        expectSuccess(await t.patch(`/user_groups/${id}`, { name: uniq('renamed'), description: 'd', can_manage_group: { new: { direct_members: [hamlet.id, cordelia.id], direct_subgroups: [sub] } } }, 'hamlet'));
        expectSuccess(await t.patch(`/user_groups/${id}`, { can_add_members_group: { new: sys['role:members'] } }, 'hamlet'));
      }, caps);
      await expectModuleConsistent(t, userGroupsModule, 'cordelia', async () => {
        expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'));
        expectSuccess(await t.patch(`/user_groups/${id}`, { name: uniq('while-off') }, 'hamlet'));
      }, caps);
      await expectModuleConsistent(t, userGroupsModule, 'cordelia', async () => {
        expectSuccess(await t.patch(`/user_groups/${id}`, { deactivated: false }, 'hamlet'));
      }, caps);
      const member = await t.createUser({ email: `leaver-${seq}@zulip.com`, fullName: 'Leaver' });
      await expectModuleConsistent(t, userGroupsModule, 'cordelia', async () => {
        expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [member.id] }, 'hamlet'));
        expectSuccess(await t.patch(`/user_groups/${id}`, { can_mention_group: { new: { direct_members: [member.id, hamlet.id], direct_subgroups: [] } } }, 'hamlet'));
        const row = await t.row(member.id);
        await transact(t.app.ctx, (tx) => doDeactivateUser(tx, row));
      }, caps);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customProfileFieldsModule } from '../../src/state/profiles.js';
import { usersModule } from '../../src/state/users.js';
import { activeUserIds } from '../../src/store/users.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const active = async () => (await activeUserIds(t.app.ctx.db, t.realmId)).sort((a, b) => a - b);
/** Recipients of a delivery, sorted (emitters need not sort them). */
const rcpt = (d: { userIds: readonly number[] }) => [...d.userIds].sort((a, b) => a - b);
const fields = async () => expectSuccess(await t.get('/realm/profile_fields')).custom_fields as Record<string, unknown>[];
const create = async (params: Record<string, unknown>): Promise<number> => expectSuccess(await t.post('/realm/profile_fields', params, 'iago')).id;
const valueRows = () => t.app.ctx.db.selectFrom('custom_profile_field_values').selectAll().orderBy('user_id').orderBy('field_id').execute();

describe('POST /realm/profile_fields', () => {
  it('admins only; parameters are read after the role check', async () => {
    const events = await t.captureEvents(async () => {
      expectError(await t.post('/realm/profile_fields', {}, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      expectError(await t.post('/realm/profile_fields', { name: 'X', field_type: 1 }, 'shiva'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      expectError(await t.post('/realm/profile_fields', { name: 'X', field_type: 1 }, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
    });
    expect(events).toEqual([]);
    expect(await fields()).toEqual([]);
  });

  it('creates a field: id, order = id, custom_profile_fields event with the whole list to every active user', async () => {
    let id = 0;
    const events = await t.captureEvents(async () => {
      id = await create({ name: '  Phone number ', hint: 'Your work phone', field_type: 1 });
    });
    const field = { id, name: 'Phone number', type: 1, hint: 'Your work phone', field_data: '', order: id, required: false, editable_by_user: true };
    expect(await fields()).toEqual([field]);
    expect(events.map((e) => e.event)).toEqual([{ type: 'custom_profile_fields', fields: [field] }]);
    expect(rcpt(events[0]!)).toEqual(await active());
  });

  it('validation, in Zulip order and wording; nothing is created', async () => {
    const before = await fields();
    const err = async (params: Record<string, unknown>, msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) =>
      expectError(await t.post('/realm/profile_fields', params, 'iago'), 400, code, msg, extra);
    const events = await t.captureEvents(async () => {
      await err({ name: 'A' }, "Missing 'field_type' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'field_type' });
      await err({ name: 'A', field_type: 'x' }, 'field_type is not valid JSON');
      await err({ name: '   ', field_type: 1 }, 'Label cannot be blank.');
      await err({ name: 'n'.repeat(41), field_type: 1 }, 'name is too long (limit: 40 characters)');
      await err({ name: 'Hinted', hint: 'h'.repeat(81), field_type: 1 }, 'hint is too long (limit: 80 characters)');
      await err({ name: 'Weird', field_type: 9 }, 'Invalid field type.');
      await err({ name: 'Choice', field_type: 3 }, 'Field must have at least one choice.');
      await err({ name: 'Choice', field_type: 3, field_data: 'x' }, 'field_data is not valid JSON');
      await err({ name: 'Choice', field_type: 3, field_data: [] }, 'field_data is not a dict');
      await err({ name: 'Choice', field_type: 3, field_data: { a: 'x' } }, 'field_data is not a dict');
      await err({ name: 'Choice', field_type: 3, field_data: { a: { order: '1' } } }, 'text key is missing from field_data');
      await err({ name: 'Choice', field_type: 3, field_data: { a: { text: 'A', order: ' ' } } }, 'field_data["order"] cannot be blank.');
      await err({ name: 'Choice', field_type: 3, field_data: { a: { text: 'A', order: '1', extra: 'e' } } }, 'Unexpected arguments: extra');
      await err({ name: 'Choice', field_type: 3, field_data: { ' ': { text: 'A', order: '1' } } }, "'value' cannot be blank.");
      await err({ name: 'Choice', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } } }, 'Field must not have duplicate choices.');
      await err({ name: 'Account', field_type: 7, field_data: {} }, 'subtype key is missing from field_data');
      await err({ name: 'Account', field_type: 7, field_data: { subtype: 'myspace' } }, 'Invalid external account type');
      await err({ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://example.com/' } }, "URL pattern must contain '%(username)s'.");
      await err({ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'not a url %(username)s' } }, 'field_data["url_pattern"] is not a URL');
      await err({ name: 'Bio', field_type: 2, display_in_profile_summary: true }, 'Field type not supported for display in profile summary.');
      await err({ name: 'Phone number', field_type: 1 }, 'A field with that label already exists.');
    });
    expect(events).toEqual([]);
    expect(await fields()).toEqual(before);
  });

  it('every field type; a built-in external account takes its label from the defaults', async () => {
    const choice = { a: { text: 'Alpha', order: '1' }, b: { text: 'Beta', order: '2' } };
    const ids = {
      bio: await create({ name: 'Biography', field_type: 2 }),
      team: await create({ name: 'Team', field_type: 3, field_data: choice, required: true }),
      birthday: await create({ name: 'Birthday', field_type: 4, display_in_profile_summary: true }),
      site: await create({ name: 'Website', field_type: 5, editable_by_user: false }),
      mentor: await create({ name: 'Mentor', field_type: 6 }),
      github: await create({ name: 'ignored', hint: 'ignored', field_type: 7, field_data: { subtype: 'github' } }),
      custom: await create({ name: 'Chess', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://chess.example/%(username)s' } }),
      pronouns: await create({ name: 'Pronouns', field_type: 8 }),
    };
    const byId = new Map((await fields()).map((f) => [f.id, f]));
    expect(byId.get(ids.team)).toMatchObject({ type: 3, field_data: JSON.stringify(choice), required: true });
    expect(byId.get(ids.birthday)).toMatchObject({ type: 4, display_in_profile_summary: true, field_data: '' });
    expect(byId.get(ids.site)).toMatchObject({ editable_by_user: false });
    expect(byId.get(ids.github)).toEqual({
      id: ids.github, name: 'GitHub username', type: 7, hint: '', field_data: '{"subtype":"github"}', order: ids.github, required: false, editable_by_user: true,
    });
    expect(byId.get(ids.custom)).toMatchObject({ field_data: '{"subtype":"custom","url_pattern":"https://chess.example/%(username)s"}' });
    expect(byId.get(ids.bio)).not.toHaveProperty('display_in_profile_summary');
    // A second summary field is fine, a third is not.
    await create({ name: 'Office', field_type: 1, display_in_profile_summary: true });
    expectError(await t.post('/realm/profile_fields', { name: 'Desk', field_type: 1, display_in_profile_summary: true }, 'iago'), 400, 'BAD_REQUEST', 'Only 2 custom profile fields can be displayed in the profile summary.');
  });
});

describe('PATCH and DELETE /realm/profile_fields/{field_id}, reorder', () => {
  it('updates label, hint and flags with one event; refusals change nothing', async () => {
    const id = await create({ name: 'Room', field_type: 1 });
    expectError(await t.patch(`/realm/profile_fields/${id}`, { name: 'Hall' }, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    expectError(await t.patch('/realm/profile_fields/99999', { name: 'Hall' }, 'iago'), 400, 'BAD_REQUEST', 'Field id 99999 not found.');
    expectError(await t.patch('/realm/profile_fields/99999999999999', { name: 'Hall' }, 'iago'), 400, 'BAD_REQUEST', 'Field id 99999999999999 not found.');
    expectError(await t.patch(`/realm/profile_fields/${id}`, { name: ' ' }, 'iago'), 400, 'BAD_REQUEST', 'Label cannot be blank.');
    expectError(await t.patch(`/realm/profile_fields/${id}`, { name: 'Team' }, 'iago'), 400, 'BAD_REQUEST', 'A field with that label already exists.');
    const events = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/realm/profile_fields/${id}`, { name: 'Hall ', hint: 'Building', required: true, editable_by_user: false }, 'iago'));
    });
    const field = (await fields()).find((f) => f.id === id);
    expect(field).toEqual({ id, name: 'Hall', type: 1, hint: 'Building', field_data: '', order: id, required: true, editable_by_user: false });
    expect(events.map((e) => e.event)).toEqual([{ type: 'custom_profile_fields', fields: await fields() }]);
  });

  it('built-in external account fields: only the summary flag changes', async () => {
    const github = (await fields()).find((f) => f.name === 'GitHub username')!;
    expectError(await t.patch(`/realm/profile_fields/${github.id}`, { name: 'Code' }, 'iago'), 400, 'BAD_REQUEST', 'Default custom field cannot be updated.');
    expectError(await t.patch(`/realm/profile_fields/${github.id}`, { field_data: { subtype: 'gitlab' } }, 'iago'), 400, 'BAD_REQUEST', 'Default custom field cannot be updated.');
    expectSuccess(await t.patch(`/realm/profile_fields/${github.id}`, { name: 'GitHub username', display_in_profile_summary: false }, 'iago'));
  });

  it('removing choices clears the values that used them, with realm_user custom_profile_field updates', async () => {
    const team = (await fields()).find((f) => f.name === 'Team')!;
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: team.id, value: 'a' }] }, 'hamlet'));
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: team.id, value: 'b' }] }, 'othello'));
    const events = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/realm/profile_fields/${team.id}`, { field_data: { b: { text: 'Beta', order: '1' }, c: { text: 'Gamma', order: '2' } } }, 'iago'));
    });
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: t.users.hamlet.id, custom_profile_field: { id: team.id, value: null } } },
      { type: 'custom_profile_fields', fields: await fields() },
    ]);
    expect(rcpt(events[0]!)).toEqual(await active());
    expect((await valueRows()).filter((r) => r.field_id === team.id).map((r) => [r.user_id, r.value])).toEqual([[t.users.othello.id, 'b']]);
  });

  it('DELETE removes the field and its values', async () => {
    const id = await create({ name: 'Temporary', field_type: 1 });
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id, value: 'x' }] }, 'cordelia'));
    expectError(await t.delete(`/realm/profile_fields/${id}`, {}, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    expectError(await t.delete('/realm/profile_fields/99999', {}, 'iago'), 400, 'BAD_REQUEST', 'Field id 99999 not found.');
    const events = await t.captureEvents(async () => expectSuccess(await t.delete(`/realm/profile_fields/${id}`, {}, 'iago')));
    expect(events.map((e) => e.event)).toEqual([{ type: 'custom_profile_fields', fields: await fields() }]);
    expect((await fields()).map((f) => f.id)).not.toContain(id);
    expect((await valueRows()).filter((r) => r.field_id === id)).toEqual([]);
  });

  it('PATCH /realm/profile_fields reorders; every field must be listed', async () => {
    const ids = (await fields()).map((f) => f.id as number);
    expectError(await t.patch('/realm/profile_fields', { order: ids.slice(1) }, 'iago'), 400, 'BAD_REQUEST', 'Invalid order mapping.');
    expectError(await t.patch('/realm/profile_fields', { order: ids }, 'hamlet'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    const reversed = [...ids].reverse();
    const events = await t.captureEvents(async () => expectSuccess(await t.patch('/realm/profile_fields', { order: reversed }, 'iago')));
    const now = await fields();
    expect(now.map((f) => f.id)).toEqual(reversed);
    expect(now.map((f) => f.order)).toEqual(reversed.map((_, i) => i));
    expect(events.map((e) => e.event)).toEqual([{ type: 'custom_profile_fields', fields: now }]);
  });
});

describe('PATCH /users/me/profile_data', () => {
  const id = async (name: string) => (await fields()).find((f) => f.name === name)!.id as number;

  it('validates each type with Zulip\'s messages; nothing is stored on refusal', async () => {
    const before = await valueRows();
    const err = async (data: unknown, msg: string, as: 'hamlet' | 'bot' = 'hamlet') => expectError(await t.patch('/users/me/profile_data', { data }, as), 400, 'BAD_REQUEST', msg);
    const events = await t.captureEvents(async () => {
      await err([{ id: 99999, value: 'x' }], 'Field id 99999 not found.');
      await err([{ id: await id('Office'), value: 'x'.repeat(51) }], 'Office is too long (limit: 50 characters)');
      await err([{ id: await id('Biography'), value: 'x'.repeat(501) }], 'Biography is too long (limit: 500 characters)');
      await err([{ id: await id('Biography'), value: [1] }], 'Biography is not a string');
      await err([{ id: await id('Birthday'), value: '2024-02-30' }], 'Birthday is not a date');
      await err([{ id: await id('Birthday'), value: '1990-1-05' }], 'Birthday is not a date');
      await err([{ id: await id('Team'), value: 'z' }], "'z' is not a valid choice for 'Team'.");
      await err([{ id: await id('Mentor'), value: [t.users.iago.id, 99998, 99999] }], 'Invalid user IDs: 99998, 99999');
      await err([{ id: await id('Mentor'), value: [t.users.bot.id] }], `User with ID ${t.users.bot.id} is a bot`);
      await err([{ id: await id('Mentor'), value: [99999999999999, -1] }], 'Invalid user IDs: 99999999999999, -1');
      await err([{ id: await id('Mentor'), value: 'iago' }], 'User IDs is not a list');
      await err([{ id: await id('Pronouns'), value: 'p'.repeat(51) }], 'Pronouns is too long (limit: 50 characters)');
      await err([{ id: await id('Office'), value: 'ok' }, { id: await id('Biography'), value: 'x'.repeat(501) }], 'Biography is too long (limit: 500 characters)');
      await err('x', 'data is not valid JSON');
      await err({ id: 1 }, 'data is not a list');
      await err([{ value: 'x' }], 'data[0]["id"] field is missing');
      await err([{ id: await id('Hall'), value: 'x' }], 'This endpoint does not accept bot requests.', 'bot');
    });
    expect(events).toEqual([]);
    expect(await valueRows()).toEqual(before);
  });

  it('a field not editable by users: members refused, admins allowed', async () => {
    const hall = await id('Hall');
    expectError(await t.patch('/users/me/profile_data', { data: [{ id: hall, value: 'A1' }] }, 'cordelia'), 400, 'BAD_REQUEST', 'You are not allowed to change this field. Contact an administrator to update it.');
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: hall, value: 'A1' }] }, 'iago'));
  });

  it('stores values, renders Markdown types, one realm_user update per changed field; profile_data in user objects', async () => {
    const mentor = await id('Mentor');
    const data = [
      { id: await id('Biography'), value: 'I like **bold** things' },
      { id: await id('Birthday'), value: '1990-01-05' },
      { id: await id('Website'), value: 'https://hamlet.example.com/' },
      { id: mentor, value: [t.users.iago.id, t.users.cordelia.id] },
      { id: await id('GitHub username'), value: 'hamlet' },
      { id: await id('Pronouns'), value: 'he/him' },
      { id: await id('Office'), value: 'Elsinore' },
    ];
    // Website is not editable by users, so an admin edits it for hamlet below.
    const own = data.filter((d) => d.value !== 'https://hamlet.example.com/');
    const events = await t.captureEvents(async () => expectSuccess(await t.patch('/users/me/profile_data', { data: own }, 'hamlet')));
    const update = (custom_profile_field: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person: { user_id: t.users.hamlet.id, custom_profile_field } });
    expect(events.map((e) => e.event)).toEqual([
      update({ id: await id('Biography'), value: 'I like **bold** things', rendered_value: '<p>I like <strong>bold</strong> things</p>' }),
      update({ id: await id('Birthday'), value: '1990-01-05' }),
      update({ id: mentor, value: `[${t.users.iago.id},${t.users.cordelia.id}]` }),
      update({ id: await id('GitHub username'), value: 'hamlet' }),
      update({ id: await id('Pronouns'), value: 'he/him' }),
      update({ id: await id('Office'), value: 'Elsinore', rendered_value: '<p>Elsinore</p>' }),
    ]);
    for (const e of events) expect(rcpt(e)).toEqual(await active());
    // Sending the same values again changes nothing and sends nothing.
    expect(await t.captureEvents(async () => expectSuccess(await t.patch('/users/me/profile_data', { data: own }, 'hamlet')))).toEqual([]);

    const admin = await t.captureEvents(async () =>
      expectSuccess(await t.patch(`/users/${t.users.hamlet.id}`, { profile_data: [{ id: await id('Website'), value: 'https://hamlet.example.com/' }] }, 'iago')),
    );
    expect(admin.map((e) => e.event)).toEqual([update({ id: await id('Website'), value: 'https://hamlet.example.com/' })]);

    const got = expectSuccess(await t.get(`/users/${t.users.hamlet.id}`, { include_custom_profile_fields: true }, 'othello'));
    expect(got.user.profile_data).toEqual({
      [String(await id('Biography'))]: { value: 'I like **bold** things', rendered_value: '<p>I like <strong>bold</strong> things</p>' },
      [String(await id('Birthday'))]: { value: '1990-01-05' },
      [String(await id('Website'))]: { value: 'https://hamlet.example.com/' },
      [String(mentor)]: { value: `[${t.users.iago.id},${t.users.cordelia.id}]` },
      [String(await id('GitHub username'))]: { value: 'hamlet' },
      [String(await id('Pronouns'))]: { value: 'he/him' },
      [String(await id('Office'))]: { value: 'Elsinore', rendered_value: '<p>Elsinore</p>' },
    });
    // GET /users/me always includes the caller's values; GET /users only on request.
    expect(expectSuccess(await t.get('/users/me', {}, 'hamlet')).profile_data).toEqual(got.user.profile_data);
    const list = expectSuccess(await t.get('/users', { include_custom_profile_fields: true }, 'othello'));
    expect(list.members.find((m: { user_id: number }) => m.user_id === t.users.hamlet.id).profile_data).toEqual(got.user.profile_data);
    expect(list.members.find((m: { user_id: number }) => m.user_id === t.users.polonius.id).profile_data).toEqual({});
    expect(list.members.find((m: { user_id: number }) => m.user_id === t.users.bot.id)).not.toHaveProperty('profile_data');
    expect(expectSuccess(await t.get('/users', {}, 'othello')).members[0]).not.toHaveProperty('profile_data');
  });

  it('an admin clears values with null or empty; members may not edit others', async () => {
    const office = await id('Office');
    const pronouns = await id('Pronouns');
    expectError(await t.patch(`/users/${t.users.hamlet.id}`, { profile_data: [{ id: office, value: null }] }, 'othello'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expectError(await t.patch(`/users/${t.users.hamlet.id}`, { profile_data: [{ id: 99999, value: null }] }, 'iago'), 400, 'BAD_REQUEST', 'Field id 99999 not found.');
    const events = await t.captureEvents(async () =>
      expectSuccess(await t.patch(`/users/${t.users.hamlet.id}`, { profile_data: [{ id: office, value: null }, { id: pronouns, value: '' }] }, 'iago')),
    );
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: t.users.hamlet.id, custom_profile_field: { id: office, value: null } } },
      { type: 'realm_user', op: 'update', person: { user_id: t.users.hamlet.id, custom_profile_field: { id: pronouns, value: null } } },
    ]);
    expect((await valueRows()).filter((r) => r.user_id === t.users.hamlet.id && [office, pronouns].includes(r.field_id))).toEqual([]);
  });

  it('DELETE /users/me/profile_data clears own values', async () => {
    const birthday = await id('Birthday');
    expectError(await t.delete('/users/me/profile_data', { data: [99999] }, 'hamlet'), 400, 'BAD_REQUEST', 'Field id 99999 not found.');
    const events = await t.captureEvents(async () => expectSuccess(await t.delete('/users/me/profile_data', { data: [birthday] }, 'hamlet')));
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: t.users.hamlet.id, custom_profile_field: { id: birthday, value: null } } },
    ]);
    // Clearing a value the user does not have is a no-op without events.
    expect(await t.captureEvents(async () => expectSuccess(await t.delete('/users/me/profile_data', { data: [birthday] }, 'hamlet')))).toEqual([]);
  });
});

describe('/register consistency', () => {
  it('custom_profile_fields: create, update, reorder, delete', async () => {
    await expectModuleConsistent(t, customProfileFieldsModule, 'hamlet', async () => {
      const a = await create({ name: 'Consistency A', field_type: 1 });
      await create({ name: 'Consistency B', field_type: 3, field_data: { x: { text: 'X', order: '1' } } });
      expectSuccess(await t.patch(`/realm/profile_fields/${a}`, { hint: 'changed' }, 'iago'));
      const ids = (await fields()).map((f) => f.id as number);
      expectSuccess(await t.patch('/realm/profile_fields', { order: [...ids].reverse() }, 'iago'));
      expectSuccess(await t.delete(`/realm/profile_fields/${a}`, {}, 'iago'));
    });
  });

  it('realm_users profile_data: value changes, clears, and a deleted field', async () => {
    const b = (await fields()).find((f) => f.name === 'Consistency B')!.id as number;
    const bio = (await fields()).find((f) => f.name === 'Biography')!.id as number;
    await expectModuleConsistent(t, usersModule, 'othello', async () => {
      expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: b, value: 'x' }, { id: bio, value: 'Some *text*' }] }, 'cordelia'));
      expectSuccess(await t.patch(`/users/${t.users.cordelia.id}`, { profile_data: [{ id: bio, value: null }] }, 'iago'));
    });
    const both = { ...customProfileFieldsModule, eventTypes: ['custom_profile_fields', 'realm_user'] };
    both.fetch = async (ctx) => ({ ...(await usersModule.fetch(ctx)), ...(await customProfileFieldsModule.fetch(ctx)) });
    both.apply = (state, event, view) => (event.type === 'realm_user' ? usersModule.apply(state, event, view) : customProfileFieldsModule.apply(state, event, view));
    await expectModuleConsistent(t, both, 'othello', async () => {
      expectSuccess(await t.delete(`/realm/profile_fields/${b}`, {}, 'iago'));
    });
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROLE_GUEST } from '../../src/domain/rules/users.js';
import { expectError, expectSuccess, startTestServer, type FixtureName, type TestServer, type TestUser } from '../support/server.js';
import { getEvents, registerQueue } from '../support/events.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { group, realmSetting } from '../support/channels.js';
import { NO_CAPABILITIES } from '../../src/state/register.js';

const caps = (c: Record<string, boolean>) => ({ ...NO_CAPABILITIES, ...c });

/**
 * Restricted user access (can_access_all_users_group) on every surface, as a
 * restricted guest (polonius, realm restricted to role:members), an
 * unrestricted guest (same realm with role:everyone), a member (hamlet) and
 * an admin (iago). Polonius shares the channel "guest room" with hamlet only;
 * othello and cordelia are inaccessible to him while the realm is restricted.
 */
let t: TestServer;
let room: number;
const STUB = (id: number) => ({
  email: `user${id}@zulip.testserver`,
  user_id: id,
  avatar_version: 1,
  is_admin: false,
  is_owner: false,
  is_guest: false,
  role: 400,
  is_bot: false,
  full_name: 'Unknown user',
  timezone: '',
  date_joined: '1970-01-01T00:00:00+00:00',
  delivery_email: null,
  avatar_url: '/static/images/unknown-user-avatar.png',
  profile_data: {},
});

const restrict = () => realmSetting(t, 'can_access_all_users_group', 'role:members');
const unrestrict = () => realmSetting(t, 'can_access_all_users_group', 'role:everyone');
const id = (n: FixtureName) => t.users[n].id;

beforeAll(async () => {
  t = await startTestServer();
  room = await createChannel(t, 'guest room', ['polonius', 'hamlet']);
});
afterAll(async () => t?.close());
beforeEach(restrict);

describe('/register realm_users', () => {
  it('a restricted guest gets placeholders (or nothing, with user_list_incomplete) for users it cannot access', async () => {
    const body = await registerQueue(t, 'polonius');
    const byId = new Map(body.realm_users.map((u: any) => [u.user_id, u]));
    expect(byId.get(id('othello'))).toEqual(STUB(id('othello')));
    expect(byId.get(id('iago'))).toEqual(STUB(id('iago')));
    expect(byId.get(id('hamlet'))).toMatchObject({ full_name: 'King Hamlet', user_id: id('hamlet') });
    expect(byId.get(id('polonius'))).toMatchObject({ full_name: 'Polonius' });
    expect(byId.get(id('bot'))).toMatchObject({ full_name: 'Test Bot', is_bot: true });
    // Every user of the realm is listed, accessible or not.
    expect(body.realm_users.length).toBe(8);

    const incomplete = await registerQueue(t, 'polonius', { client_capabilities: caps({ user_list_incomplete: true }) });
    expect(incomplete.realm_users.map((u: any) => u.user_id).sort((a: number, b: number) => a - b)).toEqual([id('hamlet'), id('polonius'), id('bot')].sort((a, b) => a - b));
  });

  it('an unrestricted guest, a member and an admin see everyone', async () => {
    for (const who of ['hamlet', 'iago'] as const) {
      const body = await registerQueue(t, who);
      expect(body.realm_users.find((u: any) => u.user_id === id('othello'))).toMatchObject({ full_name: 'Othello, the Moor of Venice' });
      expect(body.realm_users.some((u: any) => u.full_name === 'Unknown user')).toBe(false);
    }
    await unrestrict();
    const body = await registerQueue(t, 'polonius', { client_capabilities: caps({ user_list_incomplete: true }) });
    expect(body.realm_users.length).toBe(8);
    expect(body.realm_users.find((u: any) => u.user_id === id('othello'))).toMatchObject({ full_name: 'Othello, the Moor of Venice' });
  });
});

describe('GET /users and GET /users/{id|email}', () => {
  it('GET /users: placeholders for a restricted guest, everyone for the others', async () => {
    const members = expectSuccess(await t.get('/users', {}, 'polonius')).members;
    expect(members.find((u: any) => u.user_id === id('cordelia'))).toEqual({ ...STUB(id('cordelia')), is_active: true });
    expect(members.find((u: any) => u.user_id === id('hamlet')).full_name).toBe('King Hamlet');
    const asMember = expectSuccess(await t.get('/users', {}, 'hamlet')).members;
    expect(asMember.find((u: any) => u.user_id === id('cordelia')).full_name).toBe("Cordelia, Lear's daughter");
    await unrestrict();
    const unrestricted = expectSuccess(await t.get('/users', {}, 'polonius')).members;
    expect(unrestricted.find((u: any) => u.user_id === id('cordelia')).full_name).toBe("Cordelia, Lear's daughter");
  });

  it('GET /users/{id} and /users/{email}: "Insufficient permission" for an inaccessible user', async () => {
    expectError(await t.get(`/users/${id('othello')}`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expectError(await t.get(`/users/user${id('othello')}@zulip.testserver`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expect(expectSuccess(await t.get(`/users/${id('hamlet')}`, { include_custom_profile_fields: true }, 'polonius')).user.full_name).toBe('King Hamlet');
    expect(expectSuccess(await t.get(`/users/${id('bot')}`, {}, 'polonius')).user.is_bot).toBe(true);
    for (const who of ['hamlet', 'iago'] as const) expect(expectSuccess(await t.get(`/users/${id('othello')}`, {}, who)).user.user_id).toBe(id('othello'));
    await unrestrict();
    expect(expectSuccess(await t.get(`/users/${id('othello')}`, {}, 'polonius')).user.user_id).toBe(id('othello'));
  });

  it('user status of an inaccessible user: refused, and left out of /register', async () => {
    expectSuccess(await t.post('/users/me/status', { status_text: 'on leave' }, 'othello'));
    expectError(await t.get(`/users/${id('othello')}/status`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expect((await registerQueue(t, 'polonius')).user_status[String(id('othello'))]).toBeUndefined();
    expect((await registerQueue(t, 'hamlet')).user_status[String(id('othello'))]).toEqual({ status_text: 'on leave' });
    await unrestrict();
    expect((await registerQueue(t, 'polonius')).user_status[String(id('othello'))]).toEqual({ status_text: 'on leave' });
  });
});

describe('presence', () => {
  it('a restricted guest sees only the presence of users it can access (REST, /register)', async () => {
    for (const who of ['othello', 'hamlet'] as const) expectSuccess(await t.post('/users/me/presence', { status: 'active' }, who));
    const legacy = expectSuccess(await t.get('/realm/presence', {}, 'polonius')).presences;
    expect(Object.keys(legacy)).toContain('hamlet@zulip.com');
    expect(Object.keys(legacy)).not.toContain('othello@zulip.com');
    const own = expectSuccess(await t.post('/users/me/presence', { status: 'active', slim_presence: true }, 'polonius')).presences;
    expect(Object.keys(own)).toContain(String(id('hamlet')));
    expect(Object.keys(own)).not.toContain(String(id('othello')));
    const reg = await registerQueue(t, 'polonius', { slim_presence: true });
    expect(Object.keys(reg.presences)).not.toContain(String(id('othello')));
    expectError(await t.get(`/users/${id('othello')}/presence`, {}, 'polonius'), 400, 'BAD_REQUEST', 'No such user');
    expectSuccess(await t.get(`/users/${id('hamlet')}/presence`, {}, 'polonius'));
    // Members and admins see everyone.
    for (const who of ['hamlet', 'iago'] as const) expect(Object.keys(expectSuccess(await t.get('/realm/presence', {}, who)).presences)).toContain('othello@zulip.com');
    await unrestrict();
    expect(Object.keys(expectSuccess(await t.get('/realm/presence', {}, 'polonius')).presences)).toContain('othello@zulip.com');
  });
});

describe('messages', () => {
  it('a sender the guest cannot access is "Unknown user" in fetched messages and in the message event', async () => {
    const q = await registerQueue(t, 'polonius', { event_types: ['message'] });
    // Othello posts to the public channel without being subscribed to it.
    const msgId = await sendChannelMessage(t, 'othello', room, 'hello', 'from outside');
    const [event] = await getEvents(t, 'polonius', q.queue_id, q.last_event_id);
    expect(event.message).toMatchObject({ id: msgId, sender_id: id('othello'), sender_full_name: 'Unknown user', sender_email: `user${id('othello')}@zulip.testserver`, avatar_url: '/static/images/unknown-user-avatar.png' });
    const fetched = expectSuccess(await t.get(`/messages/${msgId}`, {}, 'polonius')).message;
    expect(fetched).toMatchObject({ sender_full_name: 'Unknown user', sender_email: `user${id('othello')}@zulip.testserver`, avatar_url: '/static/images/unknown-user-avatar.png' });
    const list = expectSuccess(await t.get('/messages', { anchor: msgId, num_before: 0, num_after: 0 }, 'polonius')).messages;
    expect(list[0]).toMatchObject({ sender_full_name: 'Unknown user' });
    // The member sees the real sender.
    expect(expectSuccess(await t.get(`/messages/${msgId}`, {}, 'hamlet')).message.sender_full_name).toBe('Othello, the Moor of Venice');
    await unrestrict();
    expect(expectSuccess(await t.get(`/messages/${msgId}`, {}, 'polonius')).message.sender_full_name).toBe('Othello, the Moor of Venice');
  });

  it('direct messages to an inaccessible user are refused, and nothing is written', async () => {
    const count = async () => Number((await t.app.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const deliveries = await t.captureEvents(async () => {
      for (const to of [[id('othello')], [id('hamlet'), id('cordelia')]]) {
        expectError(await t.post('/messages', { type: 'direct', to, content: 'hi' }, 'polonius'), 400, 'BAD_REQUEST', 'You do not have permission to access some of the recipients.');
      }
      expectError(await t.post('/typing', { op: 'start', to: [id('othello')] }, 'polonius'), 400, 'BAD_REQUEST', 'You do not have permission to access some of the recipients.');
    });
    expect(deliveries).toEqual([]);
    expect(await count()).toBe(before);
    await sendDirectMessage(t, 'polonius', ['hamlet'], 'hi hamlet');
    await sendDirectMessage(t, 'polonius', ['bot'], 'hi bot');
  });

  it('mentions of an inaccessible user by a restricted guest are not resolved', async () => {
    const rendered = expectSuccess(await t.post('/messages/render', { content: '@**Othello, the Moor of Venice** @**King Hamlet**' }, 'polonius')).rendered;
    // Unresolved, the mention syntax is left to the rest of the Markdown (bold), as in Zulip.
    expect(rendered).toBe(`<p>@<strong>Othello, the Moor of Venice</strong> <span class="user-mention" data-user-id="${id('hamlet')}">@King Hamlet</span></p>`);
    const asMember = expectSuccess(await t.post('/messages/render', { content: '@**Othello, the Moor of Venice**' }, 'hamlet')).rendered;
    expect(asMember).toBe(`<p><span class="user-mention" data-user-id="${id('othello')}">@Othello, the Moor of Venice</span></p>`);
  });

  it('typing and user events about inaccessible users do not reach the restricted guest', async () => {
    const q = await registerQueue(t, 'polonius', { event_types: ['typing', 'realm_user', 'user_status'], client_capabilities: caps({ stream_typing_notifications: true }) });
    expectSuccess(await t.post('/typing', { op: 'start', type: 'stream', stream_id: room, topic: 'x' }, 'othello'));
    expectSuccess(await t.patch('/settings', { full_name: 'Othello the Moor' }, 'othello'));
    expectSuccess(await t.post('/users/me/status', { status_text: 'away' }, 'othello'));
    expectSuccess(await t.post('/typing', { op: 'start', type: 'stream', stream_id: room, topic: 'x' }, 'hamlet'));
    const events = await getEvents(t, 'polonius', q.queue_id, q.last_event_id);
    expect(events.map((e) => [e.type, e.sender?.user_id ?? e.person?.user_id ?? e.user_id])).toEqual([['typing', id('hamlet')]]);
    expectSuccess(await t.patch('/settings', { full_name: 'Othello, the Moor of Venice' }, 'othello'));
  });
});

describe('realm_user add for a newcomer', () => {
  it('an inaccessible newcomer reaches the restricted guest as the stub with inaccessible_user: true (not with user_list_incomplete)', async () => {
    const q = await registerQueue(t, 'polonius', { event_types: ['realm_user'] });
    const qi = await registerQueue(t, 'polonius', { event_types: ['realm_user'], client_capabilities: caps({ user_list_incomplete: true }) });
    const qm = await registerQueue(t, 'hamlet', { event_types: ['realm_user'] });
    const newcomer: TestUser = await t.createUser({ email: 'newcomer@zulip.com', fullName: 'New Comer' });
    expect(await getEvents(t, 'polonius', q.queue_id, q.last_event_id)).toEqual([
      { type: 'realm_user', op: 'add', person: { ...STUB(newcomer.id), is_active: true }, inaccessible_user: true, id: 0 },
    ]);
    expect(await getEvents(t, 'polonius', qi.queue_id, qi.last_event_id)).toEqual([]);
    const [forMember] = await getEvents(t, 'hamlet', qm.queue_id, qm.last_event_id);
    expect(forMember.person).toMatchObject({ user_id: newcomer.id, full_name: 'New Comer' });
  });
});

describe('the setting takes role:everyone or role:members only', () => {
  it("refuses every other group with Zulip's errors, writing nothing", async () => {
    const named = expectSuccess(await t.post('/user_groups/create', { name: 'contractors', description: 'c', members: [id('polonius')] }, 'iago')).group_id;
    const before = expectSuccess(await t.get('/user_groups', {}, 'iago'));
    const register = async () => (await registerQueue(t, 'owner')).realm_can_access_all_users_group;
    const current = await register();
    const SYSTEM = "'can_access_all_users_group' must be a system user group.";
    const cases: [unknown, string, string][] = [
      [named, 'SYSTEM_GROUP_REQUIRED', SYSTEM],
      [{ direct_members: [id('polonius')], direct_subgroups: [] }, 'SYSTEM_GROUP_REQUIRED', SYSTEM],
      [{ direct_members: [id('hamlet')], direct_subgroups: [await group(t, 'role:members')] }, 'SYSTEM_GROUP_REQUIRED', SYSTEM],
      [{ direct_members: [], direct_subgroups: [] }, 'BAD_REQUEST', "'can_access_all_users_group' setting cannot be set to 'role:nobody' group."],
    ];
    for (const name of ['role:nobody', 'role:internet', 'role:owners', 'role:administrators', 'role:moderators', 'role:fullmembers']) {
      cases.push([await group(t, name), 'BAD_REQUEST', `'can_access_all_users_group' setting cannot be set to '${name}' group.`]);
    }
    const deliveries = await t.captureEvents(async () => {
      for (const [value, code, msg] of cases) expectError(await t.patch('/realm', { can_access_all_users_group: { new: value } }, 'owner'), 400, code, msg);
    });
    expect(deliveries).toEqual([]);
    expect(await register()).toEqual(current);
    expect(expectSuccess(await t.get('/user_groups', {}, 'iago'))).toEqual(before);
    // The two allowed values.
    for (const name of ['role:everyone', 'role:members']) {
      expectSuccess(await t.patch('/realm', { can_access_all_users_group: { new: await group(t, name) } }, 'owner'));
      expect(await register()).toBe(await group(t, name));
    }
  });
});

describe('the guest role is what matters', () => {
  it('a newly created guest of a restricted realm starts with only itself and bots', async () => {
    const g = await t.createUser({ email: 'g2@zulip.com', fullName: 'Second Guest', role: ROLE_GUEST });
    const body = await registerQueue(t, g, { client_capabilities: caps({ user_list_incomplete: true }) });
    expect(body.realm_users.map((u: any) => u.user_id).sort((a: number, b: number) => a - b)).toEqual([id('bot'), g.id].sort((a, b) => a - b));
  });
});

describe('realm_non_active_users', () => {
  it('an inaccessible deactivated user is a placeholder among realm_users (or absent); a deactivated DM partner stays', async () => {
    const gone = await t.createUser({ email: 'gone@zulip.com', fullName: 'Gone Member' });
    const partner = await t.createUser({ email: 'partner@zulip.com', fullName: 'Old Partner' });
    await sendDirectMessage(t, partner, ['polonius'], 'hello guest');
    for (const u of [gone, partner]) expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    const body = await registerQueue(t, 'polonius');
    expect(body.realm_users.find((u: any) => u.user_id === gone.id)).toEqual(STUB(gone.id));
    expect(body.realm_non_active_users.map((u: any) => u.user_id)).toEqual([partner.id]);
    const incomplete = await registerQueue(t, 'polonius', { client_capabilities: caps({ user_list_incomplete: true }) });
    expect(incomplete.realm_users.some((u: any) => u.user_id === gone.id)).toBe(false);
    expect(incomplete.realm_non_active_users.map((u: any) => [u.user_id, u.full_name])).toEqual([[partner.id, 'Old Partner']]);
    const asAdmin = await registerQueue(t, 'iago');
    expect(asAdmin.realm_non_active_users.map((u: any) => u.user_id).sort((a: number, b: number) => a - b)).toEqual([gone.id, partner.id]);
  });
});

describe('reactions and subscription status', () => {
  it('a reactor the restricted guest cannot access: the placeholder in the legacy user object (fetch and event); user_id stays', async () => {
    const msgId = await sendChannelMessage(t, 'hamlet', room, 'r', 'react to me');
    const q = await registerQueue(t, 'polonius', { event_types: ['reaction'] });
    const qm = await registerQueue(t, 'hamlet', { event_types: ['reaction'] });
    expectSuccess(await t.post(`/messages/${msgId}/reactions`, { emoji_name: 'smile' }, 'othello'));
    const placeholder = { email: `user${id('othello')}@zulip.testserver`, id: id('othello'), full_name: 'Unknown user' };
    const [event] = await getEvents(t, 'polonius', q.queue_id, q.last_event_id);
    expect(event).toMatchObject({ type: 'reaction', op: 'add', user_id: id('othello'), user: { user_id: id('othello'), email: placeholder.email, full_name: 'Unknown user' } });
    const [forMember] = await getEvents(t, 'hamlet', qm.queue_id, qm.last_event_id);
    expect(forMember.user.full_name).toBe('Othello, the Moor of Venice');
    const fetched = expectSuccess(await t.get(`/messages/${msgId}`, {}, 'polonius')).message;
    expect(fetched.reactions).toEqual([{ emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji', user_id: id('othello'), user: placeholder }]);
    for (const who of ['hamlet', 'iago'] as const) {
      expect(expectSuccess(await t.get(`/messages/${msgId}`, {}, who)).message.reactions[0].user.full_name).toBe('Othello, the Moor of Venice');
    }
    await unrestrict();
    expect(expectSuccess(await t.get(`/messages/${msgId}`, {}, 'polonius')).message.reactions[0].user.full_name).toBe('Othello, the Moor of Venice');
  });

  it('GET /users/{id}/subscriptions/{stream_id}: "Insufficient permission" for a user the restricted guest cannot access', async () => {
    expectError(await t.get(`/users/${id('othello')}/subscriptions/${room}`, {}, 'polonius'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expect(expectSuccess(await t.get(`/users/${id('hamlet')}/subscriptions/${room}`, {}, 'polonius')).is_subscribed).toBe(true);
    for (const who of ['hamlet', 'iago'] as const) expect(expectSuccess(await t.get(`/users/${id('othello')}/subscriptions/${room}`, {}, who)).is_subscribed).toBe(false);
    await unrestrict();
    expect(expectSuccess(await t.get(`/users/${id('othello')}/subscriptions/${room}`, {}, 'polonius')).is_subscribed).toBe(false);
  });
});

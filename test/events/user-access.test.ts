import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_CAPABILITIES } from '../../src/state/register.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectStateConsistent, registerQueue, withoutIds } from '../support/events.js';
import { createChannel, sendDirectMessage } from '../support/messages.js';
import { group } from '../support/channels.js';

/**
 * Restricted user access and event queues: a guest's stale /register state
 * plus the events it receives equals a fresh /register as its access changes
 * (the realm setting changes, a channel is shared or left, a direct message
 * arrives, a newcomer joins), for a client with and one without the
 * user_list_incomplete capability, legacy and slim presence.
 */
let t: TestServer;
let room: number;
beforeAll(async () => {
  t = await startTestServer();
  room = await createChannel(t, 'guest room', ['polonius', 'hamlet']);
  // Othello and Iago have presence and a status: they arrive with the user when it becomes accessible.
  for (const who of ['othello', 'iago'] as const) {
    expectSuccess(await t.post('/users/me/presence', { status: 'active' }, who));
    expectSuccess(await t.post('/users/me/status', { status_text: `${who} at work`, emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' }, who));
  }
});
afterAll(async () => t?.close());

const caps = (c: Record<string, boolean>) => ({ ...NO_CAPABILITIES, ...c });
// Each client case has its own direct-message sender (a DM makes the sender accessible for good).
const CLIENTS: Record<string, [Record<string, unknown>, 'iago' | 'shiva' | 'cordelia']> = {
  'client without user_list_incomplete': [{}, 'iago'],
  'client with user_list_incomplete, slim presence': [{ client_capabilities: caps({ user_list_incomplete: true }), slim_presence: true }, 'shiva'],
  'modern client with subscribers': [{ client_capabilities: caps({ user_list_incomplete: true, notification_settings_null: true, user_settings_object: true }), include_subscribers: true, client_gravatar: true }, 'cordelia'],
};

const setting = async (name: string) => expectSuccess(await t.patch('/realm', { can_access_all_users_group: { new: await group(t, name) } }, 'owner'));
const uid = (n: 'othello' | 'hamlet' | 'cordelia' | 'iago' | 'shiva') => t.users[n].id;

describe.each(Object.entries(CLIENTS))('%s', (_name, [params, dmSender]) => {
  it('restricting the realm: remove events for every user the guest can no longer access', async () => {
    const events = await expectStateConsistent(t, 'polonius', () => setting('role:members'), params);
    const removed = events.filter((e) => e.type === 'realm_user').map((e) => [e.op, e.person.user_id, e.person.full_name]);
    expect(removed).toContainEqual(['remove', uid('othello'), 'Unknown user']);
    expect(removed).toContainEqual(['remove', uid(dmSender), 'Unknown user']);
    expect(removed.some(([, id]) => id === uid('hamlet'))).toBe(false);
  });

  it('sharing a channel: a full add for the user who joins; leaving it: a remove', async () => {
    const joined = await expectStateConsistent(t, 'polonius', () => t.post('/users/me/subscriptions', { subscriptions: [{ name: 'guest room' }] }, 'othello'), params);
    const add = joined.find((e) => e.type === 'realm_user');
    expect(add).toMatchObject({ op: 'add', person: { user_id: uid('othello'), full_name: 'Othello, the Moor of Venice' } });
    expect(add.inaccessible_user).toBeUndefined();
    // Then the presence and the status of the user, which a restricted guest did not have.
    const about = joined.filter((e) => ['realm_user', 'presence', 'user_status'].includes(e.type)).map((e) => e.type);
    expect(about).toEqual(['realm_user', 'user_status', 'presence']);
    expect(withoutIds(joined.filter((e) => e.type === 'user_status'))).toEqual([
      { type: 'user_status', user_id: uid('othello'), status_text: 'othello at work', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' },
    ]);
    const left = await expectStateConsistent(t, 'polonius', () => t.delete('/users/me/subscriptions', { subscriptions: ['guest room'] }, 'othello'), params);
    expect(withoutIds(left.filter((e) => e.type === 'realm_user'))).toEqual([{ type: 'realm_user', op: 'remove', person: { user_id: uid('othello'), full_name: 'Unknown user' } }]);
  });

  it('the guest subscribed to a channel by an admin gains its subscribers', async () => {
    const other = await createChannel(t, `cordelia's ${Object.keys(params).length}`, ['cordelia']);
    const events = await expectStateConsistent(t, 'polonius', () => t.post('/users/me/subscriptions', { subscriptions: [{ name: `cordelia's ${Object.keys(params).length}` }], principals: [t.users.polonius.id] }, 'iago'), params);
    expect(events.some((e) => e.type === 'realm_user' && e.op === 'add' && e.person.user_id === uid('cordelia'))).toBe(true);
    await expectStateConsistent(t, 'polonius', () => t.delete('/users/me/subscriptions', { subscriptions: [`cordelia's ${Object.keys(params).length}`] }, 'polonius'), params);
    expect(other).toBeGreaterThan(0);
  });

  it('a direct message from an inaccessible member makes the sender accessible (its add comes before the message)', async () => {
    const events = await expectStateConsistent(t, 'polonius', () => sendDirectMessage(t, dmSender, ['polonius'], 'welcome'), params);
    const types = events.map((e) => `${e.type}${e.op ? ':' + e.op : ''}`);
    expect(types.indexOf('realm_user:add')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('realm_user:add')).toBeLessThan(types.indexOf('message'));
  });

  it('an inaccessible newcomer: the placeholder (or nothing with user_list_incomplete)', async () => {
    const n = Object.keys(params).length + Math.floor(Math.random() * 1e6);
    await expectStateConsistent(t, 'polonius', () => t.createUser({ email: `new${n}@zulip.com`, fullName: `New ${n}` }), params);
  });

  it('changes of an inaccessible user reach nobody who cannot see them', async () => {
    const events = await expectStateConsistent(t, 'polonius', () => t.patch('/settings', { full_name: 'Othello the Moor' }, 'othello'), params);
    expect(events.filter((e) => e.type === 'realm_user')).toEqual([]);
    await t.patch('/settings', { full_name: 'Othello, the Moor of Venice' }, 'othello');
  });

  it('lifting the restriction: a full add for every user that was inaccessible', async () => {
    const events = await expectStateConsistent(t, 'polonius', () => setting('role:everyone'), params);
    const added = events.filter((e) => e.type === 'realm_user' && e.op === 'add').map((e) => e.person.user_id);
    expect(added).toContain(uid('othello'));
    expect(added).not.toContain(uid('hamlet'));
  });

  it('members and admins are unaffected by the setting', async () => {
    for (const who of ['hamlet', 'iago'] as const) {
      const events = await expectStateConsistent(t, who, () => setting('role:members'), params);
      expect(events.filter((e) => e.type === 'realm_user')).toEqual([]);
      await setting('role:everyone');
    }
    expect(room).toBeGreaterThan(0);
  });
});

describe('deactivation, reactivation and role changes', () => {
  const PARAMS: [string, Record<string, unknown>][] = [
    ['without user_list_incomplete', {}],
    ['with user_list_incomplete, slim presence', { client_capabilities: caps({ user_list_incomplete: true }), slim_presence: true }],
  ];

  it.each(PARAMS)('a co-subscriber deactivated: removed for the guest (%s); reactivated: a full add', async (_n, params) => {
    await setting('role:members');
    const n = Math.floor(Math.random() * 1e6);
    const mate = await t.createUser({ email: `mate${n}@zulip.com`, fullName: `Room Mate ${n}` });
    expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'guest room' }] }, mate));
    const gone = await expectStateConsistent(t, 'polonius', () => t.delete(`/users/${mate.id}`, {}, 'iago'), params);
    expect(withoutIds(gone.filter((e) => e.type === 'realm_user'))).toEqual([{ type: 'realm_user', op: 'remove', person: { user_id: mate.id, full_name: 'Unknown user' } }]);
    // A member hears the deactivation itself.
    const back = await expectStateConsistent(t, 'polonius', () => t.post(`/users/${mate.id}/reactivate`, {}, 'iago'), params);
    const adds = back.filter((e) => e.type === 'realm_user' && e.op === 'add');
    expect(adds.map((e) => [e.person.user_id, e.person.full_name, e.person.is_active])).toEqual([[mate.id, `Room Mate ${n}`, true]]);
    await setting('role:everyone');
  });

  it.each(PARAMS)('a deactivated direct-message partner stays accessible: the is_active update, no remove (%s)', async (_n, params) => {
    await setting('role:members');
    const n = Math.floor(Math.random() * 1e6);
    const partner = await t.createUser({ email: `pen${n}@zulip.com`, fullName: `Pen Pal ${n}` });
    await sendDirectMessage(t, partner, ['polonius'], 'hello');
    const events = await expectStateConsistent(t, 'polonius', () => t.delete(`/users/${partner.id}`, {}, 'iago'), params);
    expect(withoutIds(events.filter((e) => e.type === 'realm_user'))).toEqual([{ type: 'realm_user', op: 'update', person: { user_id: partner.id, is_active: false } }]);
    await setting('role:everyone');
  });

  it.each(PARAMS)('an inaccessible user deactivated: nothing about it reaches the guest (%s)', async (_n, params) => {
    await setting('role:members');
    const n = Math.floor(Math.random() * 1e6);
    const stranger = await t.createUser({ email: `far${n}@zulip.com`, fullName: `Far Away ${n}` });
    const events = await expectStateConsistent(t, 'polonius', () => t.delete(`/users/${stranger.id}`, {}, 'iago'), params);
    expect(events.filter((e) => e.type === 'realm_user')).toEqual([]);
    // It leaves its groups all the same (Zulip's user_group remove_members for those who cannot access it).
    expect(events.filter((e) => e.type === 'user_group').map((e) => [e.op, e.user_ids])).toEqual([
      ['remove_members', [stranger.id]],
      ['remove_members', [stranger.id]],
    ]);
    const back = await expectStateConsistent(t, 'polonius', () => t.post(`/users/${stranger.id}/reactivate`, {}, 'iago'), params);
    expect(back.filter((e) => e.type === 'realm_user')).toEqual([]);
    await setting('role:everyone');
  });

  it.each(PARAMS)('a guest promoted to member gets everyone it could not access; demoted again, the removes (%s)', async (_n, params) => {
    await setting('role:members');
    // Channels the guest left earlier in this file come back to the member as stream create
    // (never_subscribed) where a fresh /register lists them as unsubscribed: a channel-state
    // difference of role changes (README), not one of user access; those two keys are not compared.
    const promoted = await expectStateConsistent(t, 'polonius', () => t.patch(`/users/${t.users.polonius.id}`, { role: 400 }, 'iago'), params, { ignore: ['never_subscribed', 'unsubscribed'] });
    const added = promoted.filter((e) => e.type === 'realm_user' && e.op === 'add').map((e) => e.person.user_id);
    expect(added).toContain(uid('othello'));
    expect(added).not.toContain(uid('hamlet'));
    expect(promoted.find((e) => e.type === 'realm_user' && e.op === 'add' && e.person.user_id === uid('othello')).person.full_name).toBe('Othello, the Moor of Venice');
    const demoted = await expectStateConsistent(t, 'polonius', () => t.patch(`/users/${t.users.polonius.id}`, { role: 600 }, 'iago'), params);
    const removed = demoted.filter((e) => e.type === 'realm_user' && e.op === 'remove').map((e) => e.person.user_id);
    expect(removed).toContain(uid('othello'));
    expect(removed).not.toContain(uid('hamlet'));
    await setting('role:everyone');
  });

  it('a member demoted to guest in a restricting realm: removes for everyone it no longer accesses', async () => {
    await setting('role:members');
    const n = Math.floor(Math.random() * 1e6);
    const m = await t.createUser({ email: `demoted${n}@zulip.com`, fullName: `Demoted ${n}` });
    const events = await expectStateConsistent(t, m, () => t.patch(`/users/${m.id}`, { role: 600 }, 'iago'));
    const removed = events.filter((e) => e.type === 'realm_user' && e.op === 'remove').map((e) => e.person.user_id);
    expect(removed).toContain(uid('othello'));
    expect(removed).toContain(uid('hamlet'));
    expect(removed).not.toContain(t.users.bot.id);
    // The others do not notice anything but the role change.
    const forMember = await expectStateConsistent(t, 'hamlet', () => t.patch(`/users/${m.id}`, { role: 400 }, 'iago'));
    expect(forMember.filter((e) => e.type === 'realm_user').map((e) => e.op)).toEqual(['update']);
    await setting('role:everyone');
  });
});

describe('private channels and archived channels', () => {
  const params = { client_capabilities: caps({ user_list_incomplete: true }) };

  it('added to a private channel by a subscriber: its subscribers become accessible; removed by an admin: they go', async () => {
    await setting('role:members');
    const n = Math.floor(Math.random() * 1e6);
    const secret = await createChannel(t, `secret ${n}`, ['othello'], { invite_only: true });
    const added = await expectStateConsistent(t, 'polonius', async () => expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: `secret ${n}` }], principals: [t.users.polonius.id] }, 'othello')), params);
    expect(added.filter((e) => e.type === 'realm_user').map((e) => [e.op, e.person.user_id])).toEqual([['add', uid('othello')]]);
    const removed = await expectStateConsistent(t, 'polonius', async () => expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: [`secret ${n}`], principals: [t.users.polonius.id] }, 'owner')), params);
    expect(withoutIds(removed.filter((e) => e.type === 'realm_user'))).toEqual([{ type: 'realm_user', op: 'remove', person: { user_id: uid('othello'), full_name: 'Unknown user' } }]);
    expect(secret).toBeGreaterThan(0);
    await setting('role:everyone');
  });

  it('archiving a shared channel changes nothing about access (subscriptions stay, as in Zulip)', async () => {
    await setting('role:members');
    const n = Math.floor(Math.random() * 1e6);
    const shared = await createChannel(t, `to archive ${n}`, ['polonius', 'othello']);
    const events = await expectStateConsistent(t, 'polonius', async () => expectSuccess(await t.delete(`/streams/${shared}`, {}, 'owner')), { ...params, client_capabilities: caps({ user_list_incomplete: true, archived_channels: true }) });
    expect(events.filter((e) => e.type === 'realm_user')).toEqual([]);
    const body = await registerQueue(t, 'polonius', params);
    expect(body.realm_users.map((u: any) => u.user_id)).toContain(uid('othello'));
    await setting('role:everyone');
  });
});

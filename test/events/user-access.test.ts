import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_CAPABILITIES } from '../../src/state/register.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectStateConsistent, withoutIds } from '../support/events.js';
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

describe('membership of the setting group', () => {
  it('a guest added to (then removed from) the group gets full adds (then removes)', async () => {
    const vip = expectSuccess(await t.post('/user_groups/create', { name: 'vip', description: 'v', members: [uid('hamlet')] }, 'iago')).group_id;
    expectSuccess(await t.patch('/realm', { can_access_all_users_group: { new: vip } }, 'owner'));
    const params = { client_capabilities: caps({ user_list_incomplete: true }) };
    const added = await expectStateConsistent(t, 'polonius', () => t.post(`/user_groups/${vip}/members`, { add: [t.users.polonius.id] }, 'iago'), params);
    expect(added.filter((e) => e.type === 'realm_user' && e.op === 'add').map((e) => e.person.user_id)).toContain(uid('othello'));
    const removed = await expectStateConsistent(t, 'polonius', () => t.post(`/user_groups/${vip}/members`, { delete: [t.users.polonius.id] }, 'iago'), params);
    expect(removed.filter((e) => e.type === 'realm_user' && e.op === 'remove').map((e) => e.person.user_id)).toContain(uid('othello'));
    await setting('role:everyone');
  });
});

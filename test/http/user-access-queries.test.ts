import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessSets, userAccessOf } from '../../src/domain/access/user-access.js';
import type { Caller } from '../../src/domain/context.js';
import { ROLE_GUEST } from '../../src/domain/rules/users.js';
import { group, realmSetting } from '../support/channels.js';
import { getEvents, registerQueue } from '../support/events.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { expectSuccess, startTestServer, type FixtureName, type TestServer, type TestUser } from '../support/server.js';

/**
 * The accessible-user computation costs a constant number of statements
 * per request: one for a restricted guest, none for anyone else (members,
 * admins, and guests of realms without the restriction), whatever the
 * numbers of users, channels, subscriptions and direct messages.
 */
let t: TestServer;
const crowd: TestUser[] = [];
let channels = 0;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t?.close());

async function grow(users: number, channelCount: number): Promise<void> {
  for (let i = crowd.length; i < users; i++) {
    const u = await t.createUser({ email: `q${i}@zulip.com`, fullName: `Q ${i}`, role: i % 9 === 0 ? ROLE_GUEST : undefined });
    crowd.push(u);
    if (i % 4 === 0) await sendDirectMessage(t, u, ['polonius'], `hi ${i}`);
    if (i % 6 === 0) await sendDirectMessage(t, 'polonius', [u, 'hamlet'], `group ${i}`);
  }
  for (; channels < channelCount; channels++) {
    const members = crowd.filter((_, k) => (k + channels) % 3 === 0);
    const id = await createChannel(t, `q channel ${channels}`, [...(channels % 2 ? ['polonius'] : []), 'hamlet', ...members] as (FixtureName | TestUser)[]);
    await sendChannelMessage(t, 'hamlet', id, 't', `m ${channels}`);
  }
}

async function cost(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm caches
  const before = t.app.ctx.store.stats.queries;
  await fn();
  return t.app.ctx.store.stats.queries - before;
}

const register = (who: FixtureName) => async () => {
  const body = await registerQueue(t, who);
  await t.delete('/events', { queue_id: body.queue_id }, who);
};
const listUsers = (who: FixtureName) => async () => expectSuccess(await t.get('/users', {}, who));

async function measure(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const restricted of [false, true]) {
    await realmSetting(t, 'can_access_all_users_group', restricted ? 'role:members' : 'role:everyone');
    for (const who of ['iago', 'hamlet', 'polonius'] as const) {
      out[`register ${who} ${restricted ? 'restricted' : 'open'}`] = await cost(register(who));
      out[`GET /users ${who} ${restricted ? 'restricted' : 'open'}`] = await cost(listUsers(who));
    }
  }
  await realmSetting(t, 'can_access_all_users_group', 'role:everyone');
  return out;
}

describe('statement counts of restricted user access', () => {
  it('one statement for a restricted guest, none for members, admins and unrestricted guests; independent of the realm size', async () => {
    await grow(10, 3);
    const small = await measure();
    await grow(60, 25);
    const large = await measure();
    expect(large).toEqual(small);
    for (const who of ['iago', 'hamlet'] as const) {
      expect(small[`register ${who} restricted`]).toBe(small[`register ${who} open`]);
      expect(small[`GET /users ${who} restricted`]).toBe(small[`GET /users ${who} open`]);
    }
    expect(small['register polonius restricted']).toBe(small['register polonius open']! + 1);
    expect(small['GET /users polonius restricted']).toBe(small['GET /users polonius open']! + 1);
    // The restricted guest's view really was restricted, and it grew with its channels and conversations.
    await realmSetting(t, 'can_access_all_users_group', 'role:members');
    const body = await registerQueue(t, 'polonius', { client_capabilities: { ...(await import('../../src/state/register.js')).NO_CAPABILITIES, user_list_incomplete: true } });
    expect(body.realm_users.length).toBeGreaterThan(10);
    expect(body.realm_users.length).toBeLessThan(crowd.length + 8);
  }, 240_000);

  it('the access sets of every guest of the realm: one statement', async () => {
    await realmSetting(t, 'can_access_all_users_group', 'role:members');
    const g = await group(t, 'role:members');
    const before = t.app.ctx.store.stats.queries;
    const sets = await accessSets(t.app.ctx.db, t.realmId, g, 'all');
    expect(t.app.ctx.store.stats.queries - before).toBe(1);
    expect(sets.size).toBe(1 + crowd.filter((u) => u.role === ROLE_GUEST).length);
    const polonius = sets.get(t.users.polonius.id);
    expect(polonius).not.toBe('all');
    expect((polonius as Set<number>).has(t.users.hamlet.id)).toBe(true);
    expect((polonius as Set<number>).has(t.users.bot.id)).toBe(true);
    expect((polonius as Set<number>).has(t.users.othello.id)).toBe(false);
  });

  it('members and admins: no statement at all', async () => {
    const row = await t.row(t.users.hamlet.id);
    const caller: Caller = { id: row.id, realmId: row.realm_id, role: row.role, isBot: false, botType: null, email: row.delivery_email, deliveryEmail: row.delivery_email, fullName: row.full_name };
    const before = t.app.ctx.store.stats.queries;
    expect(await userAccessOf(t.app.ctx, caller)).toBe('all');
    expect(t.app.ctx.store.stats.queries - before).toBe(0);
    const q = await registerQueue(t, 'hamlet');
    expect(await getEvents(t, 'hamlet', q.queue_id, q.last_event_id)).toEqual([]);
  });
});

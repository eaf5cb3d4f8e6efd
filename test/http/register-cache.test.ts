import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clearRealmCache } from '../../src/state/realm-cache.js';
import { fakeEmailDomain } from '../../src/config.js';
import { streamNotificationDefaults } from '../../src/domain/actions/subscriptions.js';
import { weeklyTraffic, weeklyTrafficStableUntil } from '../../src/domain/rules/channels.js';
import { fillNotificationDefaults, loadChannelPresentation, presentChannel, presentSubscription } from '../../src/presenters/channel.js';
import { presentUser } from '../../src/presenters/user.js';
import { channelsInRealm, subscriptionRowsOfUser } from '../../src/store/channels.js';
import { profileDataByUser } from '../../src/store/profile-fields.js';
import { userById, usersInRealm } from '../../src/store/users.js';
import { expectSuccess, startTestServer, type FixtureName, type TestServer } from '../support/server.js';
import { registerQueue } from '../support/events.js';
import { createChannel } from '../support/messages.js';

/**
 * The realm cache of POST /register (state/realm-cache.ts): after every kind
 * of change to what it holds (the realm row, users, channels, groups and their
 * members and subgroups, subscriber counts), a registration answers exactly
 * what one with an empty cache answers, and shows the change. A change made
 * outside the server's database handle (another process) is seen too.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

async function register(who: FixtureName, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const body = await registerQueue(t, who, params);
  await t.delete('/events', { queue_id: body.queue_id }, who);
  // server_timestamp is the time of the answer; everything else must match.
  const { queue_id: _q, last_event_id: _l, server_timestamp: _s, ...state } = body;
  return state;
}

const VARIANTS: readonly [FixtureName, Record<string, unknown>][] = [
  ['hamlet', {}],
  ['iago', { include_subscribers: true }],
  ['polonius', {}],
  ['hamlet', { client_capabilities: { notification_settings_null: true, archived_channels: true, include_deactivated_groups: true } }],
  ['othello', { client_gravatar: false, include_subscribers: true }],
];

/** Registers (cache warm), then registers again with an empty cache: the two must agree. Returns the cached answers. */
async function expectFresh(): Promise<Record<string, any>[]> {
  const cached: Record<string, any>[] = [];
  for (const [who, params] of VARIANTS) cached.push(await register(who, params));
  clearRealmCache(t.app.ctx);
  for (let i = 0; i < VARIANTS.length; i++) {
    const [who, params] = VARIANTS[i]!;
    expect(cached[i]).toEqual(await register(who, params));
  }
  return cached;
}

/** Warms the cache with every variant, runs the change, and checks the next registrations. */
async function afterChange(change: () => Promise<unknown>): Promise<Record<string, any>[]> {
  for (const [who, params] of VARIANTS) await register(who, params);
  await change();
  return expectFresh();
}

const streamOf = (state: Record<string, any>, id: number): any => state.streams.find((s: any) => s.stream_id === id);
const subOf = (state: Record<string, any>, id: number): any => state.subscriptions.find((s: any) => s.stream_id === id);

describe('POST /register realm cache', () => {
  it('sees realm setting changes', async () => {
    const [hamlet] = await afterChange(async () => expectSuccess(await t.patch('/realm', { description: 'cached? no' }, 'iago')));
    expect(hamlet!.realm_description).toBe('cached? no');
  });

  it('sees users created, renamed and deactivated', async () => {
    let id = 0;
    let [hamlet] = await afterChange(async () => {
      id = (await t.createUser({ email: 'newcomer@zulip.com', fullName: 'New Comer' })).id;
    });
    expect(hamlet!.realm_users.some((u: any) => u.user_id === id)).toBe(true);
    [hamlet] = await afterChange(async () => expectSuccess(await t.patch(`/users/${id}`, { full_name: 'Renamed Comer' }, 'iago')));
    expect(hamlet!.realm_users.find((u: any) => u.user_id === id).full_name).toBe('Renamed Comer');
    [hamlet] = await afterChange(async () => expectSuccess(await t.delete(`/users/${id}`, {}, 'iago')));
    expect(hamlet!.realm_non_active_users.some((u: any) => u.user_id === id)).toBe(true);
  });

  it('sees channels created, changed and archived, and subscriber counts', async () => {
    let id = 0;
    let [hamlet] = await afterChange(async () => {
      id = await createChannel(t, 'cache channel', ['hamlet', 'iago']);
    });
    expect(streamOf(hamlet!, id).name).toBe('cache channel');
    expect(subOf(hamlet!, id).subscriber_count).toBe(2);
    [hamlet] = await afterChange(async () => expectSuccess(await t.patch(`/streams/${id}`, { description: 'now described' }, 'iago')));
    expect(streamOf(hamlet!, id).description).toBe('now described');
    let iago: Record<string, any>;
    [hamlet, iago] = await afterChange(async () => expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'cache channel' }], principals: [t.users.othello.id] }, 'iago')));
    expect(subOf(hamlet!, id).subscriber_count).toBe(3);
    expect(subOf(iago!, id).subscribers).toContain(t.users.othello.id);
    [hamlet] = await afterChange(async () => expectSuccess(await t.delete(`/streams/${id}`, {}, 'iago')));
    expect(streamOf(hamlet!, id)).toBeUndefined();
  });

  it('sees groups created, their members and subgroups', async () => {
    let id = 0;
    let [hamlet] = await afterChange(async () => {
      id = expectSuccess(await t.post('/user_groups/create', { name: 'cache group', description: 'g', members: [t.users.hamlet.id] }, 'iago')).group_id;
    });
    expect(hamlet!.realm_user_groups.find((g: any) => g.id === id).members).toEqual([t.users.hamlet.id]);
    [hamlet] = await afterChange(async () => expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [t.users.othello.id] }, 'iago')));
    expect(hamlet!.realm_user_groups.find((g: any) => g.id === id).members).toContain(t.users.othello.id);
    const other = expectSuccess(await t.post('/user_groups/create', { name: 'cache subgroup', description: 's', members: [t.users.iago.id] }, 'iago')).group_id;
    [hamlet] = await afterChange(async () => expectSuccess(await t.post(`/user_groups/${id}/subgroups`, { add: [other] }, 'iago')));
    expect(hamlet!.realm_user_groups.find((g: any) => g.id === id).direct_subgroup_ids).toEqual([other]);
  });

  it('sees a commit made by another connection to the SQLite file (another process)', async (testCtx) => {
    if (t.app.ctx.store.dialect !== 'sqlite') return testCtx.skip();
    await register('hamlet');
    const other = new SQLite(path.join(t.config.dataDir, 'parley.sqlite3'));
    try {
      other.pragma('busy_timeout = 5000');
      other.prepare('UPDATE users SET full_name = ? WHERE id = ?').run('Renamed Elsewhere', t.users.othello.id);
      other.prepare('UPDATE channels SET description = ? WHERE realm_id = ?').run('described elsewhere', t.realmId);
    } finally {
      other.close();
    }
    const [hamlet] = await expectFresh();
    expect(hamlet!.realm_users.find((u: any) => u.user_id === t.users.othello.id).full_name).toBe('Renamed Elsewhere');
    expect(hamlet!.streams.every((s: any) => s.description === 'described elsewhere')).toBe(true);
  });

  it('sees custom profile fields and their values', async () => {
    let field = 0;
    let [hamlet] = await afterChange(async () => {
      field = expectSuccess(await t.post('/realm/profile_fields', { name: 'Cached team', field_type: 1 }, 'iago')).id;
    });
    expect(hamlet!.custom_profile_fields.some((f: any) => f.id === field)).toBe(true);
    [hamlet] = await afterChange(async () => expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: field, value: 'blue team' }] }, 'othello')));
    expect(hamlet!.realm_users.find((u: any) => u.user_id === t.users.othello.id).profile_data[String(field)]).toMatchObject({ value: 'blue team' });
  });

  it('presents stream_weekly_traffic for the time of the registration, not of the kept channels', async () => {
    const id = await createChannel(t, 'young channel', ['hamlet']);
    const before = await register('hamlet');
    expect(streamOf(before, id).stream_weekly_traffic).toBeNull();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 8 * 86400 * 1000);
      // Nothing was written meanwhile: only the time tells the kept channels apart from the present ones.
      const [hamlet] = await expectFresh();
      expect(streamOf(hamlet!, id).stream_weekly_traffic).toBe(0);
      expect(subOf(hamlet!, id).stream_weekly_traffic).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps weeklyTrafficStableUntil in step with weeklyTraffic', () => {
    const created = 1_700_000_000;
    for (const age of [-86400, 0, 3600, 6 * 86400, 7 * 86400 - 1, 7 * 86400, 20 * 86400, 28 * 86400, 400 * 86400]) {
      const now = created + age;
      const until = weeklyTrafficStableUntil(created, now);
      expect(until).toBeGreaterThan(now);
      for (const later of [now + 1, now + 86399, Math.min(until - 1, now + 1000 * 86400)]) {
        if (later < until) expect(weeklyTraffic(created, later)).toBe(weeklyTraffic(created, now));
      }
      if (until !== Infinity) expect(weeklyTraffic(created, until)).not.toBe(weeklyTraffic(created, now));
    }
  });

  it('answers with the very bytes of presenting every channel, subscription and user anew', async () => {
    const db = t.app.ctx.db;
    const fake = fakeEmailDomain(t.app.ctx.config);
    await createChannel(t, 'bytes public', ['hamlet', 'othello']);
    await createChannel(t, 'bytes private', ['iago'], { invite_only: true });
    const left = await createChannel(t, 'bytes left', ['hamlet', 'othello']);
    expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['bytes left'] }, 'hamlet'));
    expect(left).toBeGreaterThan(0);
    const variants: [FixtureName, Record<string, unknown>][] = [
      ['hamlet', {}],
      ['iago', { client_gravatar: false, include_subscribers: true }],
      ['othello', { client_capabilities: { notification_settings_null: true, archived_channels: true } }],
    ];
    for (const [who, params] of variants) {
      for (let round = 0; round < 2; round++) {
        // Round 0 with an empty cache, round 1 from the kept parts.
        if (round === 0) clearRealmCache(t.app.ctx);
        const body = await register(who, params);
        const viewer = (await userById(db, t.realmId, t.users[who].id))!;
        const capabilities = (params.client_capabilities ?? {}) as Record<string, boolean>;
        const channels = await channelsInRealm(db, t.realmId, { excludeArchived: !capabilities.archived_channels });
        const pres = await loadChannelPresentation(db, channels);
        const byId = new Map(channels.map((c) => [c.id, c]));
        expect(JSON.stringify(body.streams)).toBe(JSON.stringify(body.streams.map((s: any) => presentChannel(byId.get(s.stream_id)!, pres))));
        const rows = new Map((await subscriptionRowsOfUser(db, viewer.id)).map((r) => [r.channel_id, r]));
        const defaults = streamNotificationDefaults(viewer.settings);
        for (const key of ['subscriptions', 'unsubscribed']) {
          const expected = body[key].map((s: any) => {
            const sub = presentSubscription(byId.get(s.stream_id)!, rows.get(s.stream_id)!, pres, s.subscribers);
            if (!capabilities.notification_settings_null) fillNotificationDefaults(sub, defaults);
            return sub;
          });
          expect(JSON.stringify(body[key])).toBe(JSON.stringify(expected));
        }
        const never = body.never_subscribed.map((s: any) => Object.assign(presentChannel(byId.get(s.stream_id)!, pres), s.subscribers ? { subscribers: s.subscribers } : {}));
        expect(JSON.stringify(body.never_subscribed)).toBe(JSON.stringify(never));
        const users = new Map((await usersInRealm(db, t.realmId)).map((u) => [u.id, u]));
        const view = { viewerId: viewer.id, viewerRole: viewer.role, fakeEmailDomain: fake, clientGravatar: params.client_gravatar !== false, includeCustomProfileFields: true, profileData: await profileDataByUser(db, t.realmId) };
        for (const key of ['realm_users', 'realm_non_active_users']) {
          const expected = body[key].map((u: any) => {
            const { is_active: _a, ...p } = presentUser(users.get(u.user_id)!, view);
            return p;
          });
          expect(JSON.stringify(body[key])).toBe(JSON.stringify(expected));
        }
        expect(body.realm_users.length).toBeGreaterThan(5);
        expect(body.subscriptions.length + body.never_subscribed.length).toBeGreaterThan(1);
        if (who === 'hamlet') expect(body.unsubscribed.map((s: any) => s.stream_id)).toContain(left);
      }
    }
  });

  it('applies the events that raced in at registration to the kept parts', async () => {
    const id = await createChannel(t, 'raced channel', ['hamlet', 'othello']);
    await register('hamlet'); // the kept parts are warm
    const queues = t.app.ctx.queues;
    const pending = queues.pending.bind(queues);
    // Changes committed after the state was read and before the raced events are taken.
    const spy = vi.spyOn(queues, 'pending').mockImplementationOnce(async (queueId: string) => {
      expectSuccess(await t.patch(`/users/${t.users.othello.id}`, { full_name: 'Raced Othello' }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { description: 'raced description' }, 'iago'));
      return pending(queueId);
    });
    let raced: Record<string, any>;
    try {
      raced = await register('hamlet');
    } finally {
      spy.mockRestore();
    }
    expect(raced.realm_users.find((u: any) => u.user_id === t.users.othello.id).full_name).toBe('Raced Othello');
    expect(streamOf(raced, id).description).toBe('raced description');
    expect(subOf(raced, id).description).toBe('raced description');
    clearRealmCache(t.app.ctx);
    expect(raced).toEqual(await register('hamlet'));
  });
});

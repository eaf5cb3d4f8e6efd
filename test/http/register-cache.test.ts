import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearRealmCache } from '../../src/state/realm-cache.js';
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
});

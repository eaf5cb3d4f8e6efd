import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectStateConsistent, withoutIds } from '../support/events.js';
import { multipartRequest, pngImage } from '../support/uploads.js';
import { APP_REGISTER_PARAMS } from '../support/mobile-app.js';
import { realmSetting } from '../support/channels.js';

/**
 * Issue 18, events of the mobile app's queues: realm_emoji add / update_one
 * for clients with individual_emoji_changes, muted_users and device events;
 * each time stale /register state + events == fresh state, with the app's
 * own /register parameters.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('mobile app queues', () => {
  it('individual_emoji_changes: one add per upload, one update_one per removal; others still get the whole set', async () => {
    const png = await pngImage(32, 32);
    let added = '';
    const appEvents = await expectStateConsistent(
      t,
      'hamlet',
      async () => {
        expectSuccess(await multipartRequest(t, 'POST', '/realm/emoji/wavey_thing', [{ filename: 'w.png', contentType: 'image/png', data: png }], {}, 'cordelia'));
        added = String((await t.app.ctx.db.selectFrom('realm_emoji').select('id').where('name', '=', 'wavey_thing').executeTakeFirstOrThrow()).id);
        expectSuccess(await t.delete('/realm/emoji/wavey_thing', {}, 'cordelia'));
      },
      APP_REGISTER_PARAMS,
    );
    const emoji = expectSuccess(await t.get('/realm/emoji', {}, 'hamlet')).emoji[added];
    expect(withoutIds(appEvents.filter((e) => e.type === 'realm_emoji'))).toEqual([
      { type: 'realm_emoji', op: 'add', emoji: { ...emoji, deactivated: false } },
      { type: 'realm_emoji', op: 'update_one', emoji_id: added, data: { deactivated: true } },
    ]);
    const legacy = await expectStateConsistent(t, 'hamlet', async () => {
      expectSuccess(await multipartRequest(t, 'POST', '/realm/emoji/wavey_thing', [{ filename: 'w.png', contentType: 'image/png', data: png }], {}, 'cordelia'));
    });
    expect(legacy.filter((e) => e.type === 'realm_emoji').map((e) => e.op)).toEqual(['update']);
  });

  it('muted users and devices, with the app\'s parameters', async () => {
    const events = await expectStateConsistent(
      t,
      'hamlet',
      async () => {
        expectSuccess(await t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'hamlet'));
        const d = expectSuccess(await t.post('/register_client_device', {}, 'hamlet')).device_id;
        expectSuccess(await t.post('/register_client_device', {}, 'hamlet'));
        expectSuccess(await t.post('/remove_client_device', { device_id: d }, 'hamlet'));
        expectSuccess(await t.delete(`/users/me/muted_users/${t.users.othello.id}`, {}, 'hamlet'));
      },
      APP_REGISTER_PARAMS,
    );
    expect(withoutIds(events).map((e) => `${e.type}${e.op ? '/' + e.op : ''}`)).toEqual(['muted_users', 'device/add', 'device/add', 'device/remove', 'muted_users']);
  });

  it('realm_wildcard_mention_policy follows can_mention_many_users_group (Zulip sends no event of its own for it)', async () => {
    const cases: [string | { direct_members: number[]; direct_subgroups: number[] }, number][] = [
      ['role:members', 2],
      ['role:fullmembers', 3],
      ['role:moderators', 7],
      ['role:nobody', 6],
      ['role:everyone', 1],
      ['role:owners', 1],
      ['role:administrators', 5],
    ];
    for (const [value, policy] of cases) {
      await expectStateConsistent(t, 'hamlet', () => realmSetting(t, 'can_mention_many_users_group', value), APP_REGISTER_PARAMS);
      expect(expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, 'hamlet')).realm_wildcard_mention_policy).toBe(policy);
    }
    // An anonymous group reads as "everyone", as in Zulip.
    await expectStateConsistent(
      t,
      'hamlet',
      async () => expectSuccess(await t.patch('/realm', { can_mention_many_users_group: { new: { direct_members: [t.users.iago.id], direct_subgroups: [] } } }, 'owner')),
      APP_REGISTER_PARAMS,
    );
    expect(expectSuccess(await t.post('/register', APP_REGISTER_PARAMS, 'hamlet')).realm_wildcard_mention_policy).toBe(1);
  });
});

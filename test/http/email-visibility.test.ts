import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doChangeEmailAddressVisibility } from '../../src/domain/actions/users.js';
import { gravatarUrl } from '../../src/presenters/user.js';
import { usersModule } from '../../src/state/users.js';
import { registerContext, expectModuleConsistent } from '../support/module-consistency.js';
import { expectError, expectSuccess, startTestServer, type FixtureName, type TestServer, type TestUser } from '../support/server.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

/** Recipients of a delivery, sorted (emitters need not sort them). */
const rcpt = (d: { userIds: readonly number[] }) => [...d.userIds].sort((a, b) => a - b);
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const setVisibility = async (u: TestUser, value: number) => {
  const row = await t.row(u.id);
  return t.captureEvents(() => transact(t.app.ctx, (tx) => doChangeEmailAddressVisibility(t.app.ctx, tx, row, value)));
};
const ids = (...names: FixtureName[]) => names.map((n) => t.users[n].id).sort((a, b) => a - b);
/** Active users (bots included) whose role passes, other than `except`, sorted. */
async function activeWithRole(pass: (role: number) => boolean, except: number): Promise<number[]> {
  const rows = await t.app.ctx.db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', t.realmId).where('is_active', '=', 1).orderBy('id').execute();
  return rows.filter((r) => r.id !== except && pass(r.role)).map((r) => r.id);
}

describe('doChangeEmailAddressVisibility', () => {
  it('1 -> 3 (admins): null delivery_email to exactly the users who lose sight, new_email and avatar to everyone', async () => {
    const u = await t.createUser({ email: 'Vis@zulip.com', fullName: 'Vis Ible' });
    const events = await setVisibility(u, 3);
    const dummy = `user${u.id}@zulip.testserver`;
    expect(events.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: null } }, ids('shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot')],
      [{ type: 'realm_user', op: 'update', person: { user_id: u.id, new_email: dummy } }, expect.any(Array)],
      [
        {
          type: 'realm_user',
          op: 'update',
          person: {
            user_id: u.id,
            avatar_source: 'G',
            avatar_url: gravatarUrl('vis@zulip.com', 1),
            avatar_url_medium: gravatarUrl('vis@zulip.com', 1, true),
            avatar_version: 1,
          },
        },
        expect.any(Array),
      ],
    ]);
    const everyone = [...ids('owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot'), u.id].sort((a, b) => a - b);
    expect(rcpt(events[1]!)).toEqual(everyone);
    expect(rcpt(events[2]!)).toEqual(everyone);
    expect(JSON.parse((await t.row(u.id)).settings).email_address_visibility).toBe(3);
  });

  it('3 -> 2 (members): the address to those who may now see it; no new_email between non-public values', async () => {
    const u = await t.createUser({ email: 'vis2@zulip.com', fullName: 'Vis Two' });
    await setVisibility(u, 3);
    const events = await setVisibility(u, 2);
    expect(events.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: 'vis2@zulip.com' } }, await activeWithRole((r) => r === 300 || r === 400, u.id)],
    ]);
  });

  it('2 -> 4 (nobody) hides it from admins too; 4 -> 5 (moderators) shows it to admins and moderators; 5 -> 1 to the rest', async () => {
    const u = await t.createUser({ email: 'vis3@zulip.com', fullName: 'Vis Three' });
    await setVisibility(u, 2);
    const nobody = await setVisibility(u, 4);
    expect(nobody.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: null } }, await activeWithRole((r) => r <= 400, u.id)],
    ]);
    const mods = await setVisibility(u, 5);
    expect(mods.map((e) => [e.event, rcpt(e)])).toEqual([
      [{ type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: 'vis3@zulip.com' } }, await activeWithRole((r) => r <= 300, u.id)],
    ]);
    const all = await setVisibility(u, 1);
    expect(all.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: 'vis3@zulip.com' } },
      { type: 'realm_user', op: 'update', person: { user_id: u.id, new_email: 'vis3@zulip.com' } },
      expect.objectContaining({ type: 'realm_user', op: 'update' }),
    ]);
    expect(rcpt(all[0]!)).toEqual(await activeWithRole((r) => r >= 400, u.id));
    // Setting the same value again sends nothing.
    expect(await setVisibility(u, 1)).toEqual([]);
  });

  it('realm_users stays consistent for every kind of viewer', async () => {
    const u = await t.createUser({ email: 'vis4@zulip.com', fullName: 'Vis Four' });
    for (const who of ['owner', 'shiva', 'hamlet', 'polonius'] as const) {
      await expectModuleConsistent(t, usersModule, who, async () => {
        for (const v of [3, 2, 4, 5, 1, 2]) await setVisibility(u, v);
      });
    }
  });
});

describe('a member never receives a hidden delivery email', () => {
  it('through user endpoints, /register and the events of every profile change', async () => {
    const secretAddress = 'secret.person@zulip.com';
    const u = await t.createUser({ email: secretAddress, fullName: 'Secret Person' });
    const viewers: FixtureName[] = ['hamlet', 'polonius', 'shiva'];
    const deliveries = await t.captureEvents(async () => {
      await setVisibility(u, 3);
      expectSuccess(await t.patch(`/users/${u.id}`, { full_name: 'Secret Renamed' }, 'iago'));
      expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'a.png', contentType: 'image/png', data: await pngImage() }], {}, u));
      expectSuccess(await t.delete('/users/me/avatar', {}, u));
      expectSuccess(await t.post('/users/me/status', { status_text: 'hidden' }, u));
      const field = expectSuccess(await t.post('/realm/profile_fields', { name: 'Secret field', field_type: 1 }, 'iago')).id;
      expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: field, value: 'v' }] }, u));
      const bot = expectSuccess(await t.post('/bots', { full_name: 'Secret Bot', short_name: 'secretbot' }, u));
      expectSuccess(await t.patch(`/bots/${bot.user_id}`, { bot_owner_id: t.users.hamlet.id }, u));
      expectSuccess(await t.patch(`/users/${u.id}`, { role: 300 }, 'iago'));
      expectSuccess(await t.patch(`/users/${u.id}`, { role: 400 }, 'iago'));
      expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
      expectSuccess(await t.post(`/users/${u.id}/reactivate`, {}, 'iago'));
    });
    expect(deliveries.length).toBeGreaterThan(10);
    for (const name of viewers) {
      const mine = deliveries.filter((d) => rcpt(d).includes(t.users[name].id));
      expect(mine.length).toBeGreaterThan(5);
      expect(JSON.stringify(mine.map((d) => d.event))).not.toContain('secret.person');
      for (const [url, params] of [
        ['/users', { client_gravatar: false, include_custom_profile_fields: true }],
        [`/users/${u.id}`, { client_gravatar: false }],
        [`/users/user${u.id}@zulip.testserver`, {}],
        ['/bots', {}],
      ] as const) {
        const res = await t.get(url, params, name);
        if (name === 'polonius' && url === '/bots') continue;
        expect(JSON.stringify(expectSuccess(res))).not.toContain('secret.person');
      }
      expectError(await t.get(`/users/${secretAddress}`, {}, name), 400, 'BAD_REQUEST', 'No such user');
      const ctx = await registerContext(t, name);
      expect(JSON.stringify(await usersModule.fetch(ctx))).not.toContain('secret.person');
    }
    // Administrators do see it, and the user sees their own.
    expect(expectSuccess(await t.get(`/users/${u.id}`, {}, 'iago')).user.delivery_email).toBe(secretAddress);
    expect(expectSuccess(await t.get('/users/me', {}, u)).delivery_email).toBe(secretAddress);
  });
});

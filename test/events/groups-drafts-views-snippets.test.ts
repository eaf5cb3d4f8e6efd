import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doDeactivateUser } from '../../src/domain/actions/users.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { expectStateConsistent, withoutIds } from '../support/events.js';
import { NO_CAPABILITIES } from '../../src/state/register.js';

/**
 * Issue 7's state through real queues: /register before an action, plus the
 * events the queue received, equals a fresh /register — for clients with and
 * without include_deactivated_groups.
 */

let t: TestServer;
let nobody = 0;
beforeAll(async () => {
  t = await startTestServer();
  nobody = (await t.app.ctx.db.selectFrom('user_groups').select('id').where('name', '=', 'role:nobody').executeTakeFirstOrThrow()).id;
});
afterAll(async () => t.close());

let seq = 0;
const uniq = (base: string) => `${base}-${++seq}`;

const CLIENTS: Record<string, Record<string, unknown>> = {
  'client without include_deactivated_groups': { fetch_event_types: ['realm_user_groups'] },
  'client with include_deactivated_groups': {
    fetch_event_types: ['realm_user_groups'],
    client_capabilities: { ...NO_CAPABILITIES, include_deactivated_groups: true },
  },
  'client asking for every event type': { event_types: ['user_group', 'realm_user'], fetch_event_types: ['realm_user_groups', 'realm_user'] },
};

describe.each(Object.entries(CLIENTS))('realm_user_groups, %s', (_name, params) => {
  it('create, members, subgroups, settings, rename, deactivate, rename while deactivated, reactivate, user deactivation', async () => {
    const { othello, cordelia, hamlet } = t.users;
    const sub = expectSuccess(await t.post('/user_groups/create', { name: uniq('sub'), description: '', members: [cordelia.id] }, 'hamlet')).group_id;
    let id = 0;
    const created = await expectStateConsistent(t, 'cordelia', async () => {
      id = expectSuccess(await t.post('/user_groups/create', { name: uniq('g'), description: 'd', members: [othello.id], subgroups: [sub] }, 'hamlet')).group_id;
    }, params);
    expect(withoutIds(created).map((e) => e.op)).toEqual(['add', 'add_subgroups']);
    await expectStateConsistent(t, 'cordelia', async () => {
      expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [cordelia.id], delete: [othello.id], delete_subgroups: [sub] }, 'hamlet'));
      expectSuccess(await t.post(`/user_groups/${id}/subgroups`, { add: [sub] }, 'hamlet'));
      expectSuccess(await t.patch(`/user_groups/${id}`, { name: uniq('renamed'), description: 'new', can_manage_group: { new: { direct_members: [hamlet.id, cordelia.id], direct_subgroups: [sub] } }, can_join_group: { new: nobody } }, 'hamlet'));
    }, params);
    const deactivation = await expectStateConsistent(t, 'cordelia', async () => {
      expectSuccess(await t.post(`/user_groups/${id}/deactivate`, {}, 'hamlet'));
      expectSuccess(await t.patch(`/user_groups/${id}`, { name: uniq('while-off') }, 'hamlet'));
    }, params);
    const caps = params.client_capabilities as { include_deactivated_groups?: boolean } | undefined;
    if (caps?.include_deactivated_groups) {
      // update {deactivated: true}, then the rename; no remove.
      expect(withoutIds(deactivation).map((e) => [e.op, Object.keys(e.data ?? {})])).toEqual([['update', ['deactivated']], ['update', ['name']]]);
    } else {
      // Only remove: neither the deactivation update nor the rename of a deactivated group.
      expect(withoutIds(deactivation)).toEqual([{ type: 'user_group', op: 'remove', group_id: id }]);
    }
    const reactivation = await expectStateConsistent(t, 'cordelia', async () => {
      expectSuccess(await t.patch(`/user_groups/${id}`, { deactivated: false }, 'hamlet'));
    }, params);
    expect(withoutIds(reactivation).map((e) => e.op)).toEqual(caps?.include_deactivated_groups ? ['update'] : ['add']);
    for (const e of withoutIds(reactivation)) expect(Object.keys(e).some((k) => k.startsWith('__'))).toBe(false);
    const member = await t.createUser({ email: `${uniq('member')}@zulip.com`, fullName: 'Member' });
    await expectStateConsistent(t, 'cordelia', async () => {
      expectSuccess(await t.post(`/user_groups/${id}/members`, { add: [member.id] }, 'hamlet'));
      expectSuccess(await t.patch(`/user_groups/${id}`, { can_mention_group: { new: { direct_members: [member.id, hamlet.id], direct_subgroups: [] } } }, 'hamlet'));
      const row = await t.row(member.id);
      await transact(t.app.ctx, (tx) => doDeactivateUser(tx, row));
    }, params);
  });
});

describe('drafts, navigation_views, saved_snippets', () => {
  const params = { fetch_event_types: ['drafts', 'navigation_views', 'saved_snippets'] };

  it('drafts add, update, remove', async () => {
    let ids: number[] = [];
    const events = await expectStateConsistent(t, 'hamlet', async () => {
      ids = expectSuccess(await t.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'one', timestamp: 1600000000.7 }, { type: 'private', to: [t.users.othello.id], topic: '', content: 'two', timestamp: 1600000000.2 }] }, 'hamlet')).ids;
    }, params);
    expect(withoutIds(events).map((e) => [e.type, e.op])).toEqual([['drafts', 'add']]);
    await expectStateConsistent(t, 'hamlet', async () => {
      expectSuccess(await t.patch(`/drafts/${ids[0]}`, { draft: { type: '', to: [], topic: '', content: 'edited', timestamp: 1700000000 } }, 'hamlet'));
      expectSuccess(await t.delete(`/drafts/${ids[1]}`, {}, 'hamlet'));
    }, params);
  });

  it('navigation views add, update, remove', async () => {
    await expectStateConsistent(t, 'hamlet', async () => {
      expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alerts' }, 'hamlet'));
      expectSuccess(await t.post('/navigation_views', { fragment: 'recent', is_pinned: false }, 'hamlet'));
      expectSuccess(await t.patch('/navigation_views/narrow/is/alerted', { is_pinned: false, name: 'Alert words' }, 'hamlet'));
      expectSuccess(await t.delete('/navigation_views/recent', {}, 'hamlet'));
    }, params);
  });

  it('saved snippets add, update, remove', async () => {
    await expectStateConsistent(t, 'hamlet', async () => {
      const a = expectSuccess(await t.post('/saved_snippets', { title: 'A', content: 'a' }, 'hamlet')).saved_snippet_id;
      const b = expectSuccess(await t.post('/saved_snippets', { title: 'B', content: 'b' }, 'hamlet')).saved_snippet_id;
      expectSuccess(await t.patch(`/saved_snippets/${a}`, { content: 'a2' }, 'hamlet'));
      expectSuccess(await t.delete(`/saved_snippets/${b}`, {}, 'hamlet'));
    }, params);
  });
});

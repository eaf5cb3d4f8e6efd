import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { navigationViewsModule } from '../../src/state/navigation-views.js';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const UNAUTH = 'Not logged in: API authentication or user session required';

async function rows(): Promise<unknown> {
  return t.app.ctx.db.selectFrom('navigation_views').selectAll().orderBy('id').execute();
}

async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await rows();
  let res: Res | undefined;
  const events = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res!, status, code, msg, extra);
  expect(events).toEqual([]);
  expect(await rows()).toEqual(before);
}

const sent = (deliveries: { event: unknown; userIds: readonly number[] }[]) => deliveries.map((d) => ({ event: d.event, userIds: d.userIds }));

describe('POST /navigation_views', () => {
  it('adds custom views and settings for built-in views; navigation_view add goes to the user only', async () => {
    const hamlet = t.users.hamlet.id;
    let deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alert words' }, 'hamlet'));
    });
    expect(sent(deliveries)).toEqual([
      { event: { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alert words' } }, userIds: [hamlet] },
    ]);
    deliveries = await t.captureEvents(async () => {
      const body = expectSuccess(await t.post('/navigation_views', { fragment: ' inbox ', is_pinned: false }, 'hamlet'));
      expect(body).toEqual({ result: 'success', msg: '' });
    });
    expect(sent(deliveries)).toEqual([{ event: { type: 'navigation_view', op: 'add', navigation_view: { fragment: 'inbox', is_pinned: false, name: null } }, userIds: [hamlet] }]);
    expect(expectSuccess(await t.get('/navigation_views', {}, 'hamlet')).navigation_views).toEqual([
      { fragment: 'narrow/is/alerted', is_pinned: true, name: 'Alert words' },
      { fragment: 'inbox', is_pinned: false, name: null },
    ]);
    // The same fragment is free for another user.
    expectSuccess(await t.post('/navigation_views', { fragment: 'inbox', is_pinned: true }, 'othello'));
  });

  it('refusals', async () => {
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/stream/1-x', is_pinned: true, name: 'Channel x' }, 'cordelia'));
    await refused(() => t.post('/navigation_views', { fragment: '  ', is_pinned: true, name: 'x' }, 'cordelia'), 400, 'BAD_REQUEST', 'fragment cannot be blank');
    await refused(() => t.post('/navigation_views', { is_pinned: true, name: 'x' }, 'cordelia'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'fragment' argument", { var_name: 'fragment' });
    await refused(() => t.post('/navigation_views', { fragment: 'a', name: 'x' }, 'cordelia'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'is_pinned' argument", { var_name: 'is_pinned' });
    await refused(() => t.post('/navigation_views', { fragment: 'a', is_pinned: 'yes', name: 'x' }, 'cordelia'), 400, 'BAD_REQUEST', 'is_pinned is not valid JSON');
    await refused(() => t.post('/navigation_views', { fragment: 'a', is_pinned: true, name: ' ' }, 'cordelia'), 400, 'BAD_REQUEST', 'name cannot be blank');
    await refused(() => t.post('/navigation_views', { fragment: 'recent', is_pinned: true, name: 'Recent' }, 'cordelia'), 400, 'BAD_REQUEST', 'Built-in views cannot have a custom name.');
    await refused(() => t.post('/navigation_views', { fragment: 'narrow/is/dm', is_pinned: true }, 'cordelia'), 400, 'BAD_REQUEST', 'Custom views must have a valid name.');
    await refused(() => t.post('/navigation_views', { fragment: 'narrow/stream/1-x', is_pinned: false, name: 'Other' }, 'cordelia'), 400, 'BAD_REQUEST', 'Navigation view already exists.');
    await refused(() => t.post('/navigation_views', { fragment: 'narrow/stream/2-y', is_pinned: false, name: 'Channel x' }, 'cordelia'), 400, 'BAD_REQUEST', 'Navigation view already exists.');
    await refused(() => t.post('/navigation_views', { fragment: 'a', is_pinned: true, name: 'x' }, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('PATCH /navigation_views/{fragment}', () => {
  it('updates is_pinned and name; the fragment may contain slashes', async () => {
    const shiva = t.users.shiva.id;
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/followed', is_pinned: false, name: 'Followed' }, 'shiva'));
    let deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.patch('/navigation_views/narrow/is/followed', { is_pinned: true, name: 'My followed' }, 'shiva'));
    });
    expect(sent(deliveries)).toEqual([
      { event: { type: 'navigation_view', op: 'update', fragment: 'narrow/is/followed', data: { name: 'My followed', is_pinned: true } }, userIds: [shiva] },
    ]);
    // Neither field: still an update with empty data, as in Zulip.
    deliveries = await t.captureEvents(async () => expectSuccess(await t.patch('/navigation_views/narrow/is/followed', {}, 'shiva')));
    expect(sent(deliveries)).toEqual([{ event: { type: 'navigation_view', op: 'update', fragment: 'narrow/is/followed', data: {} }, userIds: [shiva] }]);
    expectSuccess(await t.post('/navigation_views', { fragment: 'feed', is_pinned: true }, 'shiva'));
    expectSuccess(await t.patch('/navigation_views/feed', { is_pinned: false }, 'shiva'));
    expect(expectSuccess(await t.get('/navigation_views', {}, 'shiva')).navigation_views).toEqual([
      { fragment: 'narrow/is/followed', is_pinned: true, name: 'My followed' },
      { fragment: 'feed', is_pinned: false, name: null },
    ]);
  });

  it("refusals: other users' views are as missing as unknown ones", async () => {
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/unread', is_pinned: false, name: 'Unread' }, 'iago'));
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/private', is_pinned: false, name: 'Private' }, 'othello'));
    await refused(() => t.patch('/navigation_views/narrow/is/private', { is_pinned: true }, 'iago'), 404, 'BAD_REQUEST', 'Navigation view does not exist.');
    await refused(() => t.patch('/navigation_views/nothing/here', { is_pinned: true }, 'iago'), 404, 'BAD_REQUEST', 'Navigation view does not exist.');
    await refused(() => t.patch('/navigation_views/inbox', { name: 'Box' }, 'iago'), 400, 'BAD_REQUEST', 'Built-in views cannot have a custom name.');
    // The name check comes first and matches the view's own name too.
    await refused(() => t.patch('/navigation_views/narrow/is/unread', { name: 'Unread' }, 'iago'), 400, 'BAD_REQUEST', 'Navigation view already exists.');
    await refused(() => t.patch('/navigation_views/narrow/is/unread', { name: ' ' }, 'iago'), 400, 'BAD_REQUEST', 'name cannot be blank');
    await refused(() => t.patch('/navigation_views/narrow/is/unread', { is_pinned: 1 }, 'iago'), 400, 'BAD_REQUEST', 'is_pinned is not a boolean');
    await refused(() => t.patch('/navigation_views/narrow/is/unread', { is_pinned: true }, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('DELETE /navigation_views/{fragment}', () => {
  it('removes the view with a remove event; missing or foreign views are 404', async () => {
    const owner = t.users.owner.id;
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/resolved', is_pinned: true, name: 'Resolved' }, 'owner'));
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/resolved', is_pinned: true, name: 'Resolved' }, 'polonius'));
    await refused(() => t.delete('/navigation_views/narrow/is/resolved', {}, null), 401, 'UNAUTHORIZED', UNAUTH);
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.delete('/navigation_views/narrow/is/resolved', {}, 'owner')));
    expect(sent(deliveries)).toEqual([{ event: { type: 'navigation_view', op: 'remove', fragment: 'narrow/is/resolved' }, userIds: [owner] }]);
    await refused(() => t.delete('/navigation_views/narrow/is/resolved', {}, 'owner'), 404, 'BAD_REQUEST', 'Navigation view does not exist.');
    // The guest's own view is untouched.
    expect(expectSuccess(await t.get('/navigation_views', {}, 'polonius')).navigation_views).toEqual([{ fragment: 'narrow/is/resolved', is_pinned: true, name: 'Resolved' }]);
  });
});

describe('GET /navigation_views', () => {
  it("shows only the caller's views; no credentials refused", async () => {
    expect(expectSuccess(await t.get('/navigation_views', {}, 'bot')).navigation_views).toEqual([]);
    expectError(await t.get('/navigation_views', {}, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('navigation_views in /register stays in step with navigation_view events', () => {
  it('add, update, remove', async () => {
    await expectModuleConsistent(t, navigationViewsModule, 'hamlet', async () => {
      expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/has/link', is_pinned: true, name: 'Links' }, 'hamlet'));
      expectSuccess(await t.post('/navigation_views', { fragment: 'drafts', is_pinned: false }, 'hamlet'));
      expectSuccess(await t.patch('/navigation_views/narrow/has/link', { is_pinned: false, name: 'All links' }, 'hamlet'));
      expectSuccess(await t.patch('/navigation_views/drafts', { is_pinned: true }, 'hamlet'));
      expectSuccess(await t.delete('/navigation_views/inbox', {}, 'hamlet'));
      expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/has/link', is_pinned: true, name: 'Links' }, 'othello'));
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doDeactivateUser } from '../../src/domain/actions/users.js';
import { draftsModule } from '../../src/state/drafts.js';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectModuleConsistent, registerContext } from '../support/module-consistency.js';

let t: TestServer;
let publicChannel: number;
let privateChannel: number;
beforeAll(async () => {
  t = await startTestServer();
  publicChannel = expectSuccess(await t.post('/channels/create', { name: 'drafts-public', subscribers: [t.users.hamlet.id] }, 'iago')).id;
  privateChannel = expectSuccess(await t.post('/channels/create', { name: 'drafts-private', subscribers: [t.users.iago.id], invite_only: true }, 'iago')).id;
});
afterAll(async () => t.close());

const UNAUTH = 'Not logged in: API authentication or user session required';
const draft = (over: Record<string, unknown> = {}) => ({ type: '', to: [], topic: '', content: 'Hello', timestamp: 1700000000, ...over });

async function allDrafts(): Promise<unknown> {
  return t.app.ctx.db.selectFrom('drafts').selectAll().orderBy('id').execute();
}

/** A refused request: exact error, no row changed, no event. */
async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await allDrafts();
  let res: Res | undefined;
  const events = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res!, status, code, msg, extra);
  expect(events).toEqual([]);
  expect(await allDrafts()).toEqual(before);
}

async function createOne(over: Record<string, unknown> = {}, as = 'hamlet'): Promise<number> {
  return expectSuccess(await t.post('/drafts', { drafts: [draft(over)] }, as as never)).ids[0];
}

describe('POST /drafts', () => {
  it('creates a batch, answers the ids in order, and sends one add event to the owner only', async () => {
    const { hamlet, othello, cordelia } = t.users;
    let res: Res | undefined;
    const deliveries = await t.captureEvents(async () => {
      res = await t.post('/drafts', {
        drafts: [
          draft({ type: 'stream', to: [publicChannel], topic: 'lunch', content: '  Let us eat  \n', timestamp: 1700000100.5 }),
          draft({ type: 'private', to: [othello.id, cordelia.id, hamlet.id], topic: 'ignored', content: 'hi both' }),
          draft({ type: 'private', to: [hamlet.id], content: 'note to self' }),
          draft({ type: 'private', to: [], content: 'nobody yet' }),
          draft({ type: '', to: [othello.id], topic: 'x', content: 'unaddressed' }),
        ],
      });
    });
    const ids = expectSuccess(res!).ids;
    expect(ids).toHaveLength(5);
    const expected = [
      { id: ids[0], type: 'stream', to: [publicChannel], topic: 'lunch', content: 'Let us eat', timestamp: 1700000100 },
      { id: ids[1], type: 'private', to: [othello.id, cordelia.id].sort((a, b) => a - b), topic: '', content: 'hi both', timestamp: 1700000000 },
      { id: ids[2], type: 'private', to: [hamlet.id], topic: '', content: 'note to self', timestamp: 1700000000 },
      { id: ids[3], type: '', to: [], topic: '', content: 'nobody yet', timestamp: 1700000000 },
      { id: ids[4], type: '', to: [], topic: '', content: 'unaddressed', timestamp: 1700000000 },
    ];
    expect(deliveries.map((d) => ({ event: d.event, userIds: d.userIds }))).toEqual([{ event: { type: 'drafts', op: 'add', drafts: expected }, userIds: [hamlet.id] }]);
    const listed = expectSuccess(await t.get('/drafts', {}, 'hamlet'));
    const mine = listed.drafts.filter((d: any) => ids.includes(d.id));
    // Oldest edit first.
    expect(mine).toEqual([expected[1], expected[2], expected[3], expected[4], expected[0]]);
    expect(listed.count).toBe(listed.drafts.length);
  });

  it('defaults the timestamp to now, truncates long content and channel topics', async () => {
    const before = Math.floor(Date.now() / 1000);
    const id = expectSuccess(
      await t.post('/drafts', { drafts: [{ type: 'stream', to: [publicChannel], topic: 't'.repeat(70), content: 'x'.repeat(10050) }] }, 'hamlet'),
    ).ids[0];
    const d = expectSuccess(await t.get('/drafts', {}, 'hamlet')).drafts.find((x: any) => x.id === id);
    expect(d.timestamp).toBeGreaterThanOrEqual(before);
    expect(d.timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(d.topic).toBe('t'.repeat(57) + '...');
    expect(d.content).toBe('x'.repeat(10000 - 20) + '\n[message truncated]');
    expect(d.content).toHaveLength(10000);
  });

  it('validates every draft before creating any, in Zulip order and wording', async () => {
    const { othello } = t.users;
    const post = (drafts: unknown) => () => t.post('/drafts', { drafts }, 'hamlet');
    await refused(() => t.post('/drafts', {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'drafts' argument", { var_name: 'drafts' });
    await refused(() => t.post('/drafts', { drafts: '[{' }, 'hamlet'), 400, 'BAD_REQUEST', 'drafts is not valid JSON');
    await refused(post({}), 400, 'BAD_REQUEST', 'drafts is not a list');
    await refused(post([draft({ type: 'direct' })]), 400, 'BAD_REQUEST', 'Invalid drafts[0]["type"]');
    await refused(post([draft(), draft({ to: 'x' })]), 400, 'BAD_REQUEST', 'drafts[1]["to"] is not a list');
    await refused(post([draft({ extra: 1 })]), 400, 'BAD_REQUEST', 'Argument "extra" at drafts[0] is unexpected');
    await refused(post([{ type: '', to: [], content: 'x' }]), 400, 'BAD_REQUEST', 'drafts[0]["topic"] field is missing');
    await refused(post([draft({ content: '   ' })]), 400, 'BAD_REQUEST', 'drafts[0]["content"] cannot be blank');
    await refused(post([draft({ content: 'a\u0000b' })]), 400, 'BAD_REQUEST', 'Message must not contain null bytes');
    await refused(post([draft({ timestamp: -5 })]), 400, 'BAD_REQUEST', 'Timestamp must not be negative.');
    await refused(post([draft({ type: 'stream', to: [publicChannel], topic: 'a\u0000' })]), 400, 'BAD_REQUEST', 'Topic must not contain null bytes');
    await refused(post([draft({ type: 'stream', to: [] })]), 400, 'BAD_REQUEST', 'Must specify exactly 1 channel ID for channel messages');
    await refused(post([draft({ type: 'stream', to: [publicChannel, privateChannel] })]), 400, 'BAD_REQUEST', 'Must specify exactly 1 channel ID for channel messages');
    await refused(post([draft({ type: 'stream', to: [99999] })]), 400, 'BAD_REQUEST', 'Invalid channel ID');
    // A private channel the user is not subscribed to is as unknown as a missing one.
    await refused(post([draft({ type: 'stream', to: [privateChannel] })]), 400, 'BAD_REQUEST', 'Invalid channel ID');
    await refused(post([draft({ type: 'private', to: [othello.id, 99999] })]), 400, 'BAD_REQUEST', 'Invalid user ID 99999');
    const gone = await t.createUser({ email: 'gone-draft@zulip.com', fullName: 'Gone Draft' });
    const row = await t.row(gone.id);
    await transact(t.app.ctx, (tx) => doDeactivateUser(tx, row));
    await refused(post([draft({ type: 'private', to: [gone.id] })]), 400, 'BAD_REQUEST', "'gone-draft@zulip.com' is no longer using Zulip.");
    // One bad draft anywhere in the batch: nothing is created.
    await refused(post([draft(), draft({ type: 'private', to: [99999] })]), 400, 'BAD_REQUEST', 'Invalid user ID 99999');
    await refused(() => t.post('/drafts', { drafts: [draft()] }, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('PATCH /drafts/{draft_id}', () => {
  it('replaces the whole draft and sends update to the owner', async () => {
    const id = await createOne({ type: 'stream', to: [publicChannel], topic: 'old', content: 'old' });
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.patch(`/drafts/${id}`, { draft: draft({ type: 'private', to: [t.users.othello.id], topic: 'dropped', content: 'new text', timestamp: 1700000500 }) }, 'hamlet'));
    });
    const expected = { id, type: 'private', to: [t.users.othello.id], topic: '', content: 'new text', timestamp: 1700000500 };
    expect(deliveries.map((d) => ({ event: d.event, userIds: d.userIds }))).toEqual([{ event: { type: 'drafts', op: 'update', draft: expected }, userIds: [t.users.hamlet.id] }]);
    expect(expectSuccess(await t.get('/drafts', {}, 'hamlet')).drafts.find((d: any) => d.id === id)).toEqual(expected);
  });

  it('refusals: missing or foreign draft (404, before the content is checked), bad draft, no credentials', async () => {
    const id = await createOne();
    const foreign = await createOne({}, 'othello');
    await refused(() => t.patch('/drafts/99999', { draft: draft() }, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
    await refused(() => t.patch(`/drafts/${foreign}`, { draft: draft() }, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
    await refused(() => t.patch('/drafts/99999', { draft: draft({ type: 'private', to: [99999] }) }, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
    await refused(() => t.patch(`/drafts/${id}`, {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'draft' argument", { var_name: 'draft' });
    await refused(() => t.patch(`/drafts/${id}`, { draft: { type: '', to: [], topic: '' } }, 'hamlet'), 400, 'BAD_REQUEST', 'draft["content"] field is missing');
    await refused(() => t.patch(`/drafts/${id}`, { draft: draft({ type: 'private', to: [99999] }) }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user ID 99999');
    await refused(() => t.patch(`/drafts/${id}`, { draft: draft() }, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('DELETE /drafts/{draft_id}', () => {
  it('deletes and sends remove to the owner; a missing or foreign draft is 404', async () => {
    const id = await createOne();
    const foreign = await createOne({}, 'othello');
    await refused(() => t.delete(`/drafts/${foreign}`, {}, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
    await refused(() => t.delete(`/drafts/${id}`, {}, null), 401, 'UNAUTHORIZED', UNAUTH);
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.delete(`/drafts/${id}`, {}, 'hamlet')));
    expect(deliveries.map((d) => ({ event: d.event, userIds: d.userIds }))).toEqual([{ event: { type: 'drafts', op: 'remove', draft_id: id }, userIds: [t.users.hamlet.id] }]);
    await refused(() => t.delete(`/drafts/${id}`, {}, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
  });
});

describe('GET /drafts', () => {
  it("lists only the caller's drafts; no credentials refused", async () => {
    const foreign = await createOne({}, 'othello');
    const mine = expectSuccess(await t.get('/drafts', {}, 'hamlet'));
    expect(mine.drafts.map((d: any) => d.id)).not.toContain(foreign);
    expect(expectSuccess(await t.get('/drafts', {}, 'othello')).drafts.map((d: any) => d.id)).toContain(foreign);
    expectError(await t.get('/drafts', {}, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('ids and times out of range', () => {
  it('are unknown ids or refused values (never a database error)', async () => {
    const big = 999999999999999;
    await refused(() => t.patch(`/drafts/${big}`, { draft: draft() }, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
    await refused(() => t.delete(`/drafts/${big}`, {}, 'hamlet'), 404, 'BAD_REQUEST', 'Draft does not exist');
    await refused(() => t.post('/drafts', { drafts: [draft({ type: 'private', to: [big] })] }, 'hamlet'), 400, 'BAD_REQUEST', `Invalid user ID ${big}`);
    await refused(() => t.post('/drafts', { drafts: [draft({ type: 'stream', to: [big] })] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid channel ID');
    await refused(() => t.post('/drafts', { drafts: [draft({ timestamp: 1e300 })] }, 'hamlet'), 400, 'BAD_REQUEST', 'drafts[0]["timestamp"] is too large');
  });
});

describe('enable_drafts_synchronization', () => {
  it('turning it off deletes the drafts without events; every endpoint then refuses before reading parameters', async () => {
    const user = await t.createUser({ email: 'nosync@zulip.com', fullName: 'No Sync' });
    const id = await createOne({}, user as never);
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.patch('/settings', { enable_drafts_synchronization: false }, user)));
    expect(deliveries.filter((d) => d.event.type === 'drafts')).toEqual([]);
    expect(await t.app.ctx.db.selectFrom('drafts').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    const msg = 'User has disabled synchronizing drafts.';
    await refused(() => t.get('/drafts', {}, user), 400, 'BAD_REQUEST', msg);
    await refused(() => t.post('/drafts', { drafts: '[]' }, user), 400, 'BAD_REQUEST', msg);
    await refused(() => t.post('/drafts', {}, user), 400, 'BAD_REQUEST', msg);
    await refused(() => t.patch(`/drafts/${id}`, { draft: '{}' }, user), 400, 'BAD_REQUEST', msg);
    await refused(() => t.delete(`/drafts/${id}`, {}, user), 400, 'BAD_REQUEST', msg);
    const ctx = await registerContext(t, user);
    expect(await draftsModule.fetch(ctx)).toEqual({ drafts: [] });
    expectSuccess(await t.patch('/settings', { enable_drafts_synchronization: true }, user));
    expect(expectSuccess(await t.get('/drafts', {}, user)).drafts).toEqual([]);
  });
});

describe('drafts in /register stays in step with drafts events', () => {
  it('add, update, remove', async () => {
    let ids: number[] = [];
    await expectModuleConsistent(t, draftsModule, 'cordelia', async () => {
      ids = expectSuccess(await t.post('/drafts', { drafts: [draft({ timestamp: 1600000000.9 }), draft({ timestamp: 1600000000.1, content: 'second' }), draft({ timestamp: undefined, content: 'now' })] }, 'cordelia')).ids;
    });
    await expectModuleConsistent(t, draftsModule, 'cordelia', async () => {
      expectSuccess(await t.patch(`/drafts/${ids[0]}`, { draft: draft({ timestamp: 1800000000, content: 'moved to the end' }) }, 'cordelia'));
      expectSuccess(await t.delete(`/drafts/${ids[1]}`, {}, 'cordelia'));
      // Another user's drafts change nothing here.
      await createOne({}, 'othello');
    });
  });
});

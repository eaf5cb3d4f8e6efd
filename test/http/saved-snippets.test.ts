import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savedSnippetsModule } from '../../src/state/saved-snippets.js';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectModuleConsistent } from '../support/module-consistency.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const UNAUTH = 'Not logged in: API authentication or user session required';

async function rows(): Promise<unknown> {
  return t.app.ctx.db.selectFrom('saved_snippets').selectAll().orderBy('id').execute();
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

async function create(title: string, content: string, as = 'hamlet'): Promise<number> {
  return expectSuccess(await t.post('/saved_snippets', { title, content }, as as never)).saved_snippet_id;
}

async function dateCreated(id: number): Promise<number> {
  return (await t.app.ctx.db.selectFrom('saved_snippets').select('date_created').where('id', '=', id).executeTakeFirstOrThrow()).date_created;
}

describe('POST /saved_snippets', () => {
  it('creates a snippet (stripped) and sends saved_snippets add to the owner', async () => {
    let res: Res | undefined;
    const deliveries = await t.captureEvents(async () => {
      res = await t.post('/saved_snippets', { title: '  Greeting ', content: '\nHello **there**  ' }, 'hamlet');
    });
    const body = expectSuccess(res!);
    expect(Object.keys(body).sort()).toEqual(['msg', 'result', 'saved_snippet_id']);
    const id = body.saved_snippet_id;
    const snippet = { id, title: 'Greeting', content: 'Hello **there**', date_created: await dateCreated(id) };
    expect(Math.abs(snippet.date_created - Date.now() / 1000)).toBeLessThan(60);
    expect(sent(deliveries)).toEqual([{ event: { type: 'saved_snippets', op: 'add', saved_snippet: snippet }, userIds: [t.users.hamlet.id] }]);
    expect(expectSuccess(await t.get('/saved_snippets', {}, 'hamlet')).saved_snippets).toEqual([snippet]);
  });

  it('refusals', async () => {
    await refused(() => t.post('/saved_snippets', { title: '', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Title cannot be empty.');
    await refused(() => t.post('/saved_snippets', { title: '   ', content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Title cannot be empty.');
    await refused(() => t.post('/saved_snippets', { title: 'x', content: ' ' }, 'hamlet'), 400, 'BAD_REQUEST', 'content cannot be blank');
    // Content is checked first (Zulip's parameter order).
    await refused(() => t.post('/saved_snippets', { title: '', content: '' }, 'hamlet'), 400, 'BAD_REQUEST', 'content cannot be blank');
    await refused(() => t.post('/saved_snippets', { title: 'x'.repeat(61), content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'title is too long (limit: 60 characters)');
    await refused(() => t.post('/saved_snippets', { title: 'x', content: 'x'.repeat(10001) }, 'hamlet'), 400, 'BAD_REQUEST', 'content is too long (limit: 10000 characters)');
    await refused(() => t.post('/saved_snippets', { content: 'x' }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'title' argument", { var_name: 'title' });
    await refused(() => t.post('/saved_snippets', { title: 'x' }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'content' argument", { var_name: 'content' });
    await refused(() => t.post('/saved_snippets', { title: 'x', content: 'x' }, null), 401, 'UNAUTHORIZED', UNAUTH);
    expectSuccess(await t.post('/saved_snippets', { title: 'x'.repeat(60), content: 'x'.repeat(10000) }, 'hamlet'));
  });
});

describe('PATCH /saved_snippets/{id}', () => {
  it('edits title and/or content; the update event carries the whole snippet', async () => {
    const id = await create('Old', 'old text', 'cordelia');
    let deliveries = await t.captureEvents(async () => expectSuccess(await t.patch(`/saved_snippets/${id}`, { title: ' New ' }, 'cordelia')));
    const snippet = { id, title: 'New', content: 'old text', date_created: await dateCreated(id) };
    expect(sent(deliveries)).toEqual([{ event: { type: 'saved_snippets', op: 'update', saved_snippet: snippet }, userIds: [t.users.cordelia.id] }]);
    deliveries = await t.captureEvents(async () => expectSuccess(await t.patch(`/saved_snippets/${id}`, { content: 'new text' }, 'cordelia')));
    expect(sent(deliveries)).toEqual([
      { event: { type: 'saved_snippets', op: 'update', saved_snippet: { ...snippet, content: 'new text' } }, userIds: [t.users.cordelia.id] },
    ]);
    // Nothing to change: success, no event (not even a lookup: Zulip returns early).
    expect(await t.captureEvents(async () => expectSuccess(await t.patch(`/saved_snippets/${id}`, {}, 'cordelia')))).toEqual([]);
    expect(await t.captureEvents(async () => expectSuccess(await t.patch('/saved_snippets/99999', {}, 'cordelia')))).toEqual([]);
  });

  it("refusals: other users' snippets are as missing as unknown ones", async () => {
    const id = await create('Mine', 'mine', 'othello');
    await refused(() => t.patch(`/saved_snippets/${id}`, { title: 'Stolen' }, 'cordelia'), 404, 'BAD_REQUEST', 'Saved snippet does not exist.');
    await refused(() => t.patch('/saved_snippets/99999', { title: 'x' }, 'othello'), 404, 'BAD_REQUEST', 'Saved snippet does not exist.');
    await refused(() => t.patch(`/saved_snippets/${id}`, { title: ' ' }, 'othello'), 400, 'BAD_REQUEST', 'Title cannot be empty.');
    await refused(() => t.patch(`/saved_snippets/${id}`, { content: '' }, 'othello'), 400, 'BAD_REQUEST', 'content cannot be blank');
    await refused(() => t.patch(`/saved_snippets/${id}`, { title: 'x'.repeat(61) }, 'othello'), 400, 'BAD_REQUEST', 'title is too long (limit: 60 characters)');
    await refused(() => t.patch(`/saved_snippets/${id}`, { title: 'x' }, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('DELETE /saved_snippets/{id}', () => {
  it('deletes with a remove event; missing and foreign snippets are 404', async () => {
    const id = await create('Bye', 'bye', 'shiva');
    await refused(() => t.delete(`/saved_snippets/${id}`, {}, 'iago'), 404, 'BAD_REQUEST', 'Saved snippet does not exist.');
    await refused(() => t.delete(`/saved_snippets/${id}`, {}, null), 401, 'UNAUTHORIZED', UNAUTH);
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.delete(`/saved_snippets/${id}`, {}, 'shiva')));
    expect(sent(deliveries)).toEqual([{ event: { type: 'saved_snippets', op: 'remove', saved_snippet_id: id }, userIds: [t.users.shiva.id] }]);
    await refused(() => t.delete(`/saved_snippets/${id}`, {}, 'shiva'), 404, 'BAD_REQUEST', 'Saved snippet does not exist.');
  });
});

describe('ids beyond the 32-bit range', () => {
  it('are unknown snippets (never a database error)', async () => {
    await refused(() => t.patch('/saved_snippets/999999999999999', { title: 'x' }, 'hamlet'), 404, 'BAD_REQUEST', 'Saved snippet does not exist.');
    await refused(() => t.delete('/saved_snippets/999999999999999', {}, 'hamlet'), 404, 'BAD_REQUEST', 'Saved snippet does not exist.');
  });
});

describe('GET /saved_snippets', () => {
  it("lists only the caller's snippets; no credentials refused", async () => {
    const id = await create('Guest', 'guest snippet', 'polonius');
    expect(expectSuccess(await t.get('/saved_snippets', {}, 'polonius')).saved_snippets.map((s: any) => s.id)).toEqual([id]);
    expect(expectSuccess(await t.get('/saved_snippets', {}, 'iago')).saved_snippets.map((s: any) => s.id)).not.toContain(id);
    expectError(await t.get('/saved_snippets', {}, null), 401, 'UNAUTHORIZED', UNAUTH);
  });
});

describe('saved_snippets in /register stays in step with saved_snippets events', () => {
  it('add, update, remove', async () => {
    let a = 0;
    await expectModuleConsistent(t, savedSnippetsModule, 'owner', async () => {
      a = await create('A', 'a', 'owner');
      await create('B', 'b', 'owner');
    });
    await expectModuleConsistent(t, savedSnippetsModule, 'owner', async () => {
      expectSuccess(await t.patch(`/saved_snippets/${a}`, { title: 'A2', content: 'a2' }, 'owner'));
      const c = await create('C', 'c', 'owner');
      expectSuccess(await t.delete(`/saved_snippets/${c}`, {}, 'owner'));
      await create('Other', 'other', 'othello');
    });
  });
});

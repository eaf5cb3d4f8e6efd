import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStateConsistent, registerQueue } from '../support/events.js';
import { expectError, expectSuccess, startTestServer, type FixtureName, type Res, type TestServer } from '../support/server.js';

/**
 * Code playgrounds (issue 16): POST /realm/playgrounds, DELETE
 * /realm/playgrounds/{id}, realm_playgrounds in /register and its event.
 * Messages and errors as Zulip's zerver/tests/test_realm_playgrounds.py.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const ALL: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot'];
const allIds = () => ALL.map((n) => t.users[n].id).sort((a, b) => a - b);
const rows = () => t.app.ctx.db.selectFrom('realm_playgrounds').selectAll().orderBy('id').execute();
const add = (fields: Record<string, unknown>, as: FixtureName = 'iago') => t.post('/realm/playgrounds', fields, as);
const py = { name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' };

async function refused(fn: () => Promise<Res>, msg: string, extra: Record<string, unknown> = {}, code = 'BAD_REQUEST', status = 400): Promise<void> {
  const before = await rows();
  const settings = (await t.app.ctx.db.selectFrom('realms').select('settings').where('id', '=', t.realmId).executeTakeFirstOrThrow()).settings;
  let res!: Res;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, status, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await rows()).toEqual(before);
  expect((await t.app.ctx.db.selectFrom('realms').select('settings').where('id', '=', t.realmId).executeTakeFirstOrThrow()).settings).toBe(settings);
}

describe('code playgrounds', () => {
  it('an administrator adds one; every active user gets the whole list; /register has it', async () => {
    let res!: Res;
    const deliveries = await t.captureEvents(async () => {
      res = await add({ ...py, name: '  Python playground ', pygments_language: ' Python ' });
    });
    const id = expectSuccess(res).id as number;
    expect(res.body).toEqual({ result: 'success', msg: '', id });
    const dict = { id, name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' };
    expect(deliveries.map((d) => ({ event: d.event, users: [...d.userIds].sort((a, b) => a - b) }))).toEqual([{ event: { type: 'realm_playgrounds', realm_playgrounds: [dict] }, users: allIds() }]);
    // A second playground for the same language under another name is fine.
    const id2 = expectSuccess(await add({ ...py, name: 'Python playground 2', url_template: 'https://p2.example.com/{#code}' }, 'owner')).id;
    const state = await registerQueue(t, 'polonius', { fetch_event_types: ['realm_playgrounds'] });
    expect(state.realm_playgrounds).toEqual([dict, { id: id2, name: 'Python playground 2', pygments_language: 'Python', url_template: 'https://p2.example.com/{#code}' }]);
    expectSuccess(await t.delete(`/realm/playgrounds/${id2}`, {}, 'iago'));
  });

  it("refuses bad input with Zulip's messages and the errors dict, changing nothing", async () => {
    await refused(() => add({ ...py, pygments_language: 'a$b$c' }), 'Invalid characters in pygments language');
    await refused(() => add({ ...py, pygments_language: 'x'.repeat(41) }), 'pygments_language is too long (limit: 40 characters)');
    const other = { ...py, name: 'Another playground' };
    await refused(() => add({ ...other, url_template: 'https://template.com{?test,code}' }), '"code" should be the only variable present in the URL template', {
      errors: { __all__: ['"code" should be the only variable present in the URL template'] },
    });
    await refused(() => add({ ...other, url_template: 'https://template.com?test={test' }), 'Invalid URL template.', { errors: { url_template: ['Invalid URL template.'] } });
    await refused(() => add({ ...other, url_template: 'https://template.com{?test}' }), 'Missing the required variable "code" in the URL template', {
      errors: { __all__: ['Missing the required variable "code" in the URL template'] },
    });
    // Field and clean() errors come first; the uniqueness check runs when name and language are valid.
    await refused(() => add({ ...py, url_template: 'https://x.example/{nope}' }), 'Missing the required variable "code" in the URL template', {
      errors: { __all__: ['Missing the required variable "code" in the URL template', 'Realm playground with this Realm, Pygments language and Name already exists.'] },
    });
    await refused(() => add({ ...py }), 'Realm playground with this Realm, Pygments language and Name already exists.', {
      errors: { __all__: ['Realm playground with this Realm, Pygments language and Name already exists.'] },
    });
    await refused(() => add({ name: ' ', pygments_language: 'Python', url_template: '' }), 'This field cannot be blank.', {
      errors: { url_template: ['This field cannot be blank.'], name: ['This field cannot be blank.'] },
    });
    // Spaces pass the view's check but not the model's.
    await refused(() => add({ ...py, pygments_language: 'Py thon' }), 'Invalid characters in pygments language', {
      errors: { pygments_language: ['Invalid characters in pygments language'] },
    });
    await refused(() => add({ name: 'x', pygments_language: 'Python' }), "Missing 'url_template' argument", { var_name: 'url_template' }, 'REQUEST_VARIABLE_MISSING');
  });

  it('only administrators: members, moderators and guests are refused', async () => {
    const id = (await rows())[0]!.id;
    for (const who of ['hamlet', 'shiva', 'polonius'] as const) {
      await refused(() => add({ ...py, name: `by ${who}` }, who), 'Must be an organization administrator', {}, 'UNAUTHORIZED_PRINCIPAL');
      await refused(() => t.delete(`/realm/playgrounds/${id}`, {}, who), 'Must be an organization administrator', {}, 'UNAUTHORIZED_PRINCIPAL');
    }
  });

  it("delete: 'Invalid playground' for unknown ids (also beyond 32 bits); clears a matching default_code_block_language", async () => {
    const id = (await rows())[0]!.id;
    await refused(() => t.delete(`/realm/playgrounds/${id + 1000}`, {}, 'iago'), 'Invalid playground');
    await refused(() => t.delete('/realm/playgrounds/4294967297', {}, 'iago'), 'Invalid playground');
    expectSuccess(await t.patch('/realm', { default_code_block_language: 'Python' }, 'owner'));
    let res!: Res;
    const deliveries = await t.captureEvents(async () => {
      res = await t.delete(`/realm/playgrounds/${id}`, {}, 'iago');
    });
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm', op: 'update', property: 'default_code_block_language', value: '' },
      { type: 'realm_playgrounds', realm_playgrounds: [] },
    ]);
    expect(await rows()).toEqual([]);
    expect((await registerQueue(t, 'hamlet', { fetch_event_types: ['realm'] })).realm_default_code_block_language).toBe('');
  });

  it('stale state + events == fresh state (add, add, delete, with the realm default)', async () => {
    for (const who of ['hamlet', 'polonius'] as const) {
      await expectStateConsistent(
        t,
        who,
        async () => {
          const a = expectSuccess(await add({ ...py, name: `A ${who}`, pygments_language: 'Rust' })).id;
          expectSuccess(await add({ ...py, name: `B ${who}` }));
          expectSuccess(await t.patch('/realm', { default_code_block_language: 'Rust' }, 'owner'));
          expectSuccess(await t.delete(`/realm/playgrounds/${a}`, {}, 'iago'));
        },
        { fetch_event_types: ['realm_playgrounds', 'realm'] },
      );
    }
  });
});

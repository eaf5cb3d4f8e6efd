import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';

/** Bot storage as Zulip's zerver/views/storage.py + zerver/lib/bot_storage.py (limit lowered for the test). */
let t: TestServer;
const LIMIT = 40;
beforeAll(async () => {
  t = await startTestServer({ botStorageLimit: LIMIT });
});
afterAll(async () => t.close());

const rows = () => t.app.ctx.db.selectFrom('bot_storage').select(['user_id', 'key', 'value']).orderBy('user_id').orderBy('key').execute();

async function refused(fn: () => Promise<Res>, msg: string): Promise<void> {
  const before = await rows();
  let res: Res | undefined;
  const events = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res!, 400, 'BAD_REQUEST', msg);
  expect(events).toEqual([]);
  expect(await rows()).toEqual(before);
}

describe('bot storage', () => {
  it('puts, gets (all or some keys), overwrites and deletes, per bot', async () => {
    expect(expectSuccess(await t.get('/bot_storage', {}, 'bot'))).toEqual({ result: 'success', msg: '', storage: {} });
    expect(await t.request('PUT', '/bot_storage', { storage: { a: '1', b: 'two' } }, 'bot').then((r) => r.body)).toEqual({ result: 'success', msg: '' });
    expect(expectSuccess(await t.get('/bot_storage', {}, 'bot')).storage).toEqual({ a: '1', b: 'two' });
    expect(expectSuccess(await t.get('/bot_storage', { keys: ['b'] }, 'bot')).storage).toEqual({ b: 'two' });
    // An empty list means every key, as Zulip's `keys or get_keys_in_bot_storage(...)`.
    expect(expectSuccess(await t.get('/bot_storage', { keys: [] }, 'bot')).storage).toEqual({ a: '1', b: 'two' });
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { a: 'one' } }, 'bot'));
    expect(expectSuccess(await t.get('/bot_storage', {}, 'bot')).storage).toEqual({ a: 'one', b: 'two' });
    // Another user's storage is separate.
    expect(expectSuccess(await t.get('/bot_storage', {}, 'hamlet')).storage).toEqual({});
    expectSuccess(await t.delete('/bot_storage', { keys: ['a'] }, 'bot'));
    expect(await rows()).toEqual([{ user_id: t.users.bot.id, key: 'b', value: 'two' }]);
    expectSuccess(await t.delete('/bot_storage', {}, 'bot'));
    expect(await rows()).toEqual([]);
  });

  it('the size limit counts keys and values in characters, replaced values freed', async () => {
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { k1: 'x'.repeat(18), 'ké': 'é'.repeat(18) } }, 'bot')); // 20 + 20 = 40
    await refused(() => t.request('PUT', '/bot_storage', { storage: { k3: 'y' } }, 'bot'), 'Request exceeds storage limit by 3 characters. The limit is 40 characters.');
    // Replacing a value counts only the difference.
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { k1: 'z'.repeat(10), k3: 'w'.repeat(6) } }, 'bot'));
    expect(expectSuccess(await t.get('/bot_storage', {}, 'bot')).storage).toEqual({ k1: 'z'.repeat(10), k3: 'w'.repeat(6), 'ké': 'é'.repeat(18) });
    expectSuccess(await t.delete('/bot_storage', {}, 'bot'));
  });

  it('missing keys and bad parameters are refused with nothing changed', async () => {
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { a: '1' } }, 'bot'));
    expectError(await t.get('/bot_storage', { keys: ['a', 'nope'] }, 'bot'), 400, 'BAD_REQUEST', 'Key does not exist.');
    await refused(() => t.delete('/bot_storage', { keys: ['a', 'nope'] }, 'bot'), 'Key does not exist.');
    await refused(() => t.delete('/bot_storage', { keys: ['a', 'a'] }, 'bot'), 'Key does not exist.');
    await refused(() => t.request('PUT', '/bot_storage', { storage: { a: 1 } }, 'bot'), 'storage["a"] is not a string');
    await refused(() => t.request('PUT', '/bot_storage', { storage: ['a'] }, 'bot'), 'storage is not a dict');
    await refused(() => t.request('PUT', '/bot_storage', { storage: '{' }, 'bot'), 'storage is not valid JSON');
    expectError(await t.request('PUT', '/bot_storage', {}, 'bot'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'storage' argument", { var_name: 'storage' });
    expectError(await t.get('/bot_storage', { keys: [1] }, 'bot'), 400, 'BAD_REQUEST', 'keys[0] is not a string');
    expect(await rows()).toEqual([{ user_id: t.users.bot.id, key: 'a', value: '1' }]);
  });

  it('an incoming-webhook bot cannot use it (REST authentication refuses webhook bots)', async () => {
    const hook = expectSuccess(await t.post('/bots', { full_name: 'Hook', short_name: 'storehook', bot_type: 2 }, 'hamlet'));
    const res = await t.get('/bot_storage', {}, { id: hook.user_id, email: 'storehook-bot@zulip.testserver', apiKey: hook.api_key, password: '', role: 400, name: 'Hook' });
    expectError(res, 401, 'UNAUTHORIZED', 'This API is not available to incoming webhook bots.');
  });
});

import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationExists, groupRecipientId } from '../../src/store/messages.js';
import { expectError, expectSuccess, startTestServer, storeKind, type TestServer } from '../support/server.js';

/**
 * Text with no short length limit in a unique key (migration 1700). On
 * PostgreSQL a B-tree entry over about 2,700 bytes cannot be stored, and such
 * a value used to make the write fail with a 500 (the fuzz test found it with
 * a push token). Each value here is random (PostgreSQL would compress a
 * repetitive one below the limit) and longer than a B-tree entry may be; each
 * must be stored, found again, refused as a duplicate with Zulip's error, and
 * removed, on both back ends.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

/** `chars` random characters from a 64-letter alphabet, with a few multi-byte ones. */
const random = (chars: number): string => 'é€' + randomBytes(chars).toString('base64url').slice(0, chars - 2);
const bytes = (s: string): number => Buffer.byteLength(s);

describe('long text in unique keys', () => {
  it('a push token of 4,096 characters: stored, refreshed in place, removed', async () => {
    const token = random(4096);
    expect(token.length).toBe(4096);
    expect(bytes(token)).toBeGreaterThan(4096);
    const tokens = () => t.app.ctx.db.selectFrom('push_device_tokens').select(['user_id', 'kind', 'token', 'ios_app_id']).where('user_id', '=', t.users.hamlet.id).orderBy('id').execute();
    expectSuccess(await t.post('/users/me/android_gcm_reg_id', { token }, 'hamlet'));
    // The same token again refreshes the one row (the upsert's conflict target is the hashed key on PostgreSQL).
    expectSuccess(await t.post('/users/me/android_gcm_reg_id', { token }, 'hamlet'));
    // APNs tokens must be base64.
    const apns = randomBytes(3072).toString('base64');
    expect(apns.length).toBe(4096);
    expectSuccess(await t.post('/users/me/apns_device_token', { token: apns, appid: 'org.zulip.Zulip' }, 'hamlet'));
    expectSuccess(await t.post('/users/me/apns_device_token', { token: apns, appid: 'org.zulip.Zulip2' }, 'hamlet'));
    expect(await tokens()).toEqual([
      { user_id: t.users.hamlet.id, kind: 2, token, ios_app_id: null },
      { user_id: t.users.hamlet.id, kind: 1, token: apns, ios_app_id: 'org.zulip.Zulip2' },
    ]);
    expectSuccess(await t.delete('/users/me/android_gcm_reg_id', { token }, 'hamlet'));
    expectSuccess(await t.delete('/users/me/apns_device_token', { token: apns }, 'hamlet'));
    expect(await tokens()).toEqual([]);
  });

  it('a navigation view with a long fragment and name: added, duplicates refused, renamed, removed', async () => {
    const fragment = 'narrow/search/' + random(4000);
    const name = random(4000);
    const views = () => t.app.ctx.db.selectFrom('navigation_views').select(['fragment', 'name']).where('user_id', '=', t.users.cordelia.id).execute();
    expectSuccess(await t.post('/navigation_views', { fragment, is_pinned: true, name }, 'cordelia'));
    expectError(await t.post('/navigation_views', { fragment, is_pinned: false, name: 'Other' }, 'cordelia'), 400, 'BAD_REQUEST', 'Navigation view already exists.');
    expectError(await t.post('/navigation_views', { fragment: 'narrow/channel/9-other', is_pinned: false, name }, 'cordelia'), 400, 'BAD_REQUEST', 'Navigation view already exists.');
    expect(await views()).toEqual([{ fragment, name }]);
    const renamed = random(3000);
    expectSuccess(await t.patch(`/navigation_views/${fragment}`, { name: renamed }, 'cordelia'));
    expect(await views()).toEqual([{ fragment, name: renamed }]);
    expectSuccess(await t.delete(`/navigation_views/${fragment}`, {}, 'cordelia'));
    expect(await views()).toEqual([]);
  });

  it('a linkifier with a long pattern: added, a duplicate refused, removed', async () => {
    const pattern = random(4000).replace(/[-_]/g, 'x') + '(?P<id>[0-9]+)';
    const url_template = 'https://example.com/{id}';
    const res = await t.post('/realm/filters', { pattern, url_template }, 'iago');
    const id = expectSuccess(res).id as number;
    expectError(await t.post('/realm/filters', { pattern, url_template }, 'iago'), 400, 'BAD_REQUEST', 'Realm filter with this Realm and Pattern already exists.', {
      errors: { __all__: ['Realm filter with this Realm and Pattern already exists.'] },
    });
    const stored = await t.app.ctx.db.selectFrom('realm_linkifiers').select('pattern').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.pattern).toBe(pattern);
    expectSuccess(await t.delete(`/realm/filters/${id}`, {}, 'iago'));
  });

  it('a code playground with a long name: added, a duplicate refused, removed', async () => {
    const fields = { name: random(4000), pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' };
    const id = expectSuccess(await t.post('/realm/playgrounds', fields, 'iago')).id as number;
    const dup = 'Realm playground with this Realm, Pygments language and Name already exists.';
    expectError(await t.post('/realm/playgrounds', fields, 'iago'), 400, 'BAD_REQUEST', dup, { errors: { __all__: [dup] } });
    const stored = await t.app.ctx.db.selectFrom('realm_playgrounds').select('name').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.name).toBe(fields.name);
    expectSuccess(await t.delete(`/realm/playgrounds/${id}`, {}, 'iago'));
  });

  it('bot storage under a long key: stored, overwritten, read and removed', async () => {
    const key = random(5000);
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { [key]: 'one' } }, 'bot'));
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { [key]: 'two', short: 'x' } }, 'bot'));
    expect(expectSuccess(await t.get('/bot_storage', { keys: [key] }, 'bot')).storage).toEqual({ [key]: 'two' });
    expectSuccess(await t.delete('/bot_storage', { keys: [key, 'short'] }, 'bot'));
    expect(await t.app.ctx.db.selectFrom('bot_storage').select('key').where('user_id', '=', t.users.bot.id).execute()).toEqual([]);
  });

  it("a direct-message conversation's long key: its group is created once and found again", async () => {
    // A group of a few hundred members has a key this long ("12,345,..."); the
    // lookup and the insert are the send path's (src/store/messages.ts).
    const key = Array.from({ length: 600 }, (_, i) => 100_000 + i * 7919 + (randomBytes(2).readUInt16BE() % 7000)).join(',');
    expect(bytes(key)).toBeGreaterThan(3000);
    const db = t.app.ctx.db;
    const first = await groupRecipientId(db, t.realmId, key, 600);
    expect(await groupRecipientId(db, t.realmId, key, 600)).toBe(first);
    expect(await db.selectFrom('direct_message_groups').select('id').where('user_ids_key', '=', key).execute()).toHaveLength(1);
    expect(await conversationExists(db, key)).toBe(false);
    await db.deleteFrom('recipients').where('id', '=', first).execute();
    await db.deleteFrom('direct_message_groups').where('user_ids_key', '=', key).execute();
  });

  it.runIf(storeKind() === 'postgres')('on PostgreSQL, these keys are indexed by their md5 hash', async () => {
    const { rows } = await sql<{ indexname: string; indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes
      WHERE indexname IN ('push_device_tokens_unique', 'navigation_views_user_fragment', 'navigation_views_user_name', 'realm_linkifiers_pattern',
                          'realm_playgrounds_unique', 'direct_message_groups_key', 'bot_storage_user_key', 'messages_dm')
      ORDER BY indexname`.execute(t.app.ctx.db);
    expect(rows.map((r) => [r.indexname, r.indexdef.replace(/^.* USING btree /, '')])).toEqual([
      ['bot_storage_user_key', '(user_id, md5(key))'],
      ['direct_message_groups_key', '(realm_id, md5(user_ids_key))'],
      ['messages_dm', '(md5(dm_key), id) WHERE (dm_key IS NOT NULL)'],
      ['navigation_views_user_fragment', '(user_id, md5(fragment))'],
      ['navigation_views_user_name', '(user_id, md5(name))'],
      ['push_device_tokens_unique', '(user_id, kind, md5(token))'],
      ['realm_linkifiers_pattern', '(realm_id, md5(pattern))'],
      ['realm_playgrounds_unique', '(realm_id, pygments_language, md5(name))'],
    ]);
  });
});

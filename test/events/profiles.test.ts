import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doChangeEmailAddressVisibility } from '../../src/domain/actions/users.js';
import { expectStateConsistent } from '../support/events.js';
import { expectSuccess, startTestServer, type FixtureName, type TestServer, type TestUser } from '../support/server.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

/**
 * Issue 11 through the real /register + GET /events path: for every event
 * type the profile actions send (custom_profile_fields, realm_bot,
 * user_status and the realm_user update forms), a stale /register state plus
 * the queue's events equals a fresh /register, for several viewers and clients.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const TYPES = ['custom_profile_fields', 'realm_bot', 'user_status', 'realm_user'];
const CLIENTS: Record<string, Record<string, unknown>> = {
  'client_gravatar on': { event_types: TYPES, client_gravatar: true },
  'client_gravatar off': { event_types: TYPES, client_gravatar: false },
};
const VIEWERS: FixtureName[] = ['hamlet', 'iago', 'polonius', 'shiva'];

let n = 0;
const unique = () => `${Date.now().toString(36)}${(n++).toString(36)}`;

async function everything(subject: TestUser): Promise<void> {
  const tag = unique();
  // custom profile fields and values
  const field = expectSuccess(await t.post('/realm/profile_fields', { name: `Field ${tag}`, field_type: 2 }, 'iago')).id;
  const choice = expectSuccess(await t.post('/realm/profile_fields', { name: `Choice ${tag}`, field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'B', order: '2' } } }, 'iago')).id;
  expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: field, value: '**hi**' }, { id: choice, value: 'a' }] }, subject));
  expectSuccess(await t.patch(`/realm/profile_fields/${choice}`, { field_data: { b: { text: 'B', order: '1' } } }, 'iago'));
  expectSuccess(await t.patch(`/users/${subject.id}`, { profile_data: [{ id: field, value: 'changed' }] }, 'iago'));
  // avatars
  expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'a.png', contentType: 'image/png', data: await pngImage() }], {}, subject));
  expectSuccess(await t.delete('/users/me/avatar', {}, subject));
  // status
  expectSuccess(await t.post('/users/me/status', { status_text: 'Here', emoji_name: 'car' }, subject));
  expectSuccess(await t.post('/users/me/status', { emoji_name: '' }, subject));
  // bots
  const bot = expectSuccess(await t.post('/bots', { full_name: `Bot ${tag}`, short_name: `b${tag}` }, subject)).user_id;
  expectSuccess(await t.patch(`/bots/${bot}`, { full_name: `Bot Two ${tag}`, default_all_public_streams: true }, subject));
  expectSuccess(await t.post(`/bots/${bot}/api_key/regenerate`, {}, subject));
  expectSuccess(await t.patch(`/bots/${bot}`, { bot_owner_id: t.users.cordelia.id }, subject));
  expectSuccess(await t.delete(`/bots/${bot}`, {}, 'iago'));
  // email visibility (the API email and delivery_email forms)
  for (const v of [3, 1, 5, 2]) {
    const row = await t.row(subject.id);
    await transact(t.app.ctx, (tx) => doChangeEmailAddressVisibility(t.app.ctx, tx, row, v));
  }
  expectSuccess(await t.delete(`/realm/profile_fields/${field}`, {}, 'iago'));
}

describe.each(Object.entries(CLIENTS))('%s', (_name, params) => {
  it.each(VIEWERS)('viewer %s', async (viewer) => {
    const subject = await t.createUser({ email: `subject-${unique()}@zulip.com`, fullName: `Subject ${unique()}` });
    const events = await expectStateConsistent(t, viewer, () => everything(subject), params);
    const types = new Set(events.map((e) => e.type));
    for (const type of ['custom_profile_fields', 'user_status', 'realm_user']) expect(types).toContain(type);
    if (viewer === 'iago') expect(types).toContain('realm_bot');
  });

  it('the subject itself (own avatar and email keys)', async () => {
    const subject = await t.createUser({ email: `self-${unique()}@zulip.com`, fullName: `Self ${unique()}` });
    await expectStateConsistent(t, subject, () => everything(subject), params);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { expectStateConsistent } from '../support/events.js';
import { expectModuleConsistent } from '../support/module-consistency.js';
import { devicesModule } from '../../src/state/devices.js';

/**
 * Device registration as a Zulip server without a push notification service
 * answers it: client devices (feature level 468), the end-to-end-encrypted
 * push registration refused, legacy APNs/FCM tokens stored.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const tables = async () => ({
  devices: await t.app.ctx.db.selectFrom('client_devices').selectAll().orderBy('id').execute(),
  tokens: await t.app.ctx.db.selectFrom('push_device_tokens').selectAll().orderBy('id').execute(),
});

async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await tables();
  let res!: Res;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, status, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await tables()).toEqual(before);
}

describe('client devices', () => {
  it('register_client_device returns a new id, tells the user, and /register lists it with no push registration', async () => {
    let id = 0;
    const deliveries = await t.captureEvents(async () => {
      const body = expectSuccess(await t.post('/register_client_device', {}, 'hamlet'));
      expect(Object.keys(body).sort()).toEqual(['device_id', 'msg', 'result']);
      id = body.device_id;
    });
    expect(Number.isInteger(id) && id > 0).toBe(true);
    expect(deliveries).toEqual([{ realmId: t.realmId, userIds: [t.users.hamlet.id], event: { type: 'device', op: 'add', device_id: id } }]);
    const reg = expectSuccess(await t.post('/register', { fetch_event_types: ['device'] }, 'hamlet'));
    expect(reg.devices).toEqual({
      [String(id)]: { push_key_id: null, push_token_id: null, pending_push_token_id: null, push_token_last_updated_timestamp: null, push_registration_error_code: null },
    });
    expect(expectSuccess(await t.post('/register', { fetch_event_types: ['device'] }, 'cordelia')).devices).toEqual({});
    // Bots may register devices too (Zulip's view has no human_users_only).
    expectSuccess(await t.post('/register_client_device', {}, 'bot'));
  });

  it('remove_client_device deletes one of the caller\'s devices; another user\'s is "Invalid `device_id`"', async () => {
    const mine = expectSuccess(await t.post('/register_client_device', {}, 'cordelia')).device_id;
    const theirs = expectSuccess(await t.post('/register_client_device', {}, 'othello')).device_id;
    await refused(() => t.post('/remove_client_device', { device_id: theirs }, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid `device_id`');
    await refused(() => t.post('/remove_client_device', { device_id: 99999999999999 }, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid `device_id`');
    await refused(() => t.post('/remove_client_device', {}, 'cordelia'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'device_id' argument", { var_name: 'device_id' });
    const deliveries = await t.captureEvents(async () => {
      expectSuccess(await t.post('/remove_client_device', { device_id: mine }, 'cordelia'));
    });
    expect(deliveries.map((d) => [d.event, d.userIds])).toEqual([[{ type: 'device', op: 'remove', device_id: mine }, [t.users.cordelia.id]]]);
    await refused(() => t.post('/remove_client_device', { device_id: mine }, 'cordelia'), 400, 'BAD_REQUEST', 'Invalid `device_id`');
  });

  it('stale /register state + device events == fresh state', async () => {
    await expectStateConsistent(t, 'othello', async () => {
      const id = expectSuccess(await t.post('/register_client_device', {}, 'othello')).device_id;
      expectSuccess(await t.post('/register_client_device', {}, 'othello'));
      expectSuccess(await t.post('/remove_client_device', { device_id: id }, 'othello'));
    });
    await expectModuleConsistent(t, devicesModule, 'othello', async () => {
      expectSuccess(await t.post('/register_client_device', {}, 'othello'));
    });
  });
});

describe('push registration without a push service', () => {
  it('mobile_push/register (E2EE) is PUSH_SERVICE_NOT_CONFIGURED whatever is sent; bots are refused first', async () => {
    const device = expectSuccess(await t.post('/register_client_device', {}, 'iago')).device_id;
    const msg = 'Server is not configured to use push notification service.';
    await refused(() => t.post('/mobile_push/register', {}, 'iago'), 400, 'PUSH_SERVICE_NOT_CONFIGURED', msg);
    await refused(
      () => t.post('/mobile_push/register', { device_id: device, push_key_id: 7, push_key: 'AQID', token_kind: 'fcm', token_id: 'AAAAAAAAAAE=', bouncer_public_key: 'x', encrypted_push_registration: 'y' }, 'iago'),
      400,
      'PUSH_SERVICE_NOT_CONFIGURED',
      msg,
    );
    await refused(() => t.post('/mobile_push/register', { device_id: device }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
  });

  it('legacy FCM and APNs tokens are stored, refreshed, and removed; unknown ones are "Token does not exist"', async () => {
    expectSuccess(await t.post('/users/me/android_gcm_reg_id', { token: 'fcm-token-1' }, 'hamlet'));
    expectSuccess(await t.post('/users/me/android_gcm_reg_id', { token: 'fcm-token-1' }, 'hamlet'));
    expectSuccess(await t.post('/users/me/apns_device_token', { token: 'c29tZWFwbnN0b2tlbg==', appid: 'org.zulip.Zulip' }, 'hamlet'));
    const rows = (await tables()).tokens.map((r) => [r.user_id, r.kind, r.token, r.ios_app_id]);
    expect(rows).toEqual([
      [t.users.hamlet.id, 2, 'fcm-token-1', null],
      [t.users.hamlet.id, 1, 'c29tZWFwbnN0b2tlbg==', 'org.zulip.Zulip'],
    ]);
    // A token is per user: Cordelia cannot remove Hamlet's.
    await refused(() => t.delete('/users/me/android_gcm_reg_id', { token: 'fcm-token-1' }, 'cordelia'), 400, 'BAD_REQUEST', 'Token does not exist');
    expectSuccess(await t.delete('/users/me/android_gcm_reg_id', { token: 'fcm-token-1' }, 'hamlet'));
    expectSuccess(await t.delete('/users/me/apns_device_token', { token: 'c29tZWFwbnN0b2tlbg==' }, 'hamlet'));
    expect((await tables()).tokens).toEqual([]);
  });

  it('token errors, each writing nothing', async () => {
    await refused(() => t.post('/users/me/android_gcm_reg_id', {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'token' argument", { var_name: 'token' });
    await refused(() => t.post('/users/me/android_gcm_reg_id', { token: '' }, 'hamlet'), 400, 'BAD_REQUEST', 'Empty or invalid length token');
    await refused(() => t.post('/users/me/android_gcm_reg_id', { token: 'x'.repeat(4097) }, 'hamlet'), 400, 'BAD_REQUEST', 'Empty or invalid length token');
    await refused(() => t.post('/users/me/apns_device_token', { token: 'not base64!', appid: 'org.zulip.Zulip' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid APNS token');
    await refused(() => t.post('/users/me/apns_device_token', { token: 'abcd', appid: 'bad app id' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid app ID');
    await refused(() => t.post('/users/me/apns_device_token', { token: 'abcd' }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'appid' argument", { var_name: 'appid' });
    await refused(() => t.delete('/users/me/apns_device_token', { token: 'abcd' }, 'hamlet'), 400, 'BAD_REQUEST', 'Token does not exist');
    await refused(() => t.post('/users/me/android_gcm_reg_id', { token: 'fcm' }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    await refused(() => t.delete('/users/me/apns_device_token', { token: 'abcd' }, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
  });
});

import type { AppCtx, Caller } from '../context.js';
import { transact } from '../context.js';
import { badRequest } from '../errors.js';
import { isPossibleId } from '../rules/ids.js';
import { nowSeconds } from '../../store/db.js';
import { deleteClientDevice, deletePushToken, insertClientDevice, upsertPushToken } from '../../store/devices.js';

/**
 * Client devices and push registration, as a Zulip server answers that has
 * no push notification service configured (Zulip's zerver/actions/devices.py,
 * zerver/views/push_notifications.py, zerver/lib/push_notifications.py):
 *
 * - POST /register_client_device creates a device ({device_id}) and sends the
 *   user a {type:'device', op:'add', device_id} event; POST
 *   /remove_client_device deletes one ("Invalid `device_id`" when it is not
 *   the caller's) and sends {type:'device', op:'remove', device_id}.
 * - POST /mobile_push/register (end-to-end-encrypted push) needs the push
 *   service: 400 PUSH_SERVICE_NOT_CONFIGURED "Server is not configured to use
 *   push notification service." before anything else is looked at.
 * - The legacy token endpoints store the token locally even without a push
 *   service (Zulip's add_push_device_token does so unconditionally); removing
 *   an unknown token is "Token does not exist".
 */

export const PUSH_TOKEN_APNS = 1;
export const PUSH_TOKEN_FCM = 2;

export async function doRegisterClientDevice(app: AppCtx, caller: Caller): Promise<number> {
  return transact(app, async (tx) => {
    const id = await insertClientDevice(tx.db, caller.id, nowSeconds());
    tx.emit(caller.realmId, { type: 'device', op: 'add', device_id: id }, [caller.id]);
    return id;
  });
}

export async function doRemoveClientDevice(app: AppCtx, caller: Caller, deviceId: number): Promise<void> {
  if (!isPossibleId(deviceId)) throw badRequest('Invalid `device_id`');
  await transact(app, async (tx) => {
    if (!(await deleteClientDevice(tx.db, caller.id, deviceId))) throw badRequest('Invalid `device_id`');
    tx.emit(caller.realmId, { type: 'device', op: 'remove', device_id: deviceId }, [caller.id]);
  });
}

/** Zulip's validate_token: a non-empty token of at most 4096 characters; APNs tokens must decode as base64. */
export function validatePushToken(token: string, kind: number): void {
  if (token === '' || token.length > 4096) throw badRequest('Empty or invalid length token');
  if (kind === PUSH_TOKEN_APNS && !/^[A-Za-z0-9+/]*={0,2}$/.test(token)) throw badRequest('Invalid APNS token');
}

/** Zulip's ApnsAppId: a bundle id of letters, digits, dots and dashes. */
export function validateAppId(appid: string): void {
  if (!/^[.a-zA-Z0-9-]+$/.test(appid)) throw badRequest('Invalid app ID');
}

export async function doAddPushToken(app: AppCtx, caller: Caller, kind: number, token: string, iosAppId: string | null): Promise<void> {
  await transact(app, (tx) => upsertPushToken(tx.db, caller.id, kind, token, iosAppId, nowSeconds()));
}

export async function doRemovePushToken(app: AppCtx, caller: Caller, kind: number, token: string): Promise<void> {
  await transact(app, async (tx) => {
    if (!(await deletePushToken(tx.db, caller.id, kind, token))) throw badRequest('Token does not exist');
  });
}

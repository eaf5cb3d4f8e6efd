import { z } from 'zod';
import {
  doAddPushToken,
  doRegisterClientDevice,
  doRemoveClientDevice,
  doRemovePushToken,
  PUSH_TOKEN_APNS,
  PUSH_TOKEN_FCM,
  validateAppId,
  validatePushToken,
} from '../../domain/actions/devices.js';
import { JsonableError, notForBots } from '../../domain/errors.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';

/** Zulip's human_users_only, checked before the parameters. */
const humanOnly = ({ user }: AuthedCtx): void => {
  if (user.isBot) throw notForBots();
};

export const registerClientDevice = endpoint({
  method: 'POST',
  path: '/register_client_device',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ device_id: await doRegisterClientDevice(ctx.app, ctx.user) }),
});

export const removeClientDevice = endpoint({
  method: 'POST',
  path: '/remove_client_device',
  auth: 'user',
  params: { device_id: p.id() },
  handler: async (ctx, { device_id }) => {
    await doRemoveClientDevice(ctx.app, ctx.user, device_id);
    return {};
  },
});

/**
 * End-to-end-encrypted push registration needs Zulip's push service, which
 * this server does not use: Zulip refuses before reading the parameters.
 */
export const registerPushDevice = endpoint({
  method: 'POST',
  path: '/mobile_push/register',
  auth: 'user',
  guard: (ctx) => {
    humanOnly(ctx);
    throw new JsonableError('Server is not configured to use push notification service.', { code: 'PUSH_SERVICE_NOT_CONFIGURED' });
  },
  params: {},
  handler: async () => ({}),
});

export const addApnsDeviceToken = endpoint({
  method: 'POST',
  path: '/users/me/apns_device_token',
  auth: 'user',
  guard: humanOnly,
  params: { token: p.str(), appid: p.str(z.string()) },
  handler: async (ctx, { token, appid }) => {
    validatePushToken(token, PUSH_TOKEN_APNS);
    validateAppId(appid);
    await doAddPushToken(ctx.app, ctx.user, PUSH_TOKEN_APNS, token, appid);
    return {};
  },
});

export const removeApnsDeviceToken = endpoint({
  method: 'DELETE',
  path: '/users/me/apns_device_token',
  auth: 'user',
  guard: humanOnly,
  params: { token: p.str() },
  handler: async (ctx, { token }) => {
    validatePushToken(token, PUSH_TOKEN_APNS);
    await doRemovePushToken(ctx.app, ctx.user, PUSH_TOKEN_APNS, token);
    return {};
  },
});

export const addAndroidRegId = endpoint({
  method: 'POST',
  path: '/users/me/android_gcm_reg_id',
  auth: 'user',
  guard: humanOnly,
  params: { token: p.str() },
  handler: async (ctx, { token }) => {
    validatePushToken(token, PUSH_TOKEN_FCM);
    await doAddPushToken(ctx.app, ctx.user, PUSH_TOKEN_FCM, token, null);
    return {};
  },
});

export const removeAndroidRegId = endpoint({
  method: 'DELETE',
  path: '/users/me/android_gcm_reg_id',
  auth: 'user',
  guard: humanOnly,
  params: { token: p.str() },
  handler: async (ctx, { token }) => {
    validatePushToken(token, PUSH_TOKEN_FCM);
    await doRemovePushToken(ctx.app, ctx.user, PUSH_TOKEN_FCM, token);
    return {};
  },
});

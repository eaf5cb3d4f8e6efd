import { doMuteUser, doUnmuteUser } from '../../domain/actions/muted-users.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

export const muteUser = endpoint({
  method: 'POST',
  path: '/users/me/muted_users/:muted_user_id',
  auth: 'user',
  params: { muted_user_id: p.pathId() },
  handler: async (ctx, { muted_user_id }) => {
    await doMuteUser(ctx.app, ctx.user, muted_user_id);
    return {};
  },
});

export const unmuteUser = endpoint({
  method: 'DELETE',
  path: '/users/me/muted_users/:muted_user_id',
  auth: 'user',
  params: { muted_user_id: p.pathId() },
  handler: async (ctx, { muted_user_id }) => {
    await doUnmuteUser(ctx.app, ctx.user, muted_user_id);
    return {};
  },
});

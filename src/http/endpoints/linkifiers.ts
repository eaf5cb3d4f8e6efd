import { realmLinkifierRows } from '../../domain/access/linkifiers.js';
import { checkReorderLinkifiers, doAddLinkifier, doRemoveLinkifier, doUpdateLinkifier } from '../../domain/actions/linkifiers.js';
import { presentLinkifier } from '../../presenters/linkifier.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { requireAdmin } from './users.js';

/** Linkifiers (Zulip's zerver/views/realm_linkifiers.py); the writing endpoints keep their legacy /realm/filters paths. */

export const listLinkifiers = endpoint({
  method: 'GET',
  path: '/realm/linkifiers',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ linkifiers: (await realmLinkifierRows(ctx.app.db, ctx.user.realmId)).map(presentLinkifier) }),
});

export const addLinkifier = endpoint({
  method: 'POST',
  path: '/realm/filters',
  auth: 'user',
  guard: requireAdmin,
  params: { pattern: p.str(), url_template: p.str() },
  handler: async (ctx, v) => ({ id: await doAddLinkifier(ctx.app, ctx.user, v.pattern, v.url_template) }),
});

export const updateLinkifier = endpoint({
  method: 'PATCH',
  path: '/realm/filters/:filter_id',
  auth: 'user',
  guard: requireAdmin,
  params: { filter_id: p.pathId(), pattern: p.str(), url_template: p.str() },
  handler: async (ctx, v) => {
    await doUpdateLinkifier(ctx.app, ctx.user, v.filter_id, v.pattern, v.url_template);
    return {};
  },
});

export const removeLinkifier = endpoint({
  method: 'DELETE',
  path: '/realm/filters/:filter_id',
  auth: 'user',
  guard: requireAdmin,
  params: { filter_id: p.pathId() },
  handler: async (ctx, v) => {
    await doRemoveLinkifier(ctx.app, ctx.user, v.filter_id);
    return {};
  },
});

export const reorderLinkifiers = endpoint({
  method: 'PATCH',
  path: '/realm/linkifiers',
  auth: 'user',
  guard: requireAdmin,
  params: { ordered_linkifier_ids: p.idList() },
  handler: async (ctx, v) => {
    await checkReorderLinkifiers(ctx.app, ctx.user, v.ordered_linkifier_ids);
    return {};
  },
});

import { z } from 'zod';
import {
  doAddNavigationView,
  doRemoveNavigationView,
  doUpdateNavigationView,
  presentNavigationView,
} from '../../domain/actions/navigation-views.js';
import { transact } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { viewsOfUser } from '../../store/navigation-views.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** Zulip's StringConstraints(strip_whitespace=True, min_length=1). */
const nonBlank = z.string().trim().min(1);

/**
 * The fragment of PATCH/DELETE is the rest of the path and may contain "/"
 * (e.g. narrow/is/alerted), so these routes use a wildcard segment.
 */
function pathFragment(raw: string): string {
  const fragment = raw.trim();
  if (fragment === '') throw badRequest('fragment cannot be blank');
  return fragment;
}

export const listNavigationViews = endpoint({
  method: 'GET',
  path: '/navigation_views',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ navigation_views: (await viewsOfUser(ctx.app.db, ctx.user.id)).map(presentNavigationView) }),
});

export const addNavigationView = endpoint({
  method: 'POST',
  path: '/navigation_views',
  auth: 'user',
  params: { fragment: p.str(nonBlank), is_pinned: p.bool(), name: p.str(nonBlank).optional() },
  handler: async (ctx, { fragment, is_pinned, name }) => {
    await transact(ctx.app, (tx) => doAddNavigationView(tx, ctx.user, fragment, is_pinned, name));
    return {};
  },
});

export const updateNavigationView = endpoint({
  method: 'PATCH',
  path: '/navigation_views/*',
  auth: 'user',
  params: { '*': p.pathStr(), is_pinned: p.bool().optional(), name: p.str(nonBlank).optional() },
  handler: async (ctx, params) => {
    const fragment = pathFragment(params['*']);
    await transact(ctx.app, (tx) => doUpdateNavigationView(tx, ctx.user, fragment, params.is_pinned, params.name));
    return {};
  },
});

export const removeNavigationView = endpoint({
  method: 'DELETE',
  path: '/navigation_views/*',
  auth: 'user',
  params: { '*': p.pathStr() },
  handler: async (ctx, params) => {
    const fragment = pathFragment(params['*']);
    await transact(ctx.app, (tx) => doRemoveNavigationView(tx, ctx.user, fragment));
    return {};
  },
});

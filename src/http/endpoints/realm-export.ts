import { doDeleteRealmExport, doRequestRealmExport, exportConsents, realmExports } from '../../domain/actions/realm-export.js';
import { EXPORT_FULL_WITH_CONSENT, EXPORT_PUBLIC } from '../../domain/export/format.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { requireAdmin } from './users.js';

/** Organization data exports (Zulip's zerver/views/realm_export.py); all require an administrator. */

export const requestExport = endpoint({
  method: 'POST',
  path: '/export/realm',
  auth: 'user',
  guard: requireAdmin,
  params: { export_type: p.intIn([EXPORT_PUBLIC, EXPORT_FULL_WITH_CONSENT]).default(EXPORT_PUBLIC) },
  handler: async (ctx, v) => ({ id: await doRequestRealmExport(ctx.app, ctx.user, v.export_type) }),
});

export const listExports = endpoint({
  method: 'GET',
  path: '/export/realm',
  auth: 'user',
  guard: requireAdmin,
  params: {},
  handler: async (ctx) => ({ exports: await realmExports(ctx.app, ctx.app.db, ctx.user.realmId) }),
});

export const deleteExport = endpoint({
  method: 'DELETE',
  path: '/export/realm/:export_id',
  auth: 'user',
  guard: requireAdmin,
  params: { export_id: p.pathId() },
  handler: async (ctx, v) => {
    await doDeleteRealmExport(ctx.app, ctx.user, v.export_id);
    return {};
  },
});

export const listExportConsents = endpoint({
  method: 'GET',
  path: '/export/realm/consents',
  auth: 'user',
  guard: requireAdmin,
  params: {},
  handler: async (ctx) => ({ export_consents: await exportConsents(ctx.app.db, ctx.user.realmId) }),
});

import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest, ownerRequired } from '../../domain/errors.js';
import { doAddRealmDomain, doChangeRealmDomain, doRemoveRealmDomain, domainProblem } from '../../domain/actions/realm-domains.js';
import { realmDomainRows } from '../../store/channel-extras.js';
import { ROLE_OWNER } from '../../domain/rules/users.js';

const requireOwner = ({ user }: AuthedCtx): void => {
  if (user.role !== ROLE_OWNER) throw ownerRequired();
};

async function domainRow(ctx: AuthedCtx, domain: string) {
  const rows = await realmDomainRows(ctx.app.db, ctx.user.realmId);
  const row = rows.find((r) => r.domain === domain.trim().toLowerCase());
  if (!row) throw badRequest(`No entry found for domain ${domain}.`);
  return row;
}

export const listRealmDomains = endpoint({
  method: 'GET',
  path: '/realm/domains',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    const rows = await realmDomainRows(ctx.app.db, ctx.user.realmId);
    return { domains: rows.map((r) => ({ domain: r.domain, allow_subdomains: r.allow_subdomains === 1 })) };
  },
});

export const addRealmDomain = endpoint({
  method: 'POST',
  path: '/realm/domains',
  auth: 'user',
  guard: requireOwner,
  params: { domain: p.str(), allow_subdomains: p.bool() },
  handler: async (ctx, { domain, allow_subdomains }) => {
    const clean = domain.trim().toLowerCase();
    const problem = domainProblem(clean);
    if (problem) throw badRequest(`Invalid domain: ${problem}`);
    const rows = await realmDomainRows(ctx.app.db, ctx.user.realmId);
    if (rows.some((r) => r.domain === clean)) throw badRequest(`The domain ${clean} is already a part of your organization.`);
    const id = await transact(ctx.app, (tx) => doAddRealmDomain(tx, ctx.user.realmId, clean, allow_subdomains));
    return { new_domain: [id, clean] };
  },
});

export const updateRealmDomain = endpoint({
  method: 'PATCH',
  path: '/realm/domains/:domain',
  auth: 'user',
  guard: requireOwner,
  params: { domain: p.pathStr(), allow_subdomains: p.bool() },
  handler: async (ctx, { domain, allow_subdomains }) => {
    const row = await domainRow(ctx, domain);
    await transact(ctx.app, (tx) => doChangeRealmDomain(tx, row, allow_subdomains));
    return {};
  },
});

export const removeRealmDomain = endpoint({
  method: 'DELETE',
  path: '/realm/domains/:domain',
  auth: 'user',
  guard: requireOwner,
  params: { domain: p.pathStr() },
  handler: async (ctx, { domain }) => {
    const row = await domainRow(ctx, domain);
    await transact(ctx.app, (tx) => doRemoveRealmDomain(tx, row));
    return {};
  },
});

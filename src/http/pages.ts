import type { FastifyInstance, FastifyReply } from 'fastify';
import { doChangeDeliveryEmail, EMAIL_CHANGE_VALIDITY_SECS, hashConfirmationKey } from '../domain/actions/user-settings.js';
import { transact, type AppCtx } from '../domain/context.js';
import { realmEmailProblem } from '../domain/rules/email-policy.js';
import { realmSettings } from '../domain/rules/realm-settings.js';
import { isAdminRole } from '../domain/rules/users.js';
import { nowSeconds } from '../store/db.js';
import { realmById } from '../store/realms.js';
import { claimEmailChange, emailChangeByKeyHash, EMAIL_CHANGE_PENDING } from '../store/user-settings.js';
import { userByEmail, userById } from '../store/users.js';

/**
 * Browser pages outside /api/v1: the email-change confirmation link. As in
 * Zulip, opening the link (GET) shows a page whose button POSTs the key, so
 * link scanners that prefetch URLs cannot confirm a change by themselves.
 */

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1>${body}</body></html>\n`;
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
}

const badLink = (reply: FastifyReply): FastifyReply =>
  page(reply, 404, 'Invalid confirmation link', '<p>This confirmation link is invalid, was already used, or has expired.</p>');

export function registerPageRoutes(http: FastifyInstance, app: AppCtx): void {
  http.get<{ Params: { key: string } }>('/accounts/confirm_new_email/:key', async (req, reply) => {
    const key = req.params.key;
    const row = await emailChangeByKeyHash(app.db, hashConfirmationKey(key));
    if (!row || row.status !== EMAIL_CHANGE_PENDING || nowSeconds() - row.created_at > EMAIL_CHANGE_VALIDITY_SECS) return badLink(reply);
    return page(
      reply,
      200,
      'Confirm your new email address',
      `<p>Change the email address of your account from ${esc(row.old_email)} to ${esc(row.new_email)}?</p>` +
        `<form method="post" action="/accounts/confirm_new_email"><input type="hidden" name="key" value="${esc(key)}"><button type="submit">Confirm</button></form>`,
    );
  });

  http.post<{ Body: Record<string, unknown> }>('/accounts/confirm_new_email', async (req, reply) => {
    const key = typeof req.body?.key === 'string' ? req.body.key : '';
    const row = key ? await emailChangeByKeyHash(app.db, hashConfirmationKey(key)) : undefined;
    if (!row || row.status !== EMAIL_CHANGE_PENDING || nowSeconds() - row.created_at > EMAIL_CHANGE_VALIDITY_SECS) return badLink(reply);
    const user = await userById(app.db, row.realm_id, row.user_id);
    const realm = await realmById(app.db, row.realm_id);
    if (!user || !realm || user.delivery_email !== row.old_email) return badLink(reply);
    if (!user.is_active || realm.deactivated) return page(reply, 401, 'Account is deactivated', '<p>This account is deactivated.</p>');
    // The organization's rules may have changed since the request.
    const refuse = (msg: string) => page(reply, 400, 'Email change not possible', `<p>${esc(msg)}</p>`);
    if (realmSettings(realm.settings).email_changes_disabled && !isAdminRole(user.role)) return refuse('Email address changes are disabled in this organization.');
    const problem = await realmEmailProblem(app, realm.id, row.new_email);
    if (problem) return refuse(problem);
    const taken = await userByEmail(app.db, realm.id, row.new_email);
    if (taken) return refuse(taken.is_active ? 'Already has an account.' : 'Account has been deactivated.');
    const changed = await transact(app, async (tx) => {
      if (!(await claimEmailChange(tx.db, row.id))) return false;
      await doChangeDeliveryEmail(app, tx, user, row.new_email);
      return true;
    });
    if (!changed) return badLink(reply);
    return page(reply, 200, 'Email address changed', `<p>The email address of your account is now ${esc(row.new_email)}.</p>`);
  });
}

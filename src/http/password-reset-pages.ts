import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { realmUrl } from '../config.js';
import { transact, type AppCtx } from '../domain/context.js';
import { hashKey, newKey } from '../domain/actions/invites.js';
import { CONFIRMATION_VALIDITY_SECS, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, passwordProblem } from '../domain/actions/signup.js';
import { doSetPasswordHash } from '../domain/actions/users.js';
import { hashPassword } from '../domain/rules/credentials.js';
import { sendMail } from '../mail/send.js';
import { nowSeconds } from '../store/db.js';
import { claimConfirmation, confirmationByKeyHash, insertConfirmation } from '../store/invites.js';
import { defaultRealm } from '../store/realms.js';
import { userByEmail, userById } from '../store/users.js';
import { csrfFailure, csrfField, csrfValid, esc, field, page } from './page-kit.js';

/**
 * Password reset by mailed link (Zulip's /accounts/password/reset/): the
 * answer to the request is the same whether or not an account has the
 * address (nothing to learn about who is a member); requests are rate
 * limited per client address and per address asked about; the link works
 * once, for a day, for an active human account.
 */

type Body = Record<string, unknown> | undefined;

/** Zulip's PasswordResetForm limit: 5 requests per email address per hour; we also bound per client address. */
const PER_EMAIL_PER_HOUR = 5;
const PER_CLIENT_PER_HOUR = 10;

const SENT =
  "<p>If an account exists for this address, we've sent it an email with a link to reset the password. Open it within 24 hours. " +
  "If you don't see the email, check your spam folder.</p>";

function requestForm(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return page(
    reply,
    200,
    'Reset your password',
    `<form method="post" action="/accounts/password/reset/">${csrfField(req, reply)}` +
      '<label>Email address <input type="email" name="email" required autocomplete="email"></label> <button type="submit">Send reset link</button></form>',
  );
}

function newPasswordForm(req: FastifyRequest, reply: FastifyReply, key: string, error = ''): FastifyReply {
  return page(
    reply,
    error ? 400 : 200,
    'Choose a new password',
    (error ? `<p role="alert">${esc(error)}</p>` : '') +
      `<form method="post" action="/accounts/password/reset/${esc(key)}/">${csrfField(req, reply)}` +
      `<label>New password <input type="password" name="new_password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password"></label> ` +
      '<button type="submit">Change password</button></form>',
  );
}

const invalidLink = (reply: FastifyReply): FastifyReply =>
  page(reply, 404, 'Invalid link', '<p>This password reset link is invalid, was already used, or has expired. <a href="/accounts/password/reset/">Ask for a new one</a>.</p>');

export function registerPasswordResetPages(http: FastifyInstance, app: AppCtx): void {
  http.get('/accounts/password/reset/', async (req, reply) => requestForm(req, reply));

  http.post<{ Body: Body }>('/accounts/password/reset/', async (req, reply) => {
    if (!csrfValid(req, req.body ?? {})) return csrfFailure(reply);
    const email = field(req.body, 'email').trim();
    const perClient = await app.limiter.consume(`page:reset:${req.ip}`, PER_CLIENT_PER_HOUR, 3600);
    const perEmail = await app.limiter.consume(`page:reset-email:${email.toLowerCase()}`, PER_EMAIL_PER_HOUR, 3600);
    if (!perClient.allowed || !perEmail.allowed) return page(reply, 429, 'Too many requests', '<p>Too many password reset requests. Try again later.</p>');
    const realm = await defaultRealm(app.db);
    const user = realm && email ? await userByEmail(app.db, realm.id, email) : undefined;
    if (realm && user && user.is_active && !user.is_bot) {
      const key = newKey();
      const now = nowSeconds();
      await insertConfirmation(app.db, { realm_id: realm.id, kind: 'reset', email: user.delivery_email, user_id: user.id, invite_id: null, key_hash: hashKey(key), created_at: now, expires_at: now + CONFIRMATION_VALIDITY_SECS, used: 0 });
      const link = `${realmUrl(app.config)}/accounts/password/reset/${key}/`;
      await sendMail(app, {
        to: [user.delivery_email],
        subject: `Reset your ${realm.name} password`,
        text: `Hi,\n\nSomeone (hopefully you) asked to reset the password of the account ${user.delivery_email} in ${realm.name}.\n\nTo choose a new password, open this link within 24 hours:\n\n${link}\n\nIf you did not ask for this, you can ignore this email.\n`,
        html: `<p>Hi,</p><p>Someone (hopefully you) asked to reset the password of the account ${esc(user.delivery_email)} in <b>${esc(realm.name)}</b>.</p><p><a href="${esc(link)}">Choose a new password</a> within 24 hours, or open this link: ${esc(link)}</p><p>If you did not ask for this, you can ignore this email.</p>`,
      });
    }
    return page(reply, 200, 'Check your email', SENT);
  });

  const usable = async (key: string) => {
    const c = await confirmationByKeyHash(app.db, 'reset', hashKey(key));
    if (!c || c.used || c.expires_at <= nowSeconds() || c.user_id === null) return undefined;
    const user = await userById(app.db, c.realm_id, c.user_id);
    // The link was for this address: it stops working if the account's address changed or it was deactivated.
    if (!user || !user.is_active || user.delivery_email !== c.email) return undefined;
    return { c, user };
  };

  http.get<{ Params: { key: string } }>('/accounts/password/reset/:key/', async (req, reply) => {
    if (!(await usable(req.params.key))) return invalidLink(reply);
    return newPasswordForm(req, reply, req.params.key);
  });

  http.post<{ Params: { key: string }; Body: Body }>('/accounts/password/reset/:key/', async (req, reply) => {
    if (!csrfValid(req, req.body ?? {})) return csrfFailure(reply);
    const found = await usable(req.params.key);
    if (!found) return invalidLink(reply);
    const password = field(req.body, 'new_password');
    const problem = passwordProblem(password);
    if (problem) return newPasswordForm(req, reply, req.params.key, problem);
    const hash = await hashPassword(password, app.config.passwordHashCost);
    const done = await transact(app, async (tx) => {
      if (!(await claimConfirmation(tx.db, found.c.id))) return false;
      await doSetPasswordHash(tx, found.user, hash);
      return true;
    });
    if (!done) return invalidLink(reply);
    return page(reply, 200, 'Password changed', `<p>The password of <strong>${esc(found.user.delivery_email)}</strong> was changed. You can sign in with it now.</p>`);
  });
}

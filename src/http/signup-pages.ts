import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import { JsonableError } from '../domain/errors.js';
import { hashKey } from '../domain/actions/invites.js';
import {
  CONFIRMATION_VALIDITY_SECS,
  doSendSignupConfirmation,
  doSignUp,
  inviteUsable,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  realmAllowsOpenSignup,
  signupEmailProblem,
} from '../domain/actions/signup.js';
import { nowSeconds } from '../store/db.js';
import { confirmationByKeyHash, inviteByKeyHash, type ConfirmationRow, type InviteRow } from '../store/invites.js';
import { defaultRealm } from '../store/realms.js';
import { startBrowserSession } from './browser-session.js';
import { csrfFailure, csrfField, csrfValid, esc, field, page } from './page-kit.js';

/**
 * Sign-up pages (Zulip's /join/<key>/, /register/, /accounts/do_confirm/<key>,
 * /accounts/register/):
 *  - an emailed invitation's link proves the address: straight to the form
 *    for a name and a password;
 *  - a reusable invitation link, or /register/ where the organization lets
 *    people join without one, asks for an address and mails a confirmation
 *    link, which leads to the same form.
 * Keys are looked up by their hash; every answer about a link that is
 * missing, used, revoked or expired is the same page.
 */

type Body = Record<string, unknown> | undefined;

/** Form posts per client address per hour that mail a confirmation (abuse of the mail path). */
const MAIL_POSTS_PER_HOUR = 10;

const invalidLink = (reply: FastifyReply): FastifyReply =>
  page(reply, 404, 'Invalid link', '<p>This link is invalid, was already used, has been revoked, or has expired. Ask for a new invitation.</p>');

function emailForm(req: FastifyRequest, reply: FastifyReply, action: string, title: string, error = '', email = ''): FastifyReply {
  return page(
    reply,
    error ? 400 : 200,
    title,
    (error ? `<p role="alert">${esc(error)}</p>` : '') +
      `<form method="post" action="${esc(action)}">${csrfField(req, reply)}` +
      `<label>Email address <input type="email" name="email" required value="${esc(email)}" autocomplete="email"></label> ` +
      '<button type="submit">Continue</button></form>',
  );
}

function registrationForm(req: FastifyRequest, reply: FastifyReply, email: string, keyKind: 'invite' | 'confirm', key: string, error = '', fullName = ''): FastifyReply {
  return page(
    reply,
    error ? 400 : 200,
    'Create your account',
    (error ? `<p role="alert">${esc(error)}</p>` : '') +
      `<p>You are signing up as <strong>${esc(email)}</strong>.</p>` +
      `<form method="post" action="/accounts/register/">${csrfField(req, reply)}` +
      `<input type="hidden" name="key_kind" value="${keyKind}"><input type="hidden" name="key" value="${esc(key)}">` +
      `<p><label>Full name <input name="full_name" required maxlength="100" value="${esc(fullName)}" autocomplete="name"></label></p>` +
      `<p><label>Password <input type="password" name="password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password"></label></p>` +
      `<p>At least ${PASSWORD_MIN_LENGTH} characters, and not easy to guess.</p>` +
      '<button type="submit">Sign up</button></form>',
  );
}

const checkYourEmail = (reply: FastifyReply, email: string): FastifyReply =>
  page(reply, 200, 'Check your email', `<p>We sent a link to <strong>${esc(email)}</strong>. Open it within ${CONFIRMATION_VALIDITY_SECS / 3600} hours to finish signing up.</p>`);

async function overMailLimit(app: AppCtx, req: FastifyRequest, kind: string): Promise<boolean> {
  const r = await app.limiter.consume(`page:${kind}:${req.ip}`, MAIL_POSTS_PER_HOUR, 3600);
  return !r.allowed;
}

const tooMany = (reply: FastifyReply): FastifyReply => page(reply, 429, 'Too many requests', '<p>Too many attempts from your address. Try again later.</p>');

async function usableInvite(app: AppCtx, key: string): Promise<InviteRow | undefined> {
  const row = await inviteByKeyHash(app.db, hashKey(key));
  return inviteUsable(row) ? row : undefined;
}

async function usableConfirmation(app: AppCtx, kind: string, key: string): Promise<ConfirmationRow | undefined> {
  const row = await confirmationByKeyHash(app.db, kind, hashKey(key));
  return row && !row.used && row.expires_at > nowSeconds() ? row : undefined;
}

export function registerSignupPages(http: FastifyInstance, app: AppCtx): void {
  const join = async (req: FastifyRequest<{ Params: { key: string } }>, reply: FastifyReply) => {
    const invite = await usableInvite(app, req.params.key);
    if (!invite) return invalidLink(reply);
    if (!invite.is_multiuse) return registrationForm(req, reply, invite.email!, 'invite', req.params.key);
    return emailForm(req, reply, `/join/${req.params.key}/`, 'Join the organization');
  };
  http.get('/join/:key/', join);

  http.post<{ Params: { key: string }; Body: Body }>('/join/:key/', async (req, reply) => {
    if (!csrfValid(req, req.body ?? {})) return csrfFailure(reply);
    const invite = await usableInvite(app, req.params.key);
    if (!invite || !invite.is_multiuse) return invalidLink(reply);
    const email = field(req.body, 'email').trim();
    const problem = await signupEmailProblem(app, invite.realm_id, email);
    if (problem) return emailForm(req, reply, `/join/${req.params.key}/`, 'Join the organization', problem, email);
    if (await overMailLimit(app, req, 'signup')) return tooMany(reply);
    await doSendSignupConfirmation(app, invite.realm_id, email, invite.id);
    return checkYourEmail(reply, email);
  });

  http.get('/register/', async (req, reply) => {
    const realm = await defaultRealm(app.db);
    if (!realm || !(await realmAllowsOpenSignup(app, realm.id))) {
      return page(reply, 403, 'Sign-up requires an invitation', '<p>This organization requires an invitation to join. Ask an administrator for one.</p>');
    }
    return emailForm(req, reply, '/register/', `Sign up for ${realm.name}`);
  });

  http.post<{ Body: Body }>('/register/', async (req, reply) => {
    if (!csrfValid(req, req.body ?? {})) return csrfFailure(reply);
    const realm = await defaultRealm(app.db);
    if (!realm || !(await realmAllowsOpenSignup(app, realm.id))) {
      return page(reply, 403, 'Sign-up requires an invitation', '<p>This organization requires an invitation to join. Ask an administrator for one.</p>');
    }
    const email = field(req.body, 'email').trim();
    const problem = await signupEmailProblem(app, realm.id, email);
    if (problem) return emailForm(req, reply, '/register/', `Sign up for ${realm.name}`, problem, email);
    if (await overMailLimit(app, req, 'signup')) return tooMany(reply);
    await doSendSignupConfirmation(app, realm.id, email, null);
    return checkYourEmail(reply, email);
  });

  http.get<{ Params: { key: string } }>('/accounts/do_confirm/:key', async (req, reply) => {
    const c = await usableConfirmation(app, 'signup', req.params.key);
    if (!c) return invalidLink(reply);
    return registrationForm(req, reply, c.email, 'confirm', req.params.key);
  });

  http.post<{ Body: Body }>('/accounts/register/', async (req, reply) => {
    if (!csrfValid(req, req.body ?? {})) return csrfFailure(reply);
    const key = field(req.body, 'key');
    const kind = field(req.body, 'key_kind') === 'invite' ? 'invite' : 'confirm';
    let invite: InviteRow | null = null;
    let confirmation: ConfirmationRow | null = null;
    let email: string;
    let realmId: number;
    if (kind === 'invite') {
      const row = await usableInvite(app, key);
      if (!row || row.is_multiuse) return invalidLink(reply);
      invite = row;
      email = row.email!;
      realmId = row.realm_id;
    } else {
      const c = await usableConfirmation(app, 'signup', key);
      if (!c) return invalidLink(reply);
      if (c.invite_id !== null) {
        const row = await app.db.selectFrom('invites').selectAll().where('id', '=', c.invite_id).executeTakeFirst();
        // A reusable link revoked or expired after the mail was sent no longer lets anyone in.
        if (!inviteUsable(row)) return invalidLink(reply);
        invite = row;
      } else if (!(await realmAllowsOpenSignup(app, c.realm_id))) return invalidLink(reply);
      confirmation = c;
      email = c.email;
      realmId = c.realm_id;
    }
    const fullName = field(req.body, 'full_name');
    let user;
    try {
      user = await doSignUp(app, { realmId, email, fullName, password: field(req.body, 'password'), invite, confirmation });
    } catch (err) {
      if (err instanceof JsonableError) return registrationForm(req, reply, email, kind, key, err.message, fullName);
      throw err;
    }
    if (await startBrowserSession(app, reply, user)) return reply.code(303).header('location', '/').send();
    return page(
      reply,
      200,
      'Welcome!',
      `<p>Your account <strong>${esc(user.delivery_email)}</strong> is ready.</p>` +
        '<p>Sign in with this email address and your password in the Zulip app (desktop or mobile) or the web app at <a href="/">this address</a>.</p>',
    );
  });
}

import { realmUrl } from '../../config.js';
import { transact, type AppCtx } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { realmOf } from '../realm-row-cache.js';
import { hashPassword, isStrongPassword } from '../rules/credentials.js';
import { realmEmailProblem } from '../rules/email-policy.js';
import { realmSettings } from '../rules/realm-settings.js';
import { checkFullName, isValidEmail, ROLE_MEMBER } from '../rules/users.js';
import { nowSeconds } from '../../store/db.js';
import { groupById } from '../../store/user-groups.js';
import { claimConfirmation, closeInvitesForEmail, insertConfirmation, INVITE_PENDING, INVITE_USED, type ConfirmationRow, type InviteRow } from '../../store/invites.js';
import { userByEmail, type UserRow } from '../../store/users.js';
import { sendMail } from '../../mail/send.js';
import { emitInvitesChanged, hashKey, newKey } from './invites.js';
import { announceNewHumanUser, subscribeNewHumanUser, type JoinGrant } from './onboarding.js';
import { doAddMembers } from './user-groups.js';
import { doCreateUser } from './users.js';

/**
 * Sign-up (Zulip's zerver/views/registration.py and create_user.py): an
 * address is proven by a mailed confirmation link (or by the emailed
 * invitation itself), then the person picks a name and a password; the new
 * account gets the invitation's role, channels and groups, or the realm's
 * default channels.
 */

/** settings.PASSWORD_MIN_LENGTH, PASSWORD_MIN_GUESSES, PASSWORD_MAX_LENGTH (server_settings). */
export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MIN_GUESSES = 10_000;
export const PASSWORD_MAX_LENGTH = 100;
/** Confirmation links for sign-up and password reset stay valid this long (Zulip: 1 day). */
export const CONFIRMATION_VALIDITY_SECS = 24 * 3600;

export const isExpired = (invite: InviteRow, now = nowSeconds()): boolean => invite.expires_at !== null && invite.expires_at <= now;
export const inviteUsable = (invite: InviteRow | undefined): invite is InviteRow => !!invite && invite.status === INVITE_PENDING && !isExpired(invite);

/** Zulip's password form checks, in its wording. */
export function passwordProblem(password: string): string | null {
  if (password.length > PASSWORD_MAX_LENGTH) return `The password is too long (limit: ${PASSWORD_MAX_LENGTH} characters).`;
  if (!isStrongPassword(password)) return 'The password is too weak.';
  return null;
}

/**
 * Whether an address may sign up here without an invitation (or with a
 * reusable one): a valid form, the realm's domain and disposable-address
 * rules; an existing account is reported as Zulip does.
 */
export async function signupEmailProblem(app: AppCtx, realmId: number, email: string): Promise<string | null> {
  if (!isValidEmail(email)) return 'Please enter a valid email address.';
  const problem = await realmEmailProblem(app, realmId, email);
  if (problem) return problem;
  const existing = await userByEmail(app.db, realmId, email);
  if (existing) return existing.is_active ? 'Already has an account.' : 'Account has been deactivated.';
  return null;
}

export const realmAllowsOpenSignup = async (app: AppCtx, realmId: number): Promise<boolean> =>
  !realmSettings((await realmOf(app, realmId)).settings).invite_required;

/** Mails a sign-up confirmation link for an address (optionally through a reusable invitation). */
export async function doSendSignupConfirmation(app: AppCtx, realmId: number, email: string, inviteId: number | null): Promise<void> {
  const key = newKey();
  const now = nowSeconds();
  await insertConfirmation(app.db, { realm_id: realmId, kind: 'signup', email, user_id: null, invite_id: inviteId, key_hash: hashKey(key), created_at: now, expires_at: now + CONFIRMATION_VALIDITY_SECS, used: 0 });
  const realm = await realmOf(app, realmId);
  const link = `${realmUrl(app.config)}/accounts/do_confirm/${key}`;
  await sendMail(app, {
    to: [email],
    subject: `Activate your ${realm.name} account`,
    text: `Hi,\n\nTo finish creating your account in ${realm.name} (${realmUrl(app.config)}), open this link within 24 hours:\n\n${link}\n\nIf you did not ask for an account, you can ignore this email.\n`,
    html: `<p>Hi,</p><p>To finish creating your account in <b>${esc(realm.name)}</b>, <a href="${esc(link)}">confirm your email address</a> within 24 hours.</p><p>Or open this link: ${esc(link)}</p><p>If you did not ask for an account, you can ignore this email.</p>`,
  });
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface SignUpInput {
  readonly realmId: number;
  readonly email: string;
  readonly fullName: string;
  readonly password: string;
  /** The invitation that proved the address (emailed) or let the person in (reusable). */
  readonly invite: InviteRow | null;
  /** The mailed confirmation that proved the address, claimed once. */
  readonly confirmation: ConfirmationRow | null;
}

/** Creates the account; throws a JsonableError with a message for the form. */
export async function doSignUp(app: AppCtx, input: SignUpInput): Promise<UserRow> {
  const fullName = checkFullName(input.fullName);
  const pw = passwordProblem(input.password);
  if (pw) throw badRequest(pw);
  const taken = await userByEmail(app.db, input.realmId, input.email);
  if (taken) throw badRequest(taken.is_active ? 'Already has an account.' : 'Account has been deactivated.');
  const invite = input.invite;
  if (!invite) {
    const problem = await realmEmailProblem(app, input.realmId, input.email);
    if (problem) throw badRequest(problem);
  }
  const hash = await hashPassword(input.password, app.config.passwordHashCost);
  const grant: JoinGrant = invite
    ? {
        channelIds: JSON.parse(invite.stream_ids) as number[],
        includeDefaults: invite.include_realm_default_subscriptions === 1,
        referrerId: invite.referrer_id,
        notifyReferrer: invite.notify_referrer_on_join === 1,
      }
    : { channelIds: [], includeDefaults: true, referrerId: null, notifyReferrer: false };
  const user = await transact(app, async (tx) => {
    if (input.confirmation && !(await claimConfirmation(tx.db, input.confirmation.id))) throw new JsonableError('This confirmation link has already been used.');
    if (invite && !invite.is_multiuse) {
      const r = await tx.db.updateTable('invites').set({ status: INVITE_USED }).where('id', '=', invite.id).where('status', '=', INVITE_PENDING).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) throw new JsonableError('This invitation is no longer valid.');
    }
    const created = await doCreateUser(app, tx, input.realmId, { email: input.email, fullName, passwordHash: hash, role: invite?.invited_as ?? ROLE_MEMBER });
    await subscribeNewHumanUser(app, tx, created, grant);
    for (const gid of invite ? (JSON.parse(invite.group_ids) as number[]) : []) {
      const group = await groupById(tx.db, input.realmId, gid);
      if (group && group.name !== null && !group.deactivated) await doAddMembers(tx, group, [created.id]);
    }
    // Zulip's process_new_human_user: other pending invitations of this address are void now.
    await closeInvitesForEmail(tx.db, input.realmId, created.email_lower, invite && !invite.is_multiuse ? invite.id : null);
    if (invite) await emitInvitesChanged(tx, input.realmId, invite.referrer_id);
    return created;
  });
  await announceNewHumanUser(app, user, grant);
  return user;
}

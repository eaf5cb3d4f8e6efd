import { createHash, randomBytes } from 'node:crypto';
import { realmUrl } from '../../config.js';
import type { AppCtx, Tx } from '../context.js';
import { JsonableError, badRequest, ownerRequired } from '../errors.js';
import { realmOf } from '../realm-row-cache.js';
import { realmEmailProblem } from '../rules/email-policy.js';
import { isAdminRole, isValidEmail, ROLE_ADMIN, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR, ROLE_OWNER } from '../rules/users.js';
import { nowSeconds } from '../../store/db.js';
import { insertInvite, INVITE_PENDING, INVITE_REVOKED, setInviteStatus, validInvites, type InviteRow } from '../../store/invites.js';
import { userByEmail, type UserRow } from '../../store/users.js';
import { sendMail } from '../../mail/send.js';

/**
 * Invitations (Zulip's zerver/actions/invites.py and zerver/views/invite.py):
 * emailed single-use invitations and reusable links, each with the role and
 * channels (and groups) it grants; every change sends invites_changed to
 * the organization's administrators and the invitation's referrer.
 */

/** PreregistrationUser.INVITE_AS */
export const INVITE_AS = [ROLE_OWNER, ROLE_ADMIN, ROLE_MODERATOR, ROLE_MEMBER, ROLE_GUEST] as const;
/** settings.INVITATION_LINK_VALIDITY_DAYS (10) in minutes. */
export const DEFAULT_INVITE_MINUTES = 10 * 24 * 60;

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');
export const newKey = (): string => randomBytes(18).toString('base64url');
export const joinUrl = (app: AppCtx, key: string): string => `${realmUrl(app.config)}/join/${key}/`;

export const noSuchInvitation = (): JsonableError => badRequest('No such invitation');

/** Zulip's check_role_based_permissions. */
export function checkInviteRole(caller: UserRow, invitedAs: number, requireAdmin: boolean): void {
  if (invitedAs === ROLE_OWNER && caller.role !== ROLE_OWNER) throw ownerRequired();
  if (requireAdmin && !isAdminRole(caller.role)) throw badRequest('Must be an organization administrator');
}

/** One entry of GET /invites (do_get_invites_controlled_by_user). */
export function presentInvite(app: AppCtx, row: InviteRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: row.id,
    invited_by_user_id: row.referrer_id,
    invited: row.created_at,
    expiry_date: row.expires_at,
    invited_as: row.invited_as,
    notify_referrer_on_join: row.notify_referrer_on_join === 1,
    is_multiuse: row.is_multiuse === 1,
  };
  if (row.is_multiuse) out.link_url = joinUrl(app, row.link_key!);
  else out.email = row.email;
  return out;
}

/** Administrators see every invitation, others their own. */
export async function invitesControlledBy(app: AppCtx, user: UserRow): Promise<InviteRow[]> {
  return validInvites(app.db, user.realm_id, nowSeconds(), isAdminRole(user.role) ? undefined : user.id);
}

/** zerver/lib/invites.py notify_invites_changed: administrators and the referrer refetch. */
export async function emitInvitesChanged(tx: Tx, realmId: number, referrerId: number | null): Promise<void> {
  const rows = await tx.db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', realmId).where('is_active', '=', 1).where('is_bot', '=', 0).execute();
  const ids = rows.filter((r) => isAdminRole(r.role) || r.id === referrerId).map((r) => r.id);
  tx.emit(realmId, { type: 'invites_changed' }, ids);
}

export interface InviteSpec {
  readonly invitedAs: number;
  readonly expiresInMinutes: number | null;
  readonly streamIds: readonly number[];
  readonly groupIds: readonly number[];
  readonly includeRealmDefaultSubscriptions: boolean;
  readonly notifyReferrerOnJoin: boolean;
}

function inviteRow(referrer: UserRow, spec: InviteSpec, email: string | null, key: string) {
  const now = nowSeconds();
  return {
    realm_id: referrer.realm_id,
    referrer_id: referrer.id,
    email,
    is_multiuse: email === null ? 1 : 0,
    invited_as: spec.invitedAs,
    stream_ids: JSON.stringify(spec.streamIds),
    group_ids: JSON.stringify(spec.groupIds),
    include_realm_default_subscriptions: spec.includeRealmDefaultSubscriptions ? 1 : 0,
    notify_referrer_on_join: spec.notifyReferrerOnJoin ? 1 : 0,
    key_hash: hashKey(key),
    link_key: email === null ? key : null,
    created_at: now,
    expires_at: spec.expiresInMinutes === null ? null : now + spec.expiresInMinutes * 60,
    status: INVITE_PENDING,
  };
}

export type EmailError = [email: string, msg: string, deactivated: boolean];

/**
 * Zulip's do_invite_users, first half (outside the transaction: the realm's
 * domain rules read through the shared connection): every address is
 * checked (format, domain rules, existing accounts); an invalid address
 * sends nothing; an address already in use is skipped and reported
 * (INVITATION_FAILED with sent_invitations true by the caller), unless
 * nobody is left to invite.
 */
export async function checkInvitees(app: AppCtx, realmId: number, emails: readonly string[]): Promise<{ good: string[]; skipped: EmailError[] }> {
  const errors: EmailError[] = [];
  const skipped: EmailError[] = [];
  const good: string[] = [];
  for (const email of emails) {
    if (email === '') continue;
    const problem = isValidEmail(email) ? await realmEmailProblem(app, realmId, email) : 'Invalid address.';
    if (problem) {
      errors.push([email, problem, false]);
      continue;
    }
    const existing = await userByEmail(app.db, realmId, email);
    if (existing) skipped.push([email, existing.is_active ? 'Already has an account.' : 'Account has been deactivated.', !existing.is_active]);
    else good.push(email);
  }
  const fail = (msg: string, list: EmailError[]) =>
    new JsonableError(msg, { code: 'INVITATION_FAILED', data: { errors: list, sent_invitations: false, license_limit_reached: false, daily_limit_reached: false } });
  if (errors.length) throw fail("Some emails did not validate, so we didn't send any invitations.", [...errors, ...skipped]);
  if (skipped.length && good.length === 0) throw fail("We weren't able to invite anyone.", skipped);
  return { good, skipped };
}

/** Second half: one invitation per address, each mailed after the commit. */
export async function doInviteUsers(app: AppCtx, tx: Tx, referrer: UserRow, emails: readonly string[], spec: InviteSpec): Promise<void> {
  for (const email of emails) {
    const key = newKey();
    await insertInvite(tx.db, inviteRow(referrer, spec, email, key));
    tx.afterPublish(() => sendInvitationEmail(app, referrer, email, key));
  }
  await emitInvitesChanged(tx, referrer.realm_id, referrer.id);
}

export async function doCreateMultiuseInvite(app: AppCtx, tx: Tx, referrer: UserRow, spec: InviteSpec): Promise<string> {
  const key = newKey();
  await insertInvite(tx.db, inviteRow(referrer, spec, null, key));
  await emitInvitesChanged(tx, referrer.realm_id, referrer.id);
  return joinUrl(app, key);
}

export async function doRevokeInvite(tx: Tx, invite: InviteRow): Promise<void> {
  await setInviteStatus(tx.db, invite.id, INVITE_REVOKED);
  await emitInvitesChanged(tx, invite.realm_id, invite.referrer_id);
}

/**
 * Resending an emailed invitation (do_send_user_invite_email): the link is
 * a hash in the database, so a resend issues a new key for the same
 * invitation (the old link stops working) and restarts its validity.
 */
export async function doResendInvite(app: AppCtx, tx: Tx, invite: InviteRow, referrer: UserRow): Promise<void> {
  const key = newKey();
  const now = nowSeconds();
  const expires = invite.expires_at === null ? null : now + (invite.expires_at - invite.created_at);
  await tx.db.updateTable('invites').set({ key_hash: hashKey(key), created_at: now, expires_at: expires }).where('id', '=', invite.id).execute();
  await emitInvitesChanged(tx, invite.realm_id, invite.referrer_id);
  tx.afterPublish(() => sendInvitationEmail(app, referrer, invite.email!, key));
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The invitation mail (Zulip's zerver/emails/invitation): a text and an HTML part. */
export async function sendInvitationEmail(app: AppCtx, referrer: UserRow, email: string, key: string): Promise<void> {
  const realm = await realmOf(app, referrer.realm_id);
  const link = joinUrl(app, key);
  const org = realm.name;
  const text =
    `Hi there,\n\n${referrer.full_name} (${referrer.delivery_email}) wants you to join them on Parley, ` +
    `in the ${org} organization at ${realmUrl(app.config)}.\n\nTo get started, open this link:\n\n${link}\n\n` +
    'If you were not expecting this invitation, you can ignore this email.\n';
  const html =
    `<p>Hi there,</p><p>${esc(referrer.full_name)} (${esc(referrer.delivery_email)}) wants you to join them on Parley, ` +
    `in the <b>${esc(org)}</b> organization.</p><p><a href="${esc(link)}">Join ${esc(org)}</a></p>` +
    `<p>Or open this link: ${esc(link)}</p><p>If you were not expecting this invitation, you can ignore this email.</p>`;
  await sendMail(app, { to: [email], subject: `${referrer.full_name} invited you to join ${org}`, text, html });
}

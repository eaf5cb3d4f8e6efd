import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest, insufficientPermission, JsonableError } from '../../domain/errors.js';
import { accessChannelById, canAddSubscribers, holdsRealmPermission, loadViewer } from '../../domain/access/channels.js';
import { accessUserGroupForUpdate } from '../../domain/access/user-groups.js';
import {
  checkInviteRole,
  checkInvitees,
  DEFAULT_INVITE_MINUTES,
  doCreateMultiuseInvite,
  doInviteUsers,
  doResendInvite,
  doRevokeInvite,
  INVITE_AS,
  invitesControlledBy,
  noSuchInvitation,
  presentInvite,
  type InviteSpec,
} from '../../domain/actions/invites.js';
import { isPossibleId } from '../../domain/rules/ids.js';
import { userHasRealmPermission } from '../../domain/rules/realm-group-settings.js';
import { ROLE_ADMIN, ROLE_MODERATOR, ROLE_OWNER } from '../../domain/rules/users.js';
import { defaultChannelIds } from '../../store/channels.js';
import { inviteById, INVITE_PENDING, type InviteRow } from '../../store/invites.js';
import { userById } from '../../store/users.js';
import { requireMemberOrAdmin } from './users.js';

/**
 * Invitations (Zulip's zerver/views/invite.py): require_member_or_admin on
 * every endpoint; sending needs can_invite_users_group, reusable links
 * create_multiuse_invite_group; inviting owners needs an owner, inviting
 * administrators or moderators an administrator; the channels must be
 * accessible and open to the caller's adding subscribers (default
 * channels always are), the groups open to can_add_members_group.
 */

const inviteSpecParams = {
  group_ids: p.idList().optional(),
  include_realm_default_subscriptions: p.bool().default(false),
  invite_as: p.intIn(INVITE_AS).default(400),
  invite_expires_in_minutes: p.json(z.int().nullable()).default(DEFAULT_INVITE_MINUTES),
};

/** Zulip's get_invitee_emails_set: split on commas and new lines, "Name <address>" gives the address. */
export function inviteeEmails(raw: string): string[] {
  const out = new Set<string>();
  for (let part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    if (named) part = named[1]!;
    out.add(part.trim());
  }
  return [...out];
}

async function checkSpec(
  ctx: AuthedCtx,
  q: { invite_as: number; group_ids?: number[]; stream_ids?: number[]; include_realm_default_subscriptions: boolean; invite_expires_in_minutes: number | null },
  notify: boolean,
): Promise<InviteSpec> {
  checkInviteRole(ctx.userRow, q.invite_as, [ROLE_OWNER, ROLE_ADMIN, ROLE_MODERATOR].includes(q.invite_as));
  if (q.invite_expires_in_minutes !== null && q.invite_expires_in_minutes <= 0) throw badRequest('Invalid invite_expires_in_minutes');
  const db = ctx.app.db;
  const v = await loadViewer(db, ctx.userRow);
  const streamIds = q.stream_ids ?? [];
  const channels = [];
  for (const id of streamIds) {
    try {
      if (!isPossibleId(id)) throw badRequest('Invalid channel ID');
      channels.push(await accessChannelById(db, v, id));
    } catch (err) {
      if (err instanceof JsonableError) throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
      throw err;
    }
  }
  if (channels.length) {
    const realmAllows = await holdsRealmPermission(db, ctx.user.realmId, v.id, 'can_add_subscribers_group');
    const defaults = new Set(await defaultChannelIds(db, ctx.user.realmId));
    if (channels.some((ch) => !defaults.has(ch.id) && !canAddSubscribers(v, ch, realmAllows))) {
      throw badRequest('You do not have permission to subscribe other users to channels.');
    }
  }
  for (const gid of q.group_ids ?? []) await accessUserGroupForUpdate(db, ctx.user, gid, ['can_add_members_group']);
  return {
    invitedAs: q.invite_as,
    expiresInMinutes: q.invite_expires_in_minutes,
    streamIds: [...new Set(streamIds)],
    groupIds: [...new Set(q.group_ids ?? [])],
    includeRealmDefaultSubscriptions: q.include_realm_default_subscriptions,
    notifyReferrerOnJoin: notify,
  };
}

export const getInvites = endpoint({
  method: 'GET',
  path: '/invites',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: {},
  handler: async (ctx) => {
    const rows = await invitesControlledBy(ctx.app, ctx.userRow);
    return { invites: rows.map((r) => presentInvite(ctx.app, r)) };
  },
});

export const sendInvites = endpoint({
  method: 'POST',
  path: '/invites',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: {
    ...inviteSpecParams,
    invitee_emails: p.str(),
    notify_referrer_on_join: p.bool().default(true),
    stream_ids: p.idList(),
  },
  handler: async (ctx, q) => {
    if (!(await userHasRealmPermission(ctx.app.db, ctx.user.realmId, ctx.user.id, 'can_invite_users_group'))) throw insufficientPermission();
    const spec = await checkSpec(ctx, q, q.notify_referrer_on_join);
    if (!q.invitee_emails) throw badRequest('You must specify at least one email address.');
    const emails = inviteeEmails(q.invitee_emails);
    const { good, skipped } = await checkInvitees(ctx.app, ctx.user.realmId, emails);
    await transact(ctx.app, (tx) => doInviteUsers(ctx.app, tx, ctx.userRow, good, spec));
    if (skipped.length) {
      throw new JsonableError("Some of those addresses are already using Parley, so we didn't send them an invitation. We did send invitations to everyone else!", {
        code: 'INVITATION_FAILED',
        data: { errors: skipped, sent_invitations: true, license_limit_reached: false, daily_limit_reached: false },
      });
    }
    return {};
  },
});

export const createMultiuseInvite = endpoint({
  method: 'POST',
  path: '/invites/multiuse',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: { ...inviteSpecParams, stream_ids: p.idList().optional() },
  handler: async (ctx, q) => {
    if (!(await userHasRealmPermission(ctx.app.db, ctx.user.realmId, ctx.user.id, 'create_multiuse_invite_group'))) throw insufficientPermission();
    const spec = await checkSpec(ctx, q, false);
    const link = await transact(ctx.app, (tx) => doCreateMultiuseInvite(ctx.app, tx, ctx.userRow, spec));
    return { invite_link: link };
  },
});

/** Zulip's access_invite_by_id / access_multiuse_invite_by_id. */
async function accessInvite(ctx: AuthedCtx, id: number, multiuse: boolean): Promise<InviteRow> {
  const row = isPossibleId(id) ? await inviteById(ctx.app.db, ctx.user.realmId, id) : undefined;
  if (!row || (row.is_multiuse === 1) !== multiuse) throw noSuchInvitation();
  // Emailed invitations leave the table's pending state when used or revoked (Zulip deletes them).
  if (!multiuse && row.status !== INVITE_PENDING) throw noSuchInvitation();
  if (row.referrer_id !== ctx.user.id) checkInviteRole(ctx.userRow, row.invited_as, true);
  if (multiuse && row.status !== INVITE_PENDING) throw badRequest('Invitation has already been revoked');
  return row;
}

export const revokeInvite = endpoint({
  method: 'DELETE',
  path: '/invites/:invite_id',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: { invite_id: p.pathId() },
  handler: async (ctx, { invite_id }) => {
    const row = await accessInvite(ctx, invite_id, false);
    await transact(ctx.app, (tx) => doRevokeInvite(tx, row));
    return {};
  },
});

export const revokeMultiuseInvite = endpoint({
  method: 'DELETE',
  path: '/invites/multiuse/:invite_id',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: { invite_id: p.pathId() },
  handler: async (ctx, { invite_id }) => {
    const row = await accessInvite(ctx, invite_id, true);
    await transact(ctx.app, (tx) => doRevokeInvite(tx, row));
    return {};
  },
});

export const resendInvite = endpoint({
  method: 'POST',
  path: '/invites/:invite_id/resend',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: { invite_id: p.pathId() },
  handler: async (ctx, { invite_id }) => {
    const row = await accessInvite(ctx, invite_id, false);
    const referrer = await userById(ctx.app.db, row.realm_id, row.referrer_id);
    await transact(ctx.app, (tx) => doResendInvite(ctx.app, tx, row, referrer!));
    return {};
  },
});

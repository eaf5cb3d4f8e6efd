import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { group, ids, mkChannel, plain, realmSetting } from '../support/channels.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { linkIn } from '../support/pages.js';

let t: TestServer;
let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestServer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpStartTls: 'never', smtpTimeoutMs: 5000 });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const adminsAnd = (...extra: number[]) => [...new Set([...ids(t, 'owner', 'iago'), ...extra])].sort((a, b) => a - b);

async function inviteRows(): Promise<unknown[]> {
  return t.app.ctx.db.selectFrom('invites').selectAll().orderBy('id').execute();
}

/** A refused request: the exact error, no row, no event, no mail. */
async function refused(fn: () => Promise<any>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await inviteRows();
  const mails = smtp.mails.length;
  let res: any;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, status, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await inviteRows()).toEqual(before);
  expect(smtp.mails.length).toBe(mails);
}

describe('POST /invites', () => {
  it('invites by email: one row per address, the mail with its join link, invites_changed to administrators and the referrer', async () => {
    const ch = await mkChannel(t, 'inv-public', { subscribers: [t.users.hamlet.id] });
    const before = smtp.mails.length;
    const deliveries = plain(
      await t.captureEvents(async () => {
        const body = expectSuccess(
          await t.post('/invites', { invitee_emails: 'alice@example.com, Bob <bob@example.com>\nalice@example.com', stream_ids: [ch], invite_expires_in_minutes: 60 }, 'hamlet'),
        );
        expect(body).toEqual({ result: 'success', msg: '' });
      }),
    );
    expect(deliveries).toEqual([{ event: { type: 'invites_changed' }, userIds: adminsAnd(t.users.hamlet.id) }]);
    const mails = await smtp.waitFor(before + 2);
    const fresh = mails.slice(before).sort((a, b) => a.envelopeTo[0]!.localeCompare(b.envelopeTo[0]!));
    expect(fresh.map((m) => [m.envelopeTo, m.parsed.subject])).toEqual([
      [['alice@example.com'], 'King Hamlet invited you to join Parley'],
      [['bob@example.com'], 'King Hamlet invited you to join Parley'],
    ]);
    expect(linkIn(fresh[0]!.parsed.text!, '/join/')).toMatch(/^\/join\/[A-Za-z0-9_-]{24}\/$/);
    expect(fresh[0]!.parsed.html).toContain('<a href="http://zulip.testserver/join/');

    // Hamlet sees his own invitations; an administrator sees them too.
    const mine = expectSuccess(await t.get('/invites', {}, 'hamlet')).invites;
    expect(mine).toEqual([
      { id: expect.any(Number), invited_by_user_id: t.users.hamlet.id, invited: expect.any(Number), expiry_date: expect.any(Number), invited_as: 400, notify_referrer_on_join: true, is_multiuse: false, email: expect.any(String) },
      { id: expect.any(Number), invited_by_user_id: t.users.hamlet.id, invited: expect.any(Number), expiry_date: expect.any(Number), invited_as: 400, notify_referrer_on_join: true, is_multiuse: false, email: expect.any(String) },
    ]);
    expect(mine.map((i: any) => i.email).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    expect(mine[0].expiry_date - mine[0].invited).toBe(3600);
    expect(expectSuccess(await t.get('/invites', {}, 'iago')).invites).toEqual(mine);
    expect(expectSuccess(await t.get('/invites', {}, 'cordelia')).invites).toEqual([]);
  });

  it('refusals, in Zulip\'s order and wording, write and send nothing', async () => {
    const priv = await mkChannel(t, 'inv-private', { invite_only: true, subscribers: [t.users.othello.id] });
    const pub = await mkChannel(t, 'inv-open', { subscribers: [] });
    const ok = { invitee_emails: 'new@example.com', stream_ids: [] };
    await refused(() => t.post('/invites', ok, 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    await refused(() => t.post('/invites', ok, 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    await refused(() => t.post('/invites', { invitee_emails: 'x@example.com' }, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'stream_ids' argument", { var_name: 'stream_ids' });
    await refused(() => t.post('/invites', { ...ok, invite_as: 100 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    await refused(() => t.post('/invites', { ...ok, invite_as: 200 }, 'hamlet'), 400, 'BAD_REQUEST', 'Must be an organization administrator');
    await refused(() => t.post('/invites', { ...ok, invite_as: 300 }, 'shiva'), 400, 'BAD_REQUEST', 'Must be an organization administrator');
    await refused(() => t.post('/invites', { ...ok, invite_as: 500 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid invite_as: Value error, Not in the list of possible values');
    await refused(() => t.post('/invites', { ...ok, invitee_emails: '' }, 'hamlet'), 400, 'BAD_REQUEST', 'You must specify at least one email address.');
    await refused(() => t.post('/invites', { ...ok, stream_ids: [priv] }, 'hamlet'), 400, 'BAD_REQUEST', `Invalid channel ID ${priv}. No invites were sent.`);
    await refused(() => t.post('/invites', { ...ok, stream_ids: [2 ** 53] }, 'hamlet'), 400, 'BAD_REQUEST', 'stream_ids[0] is too large');
    // Adding subscribers to a non-default channel needs can_add_subscribers_group (administrators here).
    await realmSetting(t, 'can_add_subscribers_group', 'role:administrators');
    await refused(() => t.post('/invites', { ...ok, stream_ids: [pub] }, 'hamlet'), 400, 'BAD_REQUEST', 'You do not have permission to subscribe other users to channels.');
    await realmSetting(t, 'can_add_subscribers_group', 'role:members');
    await refused(() => t.post('/invites', { ...ok, group_ids: [424242] }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid user group');
    await refused(() => t.post('/invites', { ...ok, invitee_emails: 'not-an-address, fine@example.com' }, 'hamlet'), 400, 'INVITATION_FAILED', "Some emails did not validate, so we didn't send any invitations.", {
      errors: [['not-an-address', 'Invalid address.', false]],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    await refused(() => t.post('/invites', { ...ok, invitee_emails: 'cordelia@zulip.com' }, 'hamlet'), 400, 'INVITATION_FAILED', "We weren't able to invite anyone.", {
      errors: [['cordelia@zulip.com', 'Already has an account.', false]],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    // Who may invite: can_invite_users_group.
    await realmSetting(t, 'can_invite_users_group', 'role:administrators');
    await refused(() => t.post('/invites', ok, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    await realmSetting(t, 'can_invite_users_group', 'role:members');
    // Domain rules of the organization.
    await realmSetting(t, 'emails_restricted_to_domains', true);
    await refused(() => t.post('/invites', { ...ok, invitee_emails: 'x@elsewhere.org' }, 'hamlet'), 400, 'INVITATION_FAILED', "Some emails did not validate, so we didn't send any invitations.", {
      errors: [['x@elsewhere.org', 'Outside your domain.', false]],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    await realmSetting(t, 'emails_restricted_to_domains', false);
    await refused(() => t.post('/invites', { ...ok, invitee_emails: 'x@mailinator.com' }, 'hamlet'), 400, 'INVITATION_FAILED', "Some emails did not validate, so we didn't send any invitations.", {
      errors: [['x@mailinator.com', 'Please use your real email address.', false]],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
  });

  it('skips existing accounts but invites the others (INVITATION_FAILED with sent_invitations)', async () => {
    const res = await t.post('/invites', { invitee_emails: 'othello@zulip.com,carol@example.com', stream_ids: [] }, 'iago');
    expectError(res, 400, 'INVITATION_FAILED', "Some of those addresses are already using Parley, so we didn't send them an invitation. We did send invitations to everyone else!", {
      errors: [['othello@zulip.com', 'Already has an account.', false]],
      sent_invitations: true,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    const invites = expectSuccess(await t.get('/invites', {}, 'iago')).invites;
    expect(invites.filter((i: any) => i.email === 'carol@example.com')).toHaveLength(1);
  });
});

describe('reusable links, revoke and resend', () => {
  it('POST /invites/multiuse: administrators by default; the link, listed with link_url; revoke', async () => {
    await refused(() => t.post('/invites/multiuse', {}, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    let link = '';
    const deliveries = plain(
      await t.captureEvents(async () => {
        link = expectSuccess(await t.post('/invites/multiuse', { invite_as: 600, invite_expires_in_minutes: null }, 'iago')).invite_link;
      }),
    );
    expect(link).toMatch(/^http:\/\/zulip\.testserver\/join\/[A-Za-z0-9_-]{24}\/$/);
    expect(deliveries).toEqual([{ event: { type: 'invites_changed' }, userIds: adminsAnd() }]);
    const listed = expectSuccess(await t.get('/invites', {}, 'owner')).invites.find((i: any) => i.is_multiuse);
    expect(listed).toEqual({ id: expect.any(Number), invited_by_user_id: t.users.iago.id, invited: expect.any(Number), expiry_date: null, invited_as: 600, notify_referrer_on_join: false, is_multiuse: true, link_url: link });
    await refused(() => t.delete(`/invites/multiuse/${listed.id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Must be an organization administrator');
    await refused(() => t.delete('/invites/multiuse/424242', {}, 'iago'), 400, 'BAD_REQUEST', 'No such invitation');
    const revoked = plain(await t.captureEvents(async () => expectSuccess(await t.delete(`/invites/multiuse/${listed.id}`, {}, 'owner'))));
    expect(revoked).toEqual([{ event: { type: 'invites_changed' }, userIds: adminsAnd(t.users.iago.id) }]);
    await refused(() => t.delete(`/invites/multiuse/${listed.id}`, {}, 'owner'), 400, 'BAD_REQUEST', 'Invitation has already been revoked');
    expect(expectSuccess(await t.get('/invites', {}, 'owner')).invites.some((i: any) => i.id === listed.id)).toBe(false);
    // An owner-granting link needs an owner.
    await refused(() => t.post('/invites/multiuse', { invite_as: 100 }, 'iago'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
  });

  it('resend issues a new link (the old one stops working); revoke; others need to be administrators', async () => {
    expectSuccess(await t.post('/invites', { invitee_emails: 'dave@example.com', stream_ids: [] }, 'cordelia'));
    const before = smtp.mails.length;
    const inv = expectSuccess(await t.get('/invites', {}, 'cordelia')).invites.find((i: any) => i.email === 'dave@example.com');
    await refused(() => t.post(`/invites/${inv.id}/resend`, {}, 'othello'), 400, 'BAD_REQUEST', 'Must be an organization administrator');
    await refused(() => t.post('/invites/424242/resend', {}, 'cordelia'), 400, 'BAD_REQUEST', 'No such invitation');
    const deliveries = plain(await t.captureEvents(async () => expectSuccess(await t.post(`/invites/${inv.id}/resend`, {}, 'iago'))));
    expect(deliveries).toEqual([{ event: { type: 'invites_changed' }, userIds: adminsAnd(t.users.cordelia.id) }]);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    expect(mail!.envelopeTo).toEqual(['dave@example.com']);
    await refused(() => t.delete(`/invites/${inv.id}`, {}, 'othello'), 400, 'BAD_REQUEST', 'Must be an organization administrator');
    const revoked = plain(await t.captureEvents(async () => expectSuccess(await t.delete(`/invites/${inv.id}`, {}, 'cordelia'))));
    expect(revoked).toEqual([{ event: { type: 'invites_changed' }, userIds: adminsAnd(t.users.cordelia.id) }]);
    await refused(() => t.delete(`/invites/${inv.id}`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'No such invitation');
    // A followed revoked link is the invalid-link page.
    const res = await t.app.http.inject({ method: 'GET', url: linkIn(mail!.parsed.text!, '/join/') });
    expect(res.statusCode).toBe(404);
  });

  it('groups given must allow the caller to add members', async () => {
    const gid = expectSuccess(await t.post('/user_groups/create', { name: 'inviters', description: '', members: [t.users.iago.id] }, 'iago')).group_id;
    await refused(() => t.post('/invites', { invitee_emails: 'g@example.com', stream_ids: [], group_ids: [gid] }, 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expectSuccess(await t.post('/invites', { invitee_emails: 'g@example.com', stream_ids: [], group_ids: [gid] }, 'iago'));
    expect(await group(t, 'role:members')).toEqual(expect.any(Number));
  });
});

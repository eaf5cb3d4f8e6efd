import { canAccessUser, userAccessIn } from '../access/user-access.js';
import { ROLE_GUEST } from '../rules/users.js';
import { fakeEmailDomain } from '../../config.js';
import type { AppCtx } from '../context.js';
import { badRequest } from '../errors.js';
import { MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS } from '../rules/limits.js';
import { userSettings } from '../rules/user-settings.js';
import { apiEmail } from '../../presenters/user.js';
import { subscriberIds } from '../../store/channels.js';
import type { ChannelRow } from '../../store/channels.js';
import type { SendReads } from '../send-read-cache.js';
import type { UserRow } from '../../store/users.js';

/**
 * Typing notifications. Nothing is stored (the server keeps no typing
 * state), so there is no transaction: the event goes straight to the bus.
 * Only users whose receives_typing_notifications is on get it; channel
 * typing additionally reaches only queues that declared
 * stream_typing_notifications (events/delivery.ts).
 */

export type TypingOp = 'start' | 'stop';

const receivesTyping = (settingsJson: string): boolean => userSettings(settingsJson).receives_typing_notifications === true;

/**
 * Direct-message typing: `recipients` lists the `to` users and the sender
 * (appended unless already present); receivers are those of them who are
 * active and receive typing notifications, the sender included.
 */
export async function doSendDirectTyping(app: AppCtx, sender: UserRow, to: readonly number[], op: TypingOp): Promise<void> {
  const ids: number[] = [];
  for (const id of [...to, sender.id]) if (!ids.includes(id)) ids.push(id);
  const rows = await app.db
    .selectFrom('users')
    .select(['id', 'delivery_email', 'settings', 'is_bot', 'is_active'])
    .where('realm_id', '=', sender.realm_id)
    .where('id', 'in', ids)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  // A restricted guest may not learn about users it cannot access by typing to them: refused as a
  // direct message to them is (Zulip's check_sender_can_access_recipients wording). Free for non-guests.
  if (sender.role === ROLE_GUEST) {
    const access = await userAccessIn(app.db, { id: sender.id, realmId: sender.realm_id, role: sender.role });
    if (rows.some((r) => !canAccessUser(access, r))) throw badRequest('You do not have permission to access some of the recipients.');
  }
  const domain = fakeEmailDomain(app.config);
  const brief = (id: number) => ({ user_id: id, email: apiEmail(byId.get(id)!, domain) });
  const event = {
    type: 'typing',
    message_type: 'direct',
    op,
    sender: brief(sender.id),
    recipients: ids.map(brief),
  };
  const receivers = ids.filter((id) => {
    const r = byId.get(id)!;
    return r.is_active === 1 && receivesTyping(r.settings);
  });
  if (receivers.length) await app.bus.publish([{ realmId: sender.realm_id, event, userIds: receivers }]);
}

/**
 * Channel typing: to the channel's active subscribers who receive typing
 * notifications; nothing at all in channels with more than
 * MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS subscribers. The caller has
 * checked access and posting permission. The receivers are read once per
 * committed state (`reads`, domain/send-read-cache.ts): clients send a start
 * and a stop for every few seconds of typing, and the two reads were most of
 * the call's time (P5: docs/performance.md, "2026-12-03, afternoon").
 */
export async function doSendChannelTyping(app: AppCtx, sender: UserRow, channel: ChannelRow, topic: string, op: TypingOp, reads: SendReads): Promise<void> {
  const receivers = await reads.get(`typing-receivers:${channel.id}`, () => channelTypingReceivers(app, channel.id));
  if (receivers.length === 0) return;
  const event = {
    type: 'typing',
    message_type: 'stream',
    op,
    sender: { user_id: sender.id, email: apiEmail(sender, fakeEmailDomain(app.config)) },
    stream_id: channel.id,
    topic,
  };
  await app.bus.publish([{ realmId: sender.realm_id, event, userIds: receivers }]);
}

/** The channel's active subscribers who receive typing notifications, in id order (frozen: shared between calls). */
async function channelTypingReceivers(app: AppCtx, channelId: number): Promise<readonly number[]> {
  const subscribers = await subscriberIds(app.db, channelId);
  if (subscribers.length === 0 || subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return NO_RECEIVERS;
  const rows = await app.db.selectFrom('users').select(['id', 'settings']).where('id', 'in', subscribers).execute();
  return Object.freeze(rows.filter((r) => receivesTyping(r.settings)).map((r) => r.id).sort((a, b) => a - b));
}

const NO_RECEIVERS: readonly number[] = Object.freeze([]);

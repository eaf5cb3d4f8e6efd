import type { AppCtx } from './context.js';
import { transact } from './context.js';
import { doCreateUser } from './actions/users.js';
import { checkAndSendMessage, type SendInput } from './actions/message-send.js';
import { BOT_GENERIC } from './rules/users.js';
import { userByEmail, type UserRow } from '../store/users.js';

/**
 * Zulip's Notification Bot (settings.NOTIFICATION_BOT), the sender of
 * reminders and of "your scheduled message failed" notices.
 *
 * MERGE NOTE: Zulip's system bots are cross-realm users of an internal realm.
 * Another branch builds that; until it lands, this is the ONE lookup of the
 * bot: the realm's own bot user with Zulip's email, created (through the
 * ordinary user action, so clients get the realm_user add event) the first
 * time a notice is sent. Replace the body of notificationBot with the shared
 * system-bot lookup when merging; callers do not change.
 */
export const NOTIFICATION_BOT_EMAIL = 'notification-bot@zulip.com';
const NOTIFICATION_BOT_NAME = 'Notification Bot';

export async function notificationBot(app: AppCtx, realmId: number): Promise<UserRow> {
  const found = await userByEmail(app.db, realmId, NOTIFICATION_BOT_EMAIL);
  if (found) return found;
  try {
    return await transact(app, (tx) =>
      doCreateUser(app, tx, realmId, { email: NOTIFICATION_BOT_EMAIL, fullName: NOTIFICATION_BOT_NAME, passwordHash: null, botType: BOT_GENERIC, botOwnerId: null }),
    );
  } catch (err) {
    // Another process created it at the same moment (unique realm + email).
    const again = await userByEmail(app.db, realmId, NOTIFICATION_BOT_EMAIL);
    if (again) return again;
    throw err;
  }
}

/**
 * A direct message from Notification Bot to one user (Zulip's
 * internal_send_private_message from get_system_bot(NOTIFICATION_BOT)). Every
 * reminder and failure notice goes through here. `inTransaction` runs in the
 * transaction that stores the message.
 */
export async function sendReminderNotice(
  app: AppCtx,
  recipient: Pick<UserRow, 'id' | 'realm_id'>,
  content: string,
  inTransaction?: SendInput['inTransaction'],
): Promise<number> {
  const bot = await notificationBot(app, recipient.realm_id);
  const res = await checkAndSendMessage(app, bot, {
    type: 'private',
    to: JSON.stringify([recipient.id]),
    topic: undefined,
    content,
    client: 'Internal',
    readBySender: true,
    ...(inTransaction ? { inTransaction } : {}),
  });
  return res.id;
}

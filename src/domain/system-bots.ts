import type { AppCtx } from './context.js';
import { checkAndSendMessage, type SendInput } from './actions/message-send.js';
import { systemBot } from './actions/system-bots.js';
import type { UserRow } from '../store/users.js';

/**
 * A direct message from Notification Bot (the cross-realm system bot of
 * actions/system-bots.ts) to one user: Zulip's internal_send_private_message
 * from get_system_bot(NOTIFICATION_BOT), the sender of reminders and of
 * "your scheduled message failed" notices. It goes through the internal
 * send path (the bot's permission checks skipped, nothing else); unlike
 * internalSendDirectMessage, a failure is the caller's to handle, and
 * `inTransaction` runs in the transaction that stores the message, so a
 * delivered reminder and its row's mark commit together.
 */
export async function sendReminderNotice(
  app: AppCtx,
  recipient: Pick<UserRow, 'id' | 'realm_id'>,
  content: string,
  inTransaction?: SendInput['inTransaction'],
): Promise<number> {
  const bot = await systemBot(app, 'notification');
  const res = await checkAndSendMessage(app, bot, {
    type: 'private',
    to: JSON.stringify([recipient.id]),
    topic: undefined,
    content,
    client: 'Internal',
    readBySender: false,
    internal: { realmId: recipient.realm_id, readBy: [] },
    ...(inTransaction ? { inTransaction } : {}),
  });
  return res.id;
}

import type { AppCtx, Tx } from '../domain/context.js';
import { transact } from '../domain/context.js';
import { JsonableError } from '../domain/errors.js';
import { accessMessage } from '../domain/access/messages.js';
import { checkAndSendMessage } from '../domain/actions/message-send.js';
import { reminderContent } from '../domain/actions/reminders.js';
import { realmOf } from '../domain/realm-row-cache.js';
import { sendReminderNotice } from '../domain/system-bots.js';
import { presentScheduledMessage } from '../presenters/scheduled-message.js';
import { DELIVERY_REMIND } from '../store/scheduled-messages-schema.js';
import * as store from '../store/scheduled-messages.js';
import type { ScheduledMessageRow } from '../store/scheduled-messages.js';
import { userById, type UserRow } from '../store/users.js';
import type { JobSource } from './scheduler.js';

/**
 * Delivery of scheduled messages and reminders (Zulip's
 * deliver_scheduled_messages worker: try_deliver_one_scheduled_message,
 * send_scheduled_message, send_reminder).
 *
 * Once-only: a process claims due rows (store.claimDue: SKIP LOCKED on
 * PostgreSQL) for LEASE_SEC, then sends each through the normal send
 * action; the send's own transaction flips the row to delivered with a
 * conditional UPDATE (store.settlePending). Should two processes ever try
 * the same row (a lease ran out mid-send), the second one's UPDATE waits for
 * the first commit, matches nothing, and its whole send rolls back.
 */

/** Zulip's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES. */
const LATE_CUTOFF_SEC = 10 * 60;
const LEASE_SEC = 60;
const BATCH = 50;

/** Thrown inside a send transaction when another attempt already settled the row: rolls the send back. */
class AlreadySettled extends Error {}

/** Zulip's datetime_to_global_time: a <time:...> Markdown tag in ISO form with a +00:00 offset. */
function globalTime(sec: number): string {
  return `<time:${new Date(sec * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;
}

/** Zulip's send_failed_scheduled_message_notification text. */
export function failedNoticeContent(row: Pick<ScheduledMessageRow, 'scheduled_timestamp'>, error: string): string {
  return (
    `The message you scheduled for ${globalTime(Number(row.scheduled_timestamp))} was not sent because of the following error:` +
    '\n\n' +
    `> ${error}` +
    '\n\n' +
    '[View scheduled messages](#scheduled)' +
    '\n\n'
  );
}

const settle = (row: ScheduledMessageRow, values: Parameters<typeof store.settlePending>[2]) => async (tx: Tx): Promise<void> => {
  if (!(await store.settlePending(tx.db, row.id, values))) throw new AlreadySettled();
};

export class ScheduledDelivery implements JobSource {
  readonly name = 'scheduled_messages';
  constructor(private readonly app: AppCtx) {}

  async nextDueAt(): Promise<number | null> {
    const t = await store.nextDueTimestamp(this.app.db, Math.floor(Date.now() / 1000));
    return t === null ? null : t * 1000;
  }

  async runDue(nowMs: number): Promise<number> {
    const now = Math.floor(nowMs / 1000);
    let total = 0;
    for (;;) {
      const rows = await store.claimDue(this.app.db, this.app.store.dialect, now, LEASE_SEC, BATCH);
      for (const row of rows) await this.deliverOne(row, now);
      total += rows.length;
      if (rows.length < BATCH) return total;
    }
  }

  private async deliverOne(row: ScheduledMessageRow, now: number): Promise<void> {
    const sender = await userById(this.app.db, row.realm_id, row.sender_id);
    let notify = true;
    try {
      if (!sender) throw new JsonableError('Internal server error');
      const realm = await realmOf(this.app, row.realm_id);
      // Repeats of validate_account_and_subdomain: the state may have changed since scheduling. No notice for these.
      if (realm.deactivated) {
        notify = false;
        throw new JsonableError('This organization has been deactivated', { code: 'REALM_DEACTIVATED', status: 401 });
      }
      if (!sender.is_active) {
        notify = false;
        throw new JsonableError('Account is deactivated', { code: 'USER_DEACTIVATED', status: 401 });
      }
      if (row.delivery_type === DELIVERY_REMIND) {
        // Reminders have their own notices, and skip the late cut-off (they go to oneself).
        notify = false;
        await this.sendReminder(row, sender);
        return;
      }
      if (now > Number(row.scheduled_timestamp) + LATE_CUTOFF_SEC) throw new JsonableError('Message could not be sent at the scheduled time.');
      await this.sendScheduled(row, sender);
    } catch (err) {
      if (err instanceof AlreadySettled) return;
      const message = err instanceof JsonableError ? err.message : 'Internal server error';
      if (!(err instanceof JsonableError)) this.app.log.error({ err, scheduledMessageId: row.id }, 'unexpected error sending a scheduled message');
      await this.markFailed(row, sender, message, notify);
    }
  }

  /** Zulip's send_scheduled_message: the normal send as the sender now, to the stored recipients. */
  private async sendScheduled(row: ScheduledMessageRow, sender: UserRow): Promise<void> {
    const to = row.type === 'stream' ? JSON.stringify(row.stream_id) : JSON.stringify(JSON.parse(row.to_user_ids) as number[]);
    await checkAndSendMessage(this.app, sender, {
      type: row.type === 'stream' ? 'stream' : 'private',
      to,
      topic: row.type === 'stream' ? row.topic : undefined,
      content: row.content,
      client: row.sending_client,
      readBySender: row.read_by_sender === 1,
      inTransaction: async (tx, messageId) => {
        await settle(row, { delivered: 1, delivered_message_id: messageId, claimed_until: null })(tx);
        tx.emit(row.realm_id, { type: 'scheduled_messages', op: 'remove', scheduled_message_id: row.id }, [row.sender_id]);
      },
    });
  }

  /** Zulip's send_reminder: content formatted again if the message is still accessible, else as stored. */
  private async sendReminder(row: ScheduledMessageRow, me: UserRow): Promise<void> {
    let content = row.content;
    try {
      const caller = { id: me.id, realmId: me.realm_id, role: me.role };
      const { message, channel } = await accessMessage(this.app.db, caller, row.reminder_target_message_id!, { forModify: false });
      content = await reminderContent(this.app, me, message, channel, row.reminder_note);
    } catch (err) {
      if (!(err instanceof JsonableError)) throw err;
    }
    await sendReminderNotice(this.app, me, content, async (tx, messageId) => {
      await settle(row, { delivered: 1, delivered_message_id: messageId, claimed_until: null })(tx);
      tx.emit(row.realm_id, { type: 'reminders', op: 'remove', reminder_id: row.id }, [row.sender_id]);
    });
  }

  /**
   * failed = true with the reason; for scheduled messages of an active sender
   * also an update event and Notification Bot's notice, committed with the mark.
   */
  private async markFailed(row: ScheduledMessageRow, sender: UserRow | undefined, reason: string, notify: boolean): Promise<void> {
    const values = { failed: 1, failure_message: reason, claimed_until: null };
    const updateEvent = (tx: Tx): void => {
      const failed = presentScheduledMessage({ ...row, failed: 1 });
      tx.emit(row.realm_id, { type: 'scheduled_messages', op: 'update', scheduled_message: failed }, [row.sender_id]);
    };
    if (notify && sender && row.delivery_type !== DELIVERY_REMIND) {
      try {
        await sendReminderNotice(this.app, sender, failedNoticeContent(row, reason), async (tx) => {
          await settle(row, values)(tx);
          updateEvent(tx);
        });
        return;
      } catch (err) {
        if (err instanceof AlreadySettled) return;
        this.app.log.warn({ err, scheduledMessageId: row.id }, 'could not send the failed-scheduled-message notice');
      }
    }
    try {
      await transact(this.app, async (tx) => {
        await settle(row, values)(tx);
        if (notify && row.delivery_type !== DELIVERY_REMIND) updateEvent(tx);
      });
    } catch (err) {
      if (!(err instanceof AlreadySettled)) throw err;
    }
  }
}

import type { AppCtx, Caller, Tx } from '../context.js';
import { transact } from '../context.js';
import { badRequest, JsonableError, notFound } from '../errors.js';
import { checkMessage, defaultReadBySender, type CheckedMessage } from './message-send.js';
import { presentScheduledMessage } from '../../presenters/scheduled-message.js';
import { DELIVERY_SEND_LATER } from '../../store/scheduled-messages-schema.js';
import * as store from '../../store/scheduled-messages.js';
import type { ScheduledMessageRow } from '../../store/scheduled-messages.js';
import { userById, type UserRow } from '../../store/users.js';

/**
 * Scheduled messages (Zulip: zerver/views/scheduled_messages.py,
 * zerver/actions/scheduled_messages.py). A scheduled message is checked
 * like a send when scheduled or edited, stored, and sent by the scheduler
 * (src/jobs/scheduled-delivery.ts) through the normal send action as the
 * sender at that time.
 */

/** Zulip's DeliveryTimeNotInFutureError. */
export const deliveryTimeNotInFuture = (): JsonableError => badRequest('Scheduled delivery time must be in the future.');
export const scheduledMessageNotFound = (): JsonableError => notFound('Scheduled message does not exist');

export type RecipientType = 'stream' | 'private';

/** Zulip's API_RECIPIENT_TYPES with the newer names mapped to the stored ones. */
export function recipientType(t: string): RecipientType {
  return t === 'stream' || t === 'channel' ? 'stream' : 'private';
}

/** Zulip's extract_stream_id (recipient_parsing.py): Python's int() of the raw value. */
export function extractChannelId(to: string): number {
  if (!/^\s*[+-]?\d+\s*$/.test(to)) throw badRequest('Invalid data type for channel ID');
  return Number(to.trim());
}

/** Zulip's extract_direct_message_recipient_ids: a JSON list of user ids, duplicates dropped. */
export function extractRecipientIds(to: string): number[] {
  let v: unknown;
  try {
    v = JSON.parse(to);
  } catch {
    v = to;
  }
  if (!Array.isArray(v)) throw badRequest('Invalid data type for recipients');
  if (v.some((x) => typeof x !== 'number' || !Number.isInteger(x))) throw badRequest('Recipient list may only contain user IDs');
  return [...new Set(v as number[])];
}

/** The `to` of the scheduled-message object: the others of a DM, or oneself (Zulip's get_recipient_ids). */
export function recipientIdsOf(checked: CheckedMessage, senderId: number): number[] {
  const all = checked.addressed.recipients;
  const others = all.filter((id) => id !== senderId);
  return others.length ? [...others].sort((a, b) => a - b) : [senderId];
}

/** The stored form of a checked message. */
function storedFields(checked: CheckedMessage, senderId: number): Pick<ScheduledMessageRow, 'type' | 'stream_id' | 'to_user_ids' | 'topic' | 'content' | 'rendered_content'> {
  const a = checked.addressed;
  return a.channel
    ? { type: 'stream', stream_id: a.channel.id, to_user_ids: '[]', topic: a.topic, content: checked.content, rendered_content: checked.rendered.html }
    : { type: 'private', stream_id: null, to_user_ids: JSON.stringify(recipientIdsOf(checked, senderId)), topic: '', content: checked.content, rendered_content: checked.rendered.html };
}

async function check(app: AppCtx, sender: UserRow, type: RecipientType, to: number | number[], topic: string | undefined, content: string): Promise<CheckedMessage> {
  return checkMessage(app, sender, { type, to: JSON.stringify(to), topic, content });
}

export interface ScheduleInput {
  readonly type: RecipientType;
  readonly to: string;
  readonly topic: string | undefined;
  readonly content: string;
  readonly deliverAt: number;
  readonly readBySender: boolean | undefined;
  readonly client: string;
}

/** Zulip's check_schedule_message + do_schedule_messages; returns the new id. */
export async function checkScheduleMessage(app: AppCtx, sender: UserRow, input: ScheduleInput, nowSec: number): Promise<number> {
  if (input.deliverAt <= nowSec) throw deliveryTimeNotInFuture();
  const to = input.type === 'stream' ? extractChannelId(input.to) : extractRecipientIds(input.to);
  const checked = await check(app, sender, input.type, to, input.topic, input.content);
  const fields = storedFields(checked, sender.id);
  // Legacy default: read for the sender when sent from a full client, unless it is a message to oneself only.
  const toSelf = fields.type === 'private' && fields.to_user_ids === JSON.stringify([sender.id]);
  const readBySender = input.readBySender ?? (defaultReadBySender(input.client) && !toSelf);
  const row = await transact(app, async (tx) => {
    const row = await store.insertScheduled(tx.db, {
      realm_id: sender.realm_id,
      sender_id: sender.id,
      delivery_type: DELIVERY_SEND_LATER,
      ...fields,
      scheduled_timestamp: input.deliverAt,
      read_by_sender: readBySender ? 1 : 0,
      sending_client: input.client,
      delivered: 0,
      failed: 0,
    });
    tx.emit(sender.realm_id, { type: 'scheduled_messages', op: 'add', scheduled_messages: [presentScheduledMessage(row)] }, [sender.id]);
    tx.afterPublish(() => app.jobs?.wake());
    return row;
  });
  return row.id;
}

export interface EditInput {
  readonly type: RecipientType | undefined;
  readonly to: string | undefined;
  readonly topic: string | undefined;
  readonly content: string | undefined;
  readonly deliverAt: number | undefined;
  readonly client: string;
}

/** Zulip's edit_scheduled_message: only what was given changes; a failed message needs a new time. */
export async function doEditScheduledMessage(app: AppCtx, sender: UserRow, id: number, input: EditInput): Promise<void> {
  // Checked before the transaction (the message checks read with the pool), then re-read under a lock.
  const existing = await store.rowOfUser(app.db, sender.id, DELIVERY_SEND_LATER, id);
  if (!existing) throw scheduledMessageNotFound();
  if (existing.delivered === 1) throw badRequest('Scheduled message was already sent');
  if (existing.failed === 1 && input.deliverAt === undefined) throw deliveryTimeNotInFuture();
  const existingType = existing.type as RecipientType;
  const existingTo: number[] = existing.type === 'stream' ? [existing.stream_id!] : (JSON.parse(existing.to_user_ids) as number[]);

  const patch: Partial<ScheduledMessageRow> = { sending_client: input.client, claimed_until: null };
  if (input.type !== undefined || input.to !== undefined || input.content !== undefined) {
    const type = input.type ?? existingType;
    let to: number | number[];
    if (input.to !== undefined) to = type === 'stream' ? extractChannelId(input.to) : extractRecipientIds(input.to);
    else to = type === 'stream' ? existingTo[0]! : existingTo;
    const topic = input.topic ?? existing.topic;
    const checked = await check(app, sender, type, to, type === 'stream' ? topic : undefined, input.content ?? existing.content);
    const fields = storedFields(checked, sender.id);
    if (input.type !== undefined || input.to !== undefined) Object.assign(patch, { type: fields.type, stream_id: fields.stream_id, to_user_ids: fields.to_user_ids, topic: fields.topic });
    else if (input.topic !== undefined && existingType === 'stream') patch.topic = fields.topic;
    if (input.content !== undefined) Object.assign(patch, { content: fields.content, rendered_content: fields.rendered_content });
  } else if (input.topic !== undefined && existingType === 'stream') {
    // Only the topic: checked as a channel topic (Zulip's check_stream_topic + truncate_topic).
    const checked = await check(app, sender, 'stream', existing.stream_id!, input.topic, existing.content);
    patch.topic = checked.addressed.topic;
  }
  if (input.deliverAt !== undefined) patch.scheduled_timestamp = input.deliverAt;
  if (existing.failed === 1) Object.assign(patch, { failed: 0, failure_message: null });

  await transact(app, async (tx) => {
    const locked = await store.rowOfUser(tx.db, sender.id, DELIVERY_SEND_LATER, id, true);
    if (!locked) throw scheduledMessageNotFound();
    // A delivery that committed since the checks above wins.
    if (locked.delivered === 1) throw badRequest('Scheduled message was already sent');
    await store.updateScheduled(tx.db, id, patch);
    const row = (await store.scheduledById(tx.db, id))!;
    tx.emit(sender.realm_id, { type: 'scheduled_messages', op: 'update', scheduled_message: presentScheduledMessage(row) }, [sender.id]);
    tx.afterPublish(() => app.jobs?.wake());
  });
}

export async function doDeleteScheduledMessage(tx: Tx, caller: Caller, id: number): Promise<void> {
  const row = await store.rowOfUser(tx.db, caller.id, DELIVERY_SEND_LATER, id, true);
  if (!row) throw scheduledMessageNotFound();
  await store.deleteScheduled(tx.db, id);
  tx.emit(caller.realmId, { type: 'scheduled_messages', op: 'remove', scheduled_message_id: id }, [caller.id]);
}

/** The sender as the database has them now (delivery acts as the sender at that time). */
export async function currentSender(app: AppCtx, row: ScheduledMessageRow): Promise<UserRow | undefined> {
  return userById(app.db, row.realm_id, row.sender_id);
}

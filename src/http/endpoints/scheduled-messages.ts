import { transact } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import {
  checkScheduleMessage,
  deliveryTimeNotInFuture,
  doDeleteScheduledMessage,
  doEditScheduledMessage,
  recipientType,
} from '../../domain/actions/scheduled-messages.js';
import { presentScheduledMessage } from '../../presenters/scheduled-message.js';
import { DELIVERY_SEND_LATER } from '../../store/scheduled-messages-schema.js';
import { pendingOfUserList } from '../../store/scheduled-messages.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** GET/POST /scheduled_messages, PATCH/DELETE /scheduled_messages/{id} (Zulip's views/scheduled_messages.py). */

const RECIPIENT_TYPES = ['direct', 'private', 'stream', 'channel'] as const;
const nowSec = (): number => Date.now() / 1000;

export const listScheduledMessages = endpoint({
  method: 'GET',
  path: '/scheduled_messages',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    const rows = await pendingOfUserList(ctx.app.db, ctx.user.id, DELIVERY_SEND_LATER);
    return { scheduled_messages: rows.map(presentScheduledMessage) };
  },
});

export const createScheduledMessage = endpoint({
  method: 'POST',
  path: '/scheduled_messages',
  auth: 'user',
  params: {
    type: p.oneOf(RECIPIENT_TYPES),
    to: p.str(),
    topic: p.str().alias('subject').optional(),
    content: p.str(),
    scheduled_delivery_timestamp: p.int(),
    read_by_sender: p.bool().optional(),
  },
  handler: async (ctx, params) => {
    const id = await checkScheduleMessage(
      ctx.app,
      ctx.userRow,
      {
        type: recipientType(params.type),
        to: params.to,
        topic: params.topic,
        content: params.content,
        deliverAt: params.scheduled_delivery_timestamp,
        readBySender: params.read_by_sender,
        client: ctx.clientName,
      },
      nowSec(),
    );
    return { scheduled_message_id: id };
  },
});

export const updateScheduledMessage = endpoint({
  method: 'PATCH',
  path: '/scheduled_messages/:scheduled_message_id',
  auth: 'user',
  params: {
    scheduled_message_id: p.pathId(),
    type: p.oneOf(RECIPIENT_TYPES).optional(),
    to: p.str().optional(),
    topic: p.str().alias('subject').optional(),
    content: p.str().optional(),
    scheduled_delivery_timestamp: p.int().optional(),
  },
  handler: async (ctx, params) => {
    // Zulip's update_scheduled_message_backend checks, in its order.
    if (params.type === undefined && params.to === undefined && params.topic === undefined && params.content === undefined && params.scheduled_delivery_timestamp === undefined) {
      throw badRequest('Nothing to change');
    }
    const type = params.type === undefined ? undefined : recipientType(params.type);
    if (type !== undefined && params.to === undefined) throw badRequest('Recipient required when updating type of scheduled message.');
    if (type === 'stream' && params.topic === undefined) throw badRequest('Topic required when updating scheduled message type to stream.');
    if (params.scheduled_delivery_timestamp !== undefined && params.scheduled_delivery_timestamp <= nowSec()) throw deliveryTimeNotInFuture();
    await doEditScheduledMessage(ctx.app, ctx.userRow, params.scheduled_message_id, {
      type,
      to: params.to,
      topic: params.topic,
      content: params.content,
      deliverAt: params.scheduled_delivery_timestamp,
      client: ctx.clientName,
    });
    return {};
  },
});

export const deleteScheduledMessage = endpoint({
  method: 'DELETE',
  path: '/scheduled_messages/:scheduled_message_id',
  auth: 'user',
  params: { scheduled_message_id: p.pathId() },
  handler: async (ctx, { scheduled_message_id }) => {
    await transact(ctx.app, (tx) => doDeleteScheduledMessage(tx, ctx.user, scheduled_message_id));
    return {};
  },
});

import { z } from 'zod';
import { accessMessage } from '../../domain/access/messages.js';
import { checkDeleteMessage } from '../../domain/actions/message-delete.js';
import { checkUpdateMessage } from '../../domain/actions/message-edit.js';
import { doSendMessageEditTyping } from '../../domain/actions/message-edit-typing.js';
import { editHistoryPolicy } from '../../domain/actions/message-events.js';
import { badRequest } from '../../domain/errors.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { messageHistory } from '../../presenters/message-history.js';
import { realmById } from '../../store/realms.js';
import { endpoint } from '../endpoint.js';
import type { AttachmentObject } from '../../presenters/attachment.js';
import { p } from '../params.js';

/** PATCH and DELETE /messages/{id}, GET /messages/{id}/history. */

export const updateMessage = endpoint({
  method: 'PATCH',
  path: '/messages/:message_id',
  auth: 'user',
  params: {
    message_id: p.pathId(),
    content: p.str().optional(),
    topic: p.str().alias('subject').optional(),
    stream_id: p.id(z.int().min(0)).optional(),
    propagate_mode: p.oneOf(['change_later', 'change_one', 'change_all']).default('change_one'),
    send_notification_to_old_thread: p.bool().default(false),
    send_notification_to_new_thread: p.bool().default(true),
    prev_content_sha256: p.str().optional(),
  },
  handler: async (ctx, params) => {
    const out = { detachedUploads: [] as AttachmentObject[] };
    await checkUpdateMessage(ctx.app, ctx.user, ctx.userRow, params.message_id, {
      content: params.content,
      topic: params.topic,
      streamId: params.stream_id as number | undefined,
      propagateMode: params.propagate_mode,
      prevContentSha256: params.prev_content_sha256,
      notifyOldThread: params.send_notification_to_old_thread,
      notifyNewThread: params.send_notification_to_new_thread,
    }, out);
    return { detached_uploads: out.detachedUploads };
  },
});

export const deleteMessage = endpoint({
  method: 'DELETE',
  path: '/messages/:message_id',
  auth: 'user',
  params: { message_id: p.pathId() },
  handler: async (ctx, { message_id }) => {
    await checkDeleteMessage(ctx.app, ctx.user, message_id);
    return {};
  },
});

export const getMessageHistory = endpoint({
  method: 'GET',
  path: '/messages/:message_id/history',
  auth: 'user',
  params: { message_id: p.pathId(), allow_empty_topic_name: p.bool().default(false) },
  handler: async (ctx, { message_id, allow_empty_topic_name }) => {
    const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
    const settings = realmSettings(realm.settings);
    const policy = editHistoryPolicy(settings);
    if (policy === 'none') throw badRequest('Message edit history is disabled in this organization');
    const { message } = await accessMessage(ctx.app.db, ctx.user, message_id, { forModify: false });
    return { message_history: messageHistory(message, policy, allow_empty_topic_name, settings.realm_empty_topic_display_name) };
  },
});

/** POST /messages/{id}/typing: typing while editing a message (behaviour-b §17). */
export const setMessageEditTyping = endpoint({
  method: 'POST',
  path: '/messages/:message_id/typing',
  auth: 'user',
  params: { message_id: p.pathId(), op: p.oneOf(['start', 'stop']) },
  handler: async (ctx, { message_id, op }) => {
    await doSendMessageEditTyping(ctx.app, ctx.user, ctx.userRow, message_id, op);
    return {};
  },
});

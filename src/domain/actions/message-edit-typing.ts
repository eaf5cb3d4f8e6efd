import type { AppCtx, Caller } from '../context.js';
import { badRequest } from '../errors.js';
import { accessMessage } from '../access/messages.js';
import { MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS } from '../rules/limits.js';
import { realmSettings } from '../rules/realm-settings.js';
import { userSettings } from '../rules/user-settings.js';
import { nowSeconds } from '../../store/db.js';
import { realmById } from '../../store/realms.js';
import type { UserRow } from '../../store/users.js';

/**
 * Typing while editing a message: the same access and edit permission as a
 * content edit (no time buffer), no state kept, the event straight to the
 * bus: channel subscribers (none above the typing size limit) or the DM's
 * participants, each only if they receive typing notifications.
 */
export async function doSendMessageEditTyping(app: AppCtx, caller: Caller, user: UserRow, messageId: number, op: 'start' | 'stop'): Promise<void> {
  const { message: m, channel } = await accessMessage(app.db, caller, messageId, { forModify: true });
  const realm = (await realmById(app.db, caller.realmId))!;
  const settings = realmSettings(realm.settings);
  if (!settings.allow_message_editing) throw badRequest('Your organization has turned off message editing');
  if (m.sender_id !== caller.id) throw badRequest("You don't have permission to edit this message");
  const limit = settings.message_content_edit_limit_seconds;
  if (limit !== null && nowSeconds() - m.date_sent > limit) throw badRequest('The time limit for editing this message has passed');
  const own = userSettings(user.settings);
  if (channel && own.send_stream_typing_notifications !== true) throw badRequest('User has disabled typing notifications for channel messages');
  if (!channel && own.send_private_typing_notifications !== true) throw badRequest('User has disabled typing notifications for direct messages');
  let candidates: number[];
  if (channel) {
    const subs = await app.db.selectFrom('subscriptions').select('user_id').where('channel_id', '=', channel.id).where('active', '=', 1).execute();
    if (subs.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return;
    candidates = subs.map((s) => s.user_id);
  } else candidates = (m.dm_key ?? String(caller.id)).split(',').map(Number);
  const rows = candidates.length
    ? await app.db.selectFrom('users').select(['id', 'settings']).where('id', 'in', candidates).where('is_active', '=', 1).execute()
    : [];
  const receivers = rows.filter((r) => userSettings(r.settings).receives_typing_notifications === true).map((r) => r.id).sort((a, b) => a - b);
  const recipient = channel ? { type: 'channel', channel_id: channel.id, topic: m.topic } : { type: 'direct', user_ids: receivers };
  const event = { type: 'typing_edit_message', op, sender_id: caller.id, message_id: m.id, recipient };
  if (receivers.length) await app.bus.publish([{ realmId: caller.realmId, event, userIds: receivers }]);
}

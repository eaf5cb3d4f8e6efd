import { accessChannelById, checkChannelSend, loadViewer } from '../../domain/access/channels.js';
import { doSendChannelTyping, doSendDirectTyping } from '../../domain/actions/typing.js';
import { badRequest } from '../../domain/errors.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { userSettings } from '../../domain/rules/user-settings.js';
import { realmById } from '../../store/realms.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/**
 * POST /typing (api.md endpoint 2, behaviour-a §2). The server keeps no
 * typing state: each call validates and sends one event.
 */
export const setTypingStatus = endpoint({
  method: 'POST',
  path: '/typing',
  auth: 'user',
  params: {
    type: p.oneOf(['direct', 'stream', 'channel']).default('direct'),
    op: p.oneOf(['start', 'stop']),
    to: p.idList().optional(),
    stream_id: p.id().optional(),
    topic: p.str().optional().alias('subject'),
  },
  handler: async (ctx, { type, op, to, stream_id, topic }) => {
    const settings = userSettings(ctx.userRow.settings);
    if (type === 'direct') {
      if (to === undefined) throw badRequest("Missing 'to' argument");
      if (to.length === 0) throw badRequest("Empty 'to' list");
      if (settings.send_private_typing_notifications !== true) throw badRequest('User has disabled typing notifications for direct messages');
      await doSendDirectTyping(ctx.app, ctx.userRow, to, op);
      return {};
    }
    // "channel" is the newer name of "stream".
    if (stream_id === undefined) throw badRequest('Missing channel ID');
    if (topic === undefined) throw badRequest('Missing topic');
    if (settings.send_stream_typing_notifications !== true) throw badRequest('User has disabled typing notifications for channel messages');
    const viewer = await loadViewer(ctx.app.db, ctx.userRow);
    const channel = await accessChannelById(ctx.app.db, viewer, stream_id);
    await checkChannelSend(ctx.app, ctx.userRow, channel);
    const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
    let name = topic.trim();
    // The empty topic's display names are read as the empty topic.
    if (name === '(no topic)' || name === realmSettings(realm.settings).realm_empty_topic_display_name) name = '';
    await doSendChannelTyping(ctx.app, ctx.userRow, channel, name, op);
    return {};
  },
});

import { accessChannelById, checkChannelSend, loadViewer } from '../../domain/access/channels.js';
import { doSendChannelTyping, doSendDirectTyping } from '../../domain/actions/typing.js';
import { badRequest } from '../../domain/errors.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { userSettings } from '../../domain/rules/user-settings.js';
import { realmById } from '../../store/realms.js';
import { sendReads } from '../../domain/send-read-cache.js';
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
    // The checks read only committed state and these fields of the caller's row, so their outcome is
    // kept while nothing is committed (domain/send-read-cache.ts; SQLite on a file): a refusal is never
    // kept, and any commit (a subscription, a permission, a role, a rename) makes the next call read again.
    const reads = sendReads(ctx.app);
    const u = ctx.userRow;
    const checked = await reads.get(`typing:${u.id}:${u.realm_id}:${u.role}:${u.is_bot}:${u.bot_owner_id}:${stream_id}`, async () => {
      const viewer = await loadViewer(ctx.app.db, u);
      const channel = await accessChannelById(ctx.app.db, viewer, stream_id);
      await checkChannelSend(ctx.app, u, channel);
      const realm = (await realmById(ctx.app.db, u.realm_id))!;
      return Object.freeze({ channel: Object.freeze(channel), emptyTopicName: realmSettings(realm.settings).realm_empty_topic_display_name });
    });
    let name = topic.trim();
    // The empty topic's display names are read as the empty topic.
    if (name === '(no topic)' || name === checked.emptyTopicName) name = '';
    await doSendChannelTyping(ctx.app, u, checked.channel, name, op, reads);
    return {};
  },
});

import { z } from 'zod';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { accessChannelById, hasMetadataAccess, invalidChannelId, loadViewer } from '../../domain/access/channels.js';
import { doSetUserTopicPolicy } from '../../domain/actions/user-topics.js';
import { checkTopicCharacters, MAX_TOPIC_LENGTH, VISIBILITY_INHERIT } from '../../domain/rules/channels.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { channelById } from '../../store/channels.js';
import { realmById } from '../../store/realms.js';

/**
 * POST /user_topics. Any policy may be set on a topic with no messages.
 * Removing a policy (0) also works for channels the user can no longer
 * read, as in Zulip — but only where the user has a preference or can still
 * see the channel, so the answer never reveals a private channel.
 */
export const updateUserTopic = endpoint({
  method: 'POST',
  path: '/user_topics',
  auth: 'user',
  params: {
    stream_id: p.id(),
    topic: p.str(z.string().max(MAX_TOPIC_LENGTH)),
    visibility_policy: p.intIn([0, 1, 2, 3]),
  },
  handler: async (ctx, { stream_id, topic, visibility_policy }) => {
    const db = ctx.app.db;
    const v = await loadViewer(db, ctx.userRow);
    const realm = (await realmById(db, ctx.user.realmId))!;
    const emptyName = String(realmSettings(realm.settings).realm_empty_topic_display_name);
    // The empty topic may arrive as its display name or the legacy "(no topic)".
    const topicName = topic === emptyName || topic === '(no topic)' ? '' : topic;
    checkTopicCharacters(topicName);
    let ch;
    if (visibility_policy === VISIBILITY_INHERIT) {
      ch = await channelById(db, v.realmId, stream_id);
      const hasRow = ch && (await db.selectFrom('user_topics').select('id').where('user_id', '=', v.id).where('channel_id', '=', ch.id).executeTakeFirst());
      if (!ch || (!hasRow && !hasMetadataAccess(v, ch))) throw invalidChannelId();
    } else ch = await accessChannelById(db, v, stream_id);
    const target = ch;
    await transact(ctx.app, (tx) => doSetUserTopicPolicy(tx, v.id, target, topicName, visibility_policy));
    return {};
  },
});

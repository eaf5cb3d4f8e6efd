import { z } from 'zod';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { accessChannelById, accessChannelByName, hasMetadataAccess, invalidChannelId, loadViewer } from '../../domain/access/channels.js';
import { badRequest } from '../../domain/errors.js';
import { doSetUserTopicPolicy } from '../../domain/actions/user-topics.js';
import { checkTopicCharacters, MAX_TOPIC_LENGTH, VISIBILITY_INHERIT, VISIBILITY_MUTED } from '../../domain/rules/channels.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { channelById, channelByName } from '../../store/channels.js';
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

/**
 * PATCH /users/me/subscriptions/muted_topics, the legacy form of
 * POST /user_topics (Zulip's update_muted_topic): the channel by `stream`
 * name or `stream_id` (exactly one), op "add" mutes the topic, "remove"
 * returns it to the channel's default. Removing works where the user has a
 * preference even without access to the channel; otherwise "Topic is not muted".
 */
export const updateMutedTopic = endpoint({
  method: 'PATCH',
  path: '/users/me/subscriptions/muted_topics',
  auth: 'user',
  params: {
    stream_id: p.id().optional(),
    stream: p.str().optional(),
    topic: p.str(z.string().max(MAX_TOPIC_LENGTH)),
    op: p.oneOf(['add', 'remove']),
  },
  handler: async (ctx, { stream_id, stream, topic, op }) => {
    // Zulip's check_for_exactly_one_stream_arg.
    if ((stream_id === undefined) === (stream === undefined)) throw badRequest('Unsupported parameter combination: stream_id, stream');
    const db = ctx.app.db;
    const v = await loadViewer(db, ctx.userRow);
    checkTopicCharacters(topic);
    let ch;
    if (op === 'add') {
      ch = stream !== undefined ? await accessChannelByName(db, v, stream) : await accessChannelById(db, v, stream_id!);
    } else {
      const notMuted = (): Error => badRequest('Topic is not muted');
      ch = stream !== undefined ? await channelByName(db, v.realmId, stream.trim()) : await channelById(db, v.realmId, stream_id!);
      const hasRow = ch && (await db.selectFrom('user_topics').select('id').where('user_id', '=', v.id).where('channel_id', '=', ch.id).executeTakeFirst());
      if (!ch || (!hasRow && !hasMetadataAccess(v, ch))) throw notMuted();
    }
    const target = ch;
    await transact(ctx.app, (tx) => doSetUserTopicPolicy(tx, v.id, target, topic, op === 'add' ? VISIBILITY_MUTED : VISIBILITY_INHERIT));
    return {};
  },
});

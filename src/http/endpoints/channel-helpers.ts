import { accessChannelById, checkChannelSend, loadViewer } from '../../domain/access/channels.js';
import { badRequest, insufficientPermission } from '../../domain/errors.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { isAdminRole } from '../../domain/rules/users.js';
import { topicHistory } from '../../domain/topic-history.js';
import { realmById } from '../../store/realms.js';
import { topicHistoryRows } from '../../store/topic-history.js';
import { userById } from '../../store/users.js';
import { doDeleteTopic } from '../../domain/actions/message-delete.js';
import { endpoint } from '../endpoint.js';
import { requireAdmin } from './users.js';
import { p } from '../params.js';

/** Channel helpers real clients call: a channel's topic list and its email address. */

/**
 * GET /users/me/{stream_id}/topics (Zulip's get_topics_backend): topics of
 * a channel the caller can read, with their newest message id, newest
 * first; in channels with protected history only from messages the caller
 * received.
 */
export const getChannelTopics = endpoint({
  method: 'GET',
  path: '/users/me/:stream_id/topics',
  auth: 'user',
  params: { stream_id: p.pathId(), allow_empty_topic_name: p.bool().default(false) },
  handler: async (ctx, v) => {
    const db = ctx.app.db;
    const channel = await accessChannelById(db, await loadViewer(db, ctx.userRow), v.stream_id);
    const [rows, realm] = await Promise.all([
      topicHistoryRows(db, ctx.user.realmId, channel, channel.history_public_to_subscribers ? null : ctx.user.id),
      realmById(db, ctx.user.realmId),
    ]);
    return { topics: topicHistory(rows, v.allow_empty_topic_name, realmSettings(realm!.settings).realm_empty_topic_display_name) };
  },
});

/**
 * GET /streams/{stream_id}/email_address (Zulip's get_stream_email_address).
 * Parley runs no incoming-email gateway; Zulip answers an empty address
 * when the gateway is not configured, and so does Parley, after the same
 * checks: the caller must be able to read and post in the channel, and a
 * sender_id other than the caller must be a bot the caller administers.
 */
export const getChannelEmailAddress = endpoint({
  method: 'GET',
  path: '/streams/:stream_id/email_address',
  auth: 'user',
  params: { stream_id: p.pathId(), sender_id: p.id().optional() },
  handler: async (ctx, v) => {
    const db = ctx.app.db;
    const channel = await accessChannelById(db, await loadViewer(db, ctx.userRow), v.stream_id);
    await checkChannelSend(ctx.app, ctx.userRow, channel);
    if (v.sender_id !== undefined && v.sender_id !== ctx.user.id) {
      const bot = v.sender_id > 0 && v.sender_id <= 2147483647 ? await userById(db, ctx.user.realmId, v.sender_id) : undefined;
      if (!bot || !bot.is_bot) throw badRequest('No such bot');
      if (bot.bot_owner_id !== ctx.user.id && !isAdminRole(ctx.user.role)) throw insufficientPermission();
    }
    return { email: '' };
  },
});

/**
 * POST /streams/{stream_id}/delete_topic (Zulip's delete_in_topic, behind
 * require_realm_admin): deletes the topic's messages the admin can access,
 * in batches; `complete` is false when the time ran out first (repeat the
 * request to continue). The realm's empty-topic display name means the empty topic.
 */
export const deleteTopic = endpoint({
  method: 'POST',
  path: '/streams/:stream_id/delete_topic',
  auth: 'user',
  guard: requireAdmin,
  params: { stream_id: p.pathId(), topic_name: p.str() },
  handler: async (ctx, { stream_id, topic_name }) => {
    const db = ctx.app.db;
    const channel = await accessChannelById(db, await loadViewer(db, ctx.userRow), stream_id);
    const realm = (await realmById(db, ctx.user.realmId))!;
    const topic = topic_name === realmSettings(realm.settings).realm_empty_topic_display_name ? '' : topic_name;
    const complete = await doDeleteTopic(ctx.app, ctx.user, channel, topic);
    return { complete };
  },
});

import { z } from 'zod';
import { loadViewer, accessChannelById } from '../../domain/access/channels.js';
import { resolveNarrow } from '../../domain/access/message-narrow.js';
import { checkFlagOperation, doMarkAllAsRead, doMarkChannelAsRead, doUpdateMessageFlags } from '../../domain/actions/message-flags.js';
import { badRequest } from '../../domain/errors.js';
import { fetchRange } from '../../domain/message-fetch.js';
import { parseAnchor, parseNarrow } from '../../domain/rules/message-narrow.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { topicKey } from '../../domain/rules/topics.js';
import { realmById } from '../../store/realms.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** Personal message flags: POST /messages/flags, /messages/flags/narrow, /mark_all_as_read, /mark_stream_as_read, /mark_topic_as_read. */

const MAX_MESSAGES_PER_UPDATE = 5000;

export const updateMessageFlags = endpoint({
  method: 'POST',
  path: '/messages/flags',
  auth: 'user',
  params: { messages: p.json(z.array(z.int())), op: p.str(), flag: p.str() },
  handler: async (ctx, { messages, op, flag }) => {
    await doUpdateMessageFlags(ctx.app, ctx.user, op, flag, messages);
    // Zulip echoes the request's list (kept for backwards compatibility).
    return { messages };
  },
});

export const updateMessageFlagsForNarrow = endpoint({
  method: 'POST',
  path: '/messages/flags/narrow',
  auth: 'user',
  params: {
    anchor: p.str(),
    include_anchor: p.bool().default(true),
    num_before: p.json(z.int().min(0)),
    num_after: p.json(z.int().min(0)),
    narrow: p.json(z.unknown()),
    op: p.str(),
    flag: p.str(),
  },
  handler: async (ctx, params) => {
    const anchor = parseAnchor(params.anchor, false);
    if (params.num_before > 0 && params.num_after > 0 && !params.include_anchor) throw badRequest('The anchor can only be excluded at an end of the range');
    const numBefore = Math.min(params.num_before, Math.max(MAX_MESSAGES_PER_UPDATE - params.num_after, MAX_MESSAGES_PER_UPDATE / 2));
    const numAfter = Math.min(params.num_after, MAX_MESSAGES_PER_UPDATE - numBefore);
    const narrow = parseNarrow(params.narrow);
    checkFlagOperation(params.op, params.flag);
    const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
    const resolved = await resolveNarrow(ctx.app, ctx.user, narrow, realmSettings(realm.settings).realm_empty_topic_display_name);
    const range = await fetchRange(ctx.app, resolved.spec, resolved.channelNarrow, { anchor, numBefore, numAfter, includeAnchor: params.include_anchor });
    const ids = range.rows.map((r) => r.id);
    const updated = await doUpdateMessageFlags(ctx.app, ctx.user, params.op, params.flag, ids);
    return {
      processed_count: ids.length,
      updated_count: updated,
      first_processed_id: ids.length ? ids[0] : null,
      last_processed_id: ids.length ? ids[ids.length - 1] : null,
      found_oldest: range.foundOldest,
      found_newest: range.foundNewest,
    };
  },
});

export const markAllAsRead = endpoint({
  method: 'POST',
  path: '/mark_all_as_read',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    await doMarkAllAsRead(ctx.app, ctx.user);
    return { complete: true };
  },
});

export const markStreamAsRead = endpoint({
  method: 'POST',
  path: '/mark_stream_as_read',
  auth: 'user',
  params: { stream_id: p.id() },
  handler: async (ctx, { stream_id }) => {
    const ch = await accessChannelById(ctx.app.db, await loadViewer(ctx.app.db, ctx.userRow), stream_id);
    await doMarkChannelAsRead(ctx.app, ctx.user, ch.recipient_id!);
    return {};
  },
});

export const markTopicAsRead = endpoint({
  method: 'POST',
  path: '/mark_topic_as_read',
  auth: 'user',
  params: { stream_id: p.id(), topic_name: p.str() },
  handler: async (ctx, { stream_id, topic_name }) => {
    const ch = await accessChannelById(ctx.app.db, await loadViewer(ctx.app.db, ctx.userRow), stream_id);
    if (topic_name) {
      const exists = await ctx.app.db
        .selectFrom('user_messages as um')
        .innerJoin('messages as m', 'm.id', 'um.message_id')
        .select('um.message_id')
        .where('um.user_id', '=', ctx.user.id)
        .where('m.recipient_id', '=', ch.recipient_id!)
        .where('m.topic_key', '=', topicKey(topic_name))
        .limit(1)
        .executeTakeFirst();
      if (!exists) throw badRequest(`No such topic '${topic_name}'`);
    }
    // Zulip: an empty topic_name marks the whole channel.
    await doMarkChannelAsRead(ctx.app, ctx.user, ch.recipient_id!, topic_name ? topicKey(topic_name) : undefined);
    return {};
  },
});

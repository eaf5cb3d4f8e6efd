import { userAccessOf } from '../../domain/access/user-access.js';
import { z } from 'zod';
import { realmOf } from '../../domain/realm-row-cache.js';
import { accessMessage } from '../../domain/access/messages.js';
import { messageViewFor } from '../../domain/actions/message-events.js';
import { checkAndSendMessage, defaultReadBySender } from '../../domain/actions/message-send.js';
import { badRequest, JsonableError } from '../../domain/errors.js';
import { fetchMessages, fetchMessagesByIds, matchesNarrow } from '../../domain/message-fetch.js';
import { renderMessageContent } from '../../domain/message-render.js';
import { MAX_MESSAGES_PER_FETCH, parseAnchor, parseNarrow } from '../../domain/rules/message-narrow.js';
import { MAX_MESSAGE_LENGTH } from '../../domain/rules/markdown/index.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { presentMessage } from '../../presenters/message.js';
import { loadMessageRelations } from '../../store/message-relations.js';
import { linkifiersForRealm } from '../../domain/access/linkifiers.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** POST /messages, GET /messages, GET /messages/{id}, POST /messages/render. */

const nonNegative = (): ReturnType<typeof p.json> => p.json(z.int().min(0));

export const sendMessage = endpoint({
  method: 'POST',
  path: '/messages',
  auth: 'user',
  params: {
    type: p.oneOf(['direct', 'private', 'stream', 'channel']),
    to: p.str().optional(),
    topic: p.str().alias('subject').optional(),
    content: p.str(),
    local_id: p.str().optional(),
    queue_id: p.str().optional(),
    read_by_sender: p.bool().optional(),
  },
  handler: async (ctx, params) => {
    const result = await checkAndSendMessage(ctx.app, ctx.userRow, {
      type: params.type === 'stream' || params.type === 'channel' ? 'stream' : 'private',
      to: params.to,
      topic: params.topic,
      content: params.content,
      client: ctx.clientName,
      readBySender: params.read_by_sender ?? defaultReadBySender(ctx.clientName),
      localId: params.local_id,
      queueId: params.queue_id,
    });
    return result.automaticNewVisibilityPolicy === undefined
      ? { id: result.id }
      : { id: result.id, automatic_new_visibility_policy: result.automaticNewVisibilityPolicy };
  },
});

export const getMessage = endpoint({
  method: 'GET',
  path: '/messages/:message_id',
  auth: 'user',
  params: {
    message_id: p.pathId(),
    apply_markdown: p.bool().default(true),
    allow_empty_topic_name: p.bool().default(false),
  },
  handler: async (ctx, { message_id, apply_markdown, allow_empty_topic_name }) => {
    const { message, umFlags } = await accessMessage(ctx.app.db, ctx.user, message_id, { forModify: false });
    const realm = await realmOf(ctx.app, ctx.user.realmId);
    const view = messageViewFor(
      ctx.app,
      realm,
      realmSettings(realm.settings),
      { applyMarkdown: apply_markdown, clientGravatar: true, allowEmptyTopicName: allow_empty_topic_name },
      await linkifiersForRealm(ctx.app.db, realm.id),
    );
    const rel = await loadMessageRelations(ctx.app.db, [message]);
    const access = await userAccessOf(ctx.app, ctx.user);
    return { raw_content: message.content, message: presentMessage(message, rel, { ...view, access }, umFlags) };
  },
});

export const getMessages = endpoint({
  method: 'GET',
  path: '/messages',
  auth: 'user',
  params: {
    anchor: p.str().optional(),
    include_anchor: p.bool().default(true),
    num_before: nonNegative().default(0),
    num_after: nonNegative().default(0),
    narrow: p.json(z.unknown()).default(null),
    use_first_unread_anchor: p.bool().default(false),
    client_gravatar: p.bool().default(true),
    apply_markdown: p.bool().default(true),
    allow_empty_topic_name: p.bool().default(false),
    // zulip-js joins lists with commas in query strings; intList reads both forms.
    message_ids: p.idList().optional(),
  },
  handler: async (ctx, params) => {
    const numBefore = params.num_before as number;
    const numAfter = params.num_after as number;
    const opts = { applyMarkdown: params.apply_markdown, clientGravatar: params.client_gravatar, allowEmptyTopicName: params.allow_empty_topic_name };
    if (params.message_ids !== undefined) {
      if (numBefore || numAfter || params.anchor !== undefined || params.use_first_unread_anchor) {
        const names = ['num_before', 'num_after', 'anchor', 'message_ids', 'include_anchor', 'use_first_unread_anchor'];
        throw new JsonableError(`Unsupported parameter combination: ${names.join(', ')}`, { data: { parameters: names } });
      }
      const narrow = parseNarrow(params.narrow);
      if (params.message_ids.length > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
      return fetchMessagesByIds(ctx.app, ctx.user, params.message_ids, { narrow, ...opts });
    }
    const anchor = parseAnchor(params.anchor, params.use_first_unread_anchor);
    const narrow = parseNarrow(params.narrow);
    if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
    if (numBefore > 0 && numAfter > 0 && !params.include_anchor) throw badRequest('The anchor can only be excluded at an end of the range');
    return fetchMessages(ctx.app, ctx.user, { anchor, numBefore, numAfter, includeAnchor: params.include_anchor, narrow, ...opts });
  },
});

/** GET /messages/matches_narrow (Zulip's messages_in_narrow_backend); see domain/message-fetch.ts. */
export const getMatchesNarrow = endpoint({
  method: 'GET',
  path: '/messages/matches_narrow',
  auth: 'user',
  params: {
    msg_ids: p.idList(),
    narrow: p.json(z.unknown()),
  },
  handler: async (ctx, params) => ({ messages: await matchesNarrow(ctx.app, ctx.user, params.msg_ids, parseNarrow(params.narrow)) }),
});

export const renderMessage = endpoint({
  method: 'POST',
  path: '/messages/render',
  auth: 'user',
  params: { content: p.str(z.string().max(MAX_MESSAGE_LENGTH)) },
  handler: async (ctx, { content }) => {
    const realm = await realmOf(ctx.app, ctx.user.realmId);
    const out = await renderMessageContent(ctx.app, ctx.app.db, realm.id, realmSettings(realm.settings), ctx.userRow, content);
    return { rendered: out.html };
  },
});

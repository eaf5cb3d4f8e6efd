import { checkAddReaction, checkRemoveReaction } from '../../domain/actions/reactions.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** POST and DELETE /messages/{message_id}/reactions. */

export const addReaction = endpoint({
  method: 'POST',
  path: '/messages/:message_id/reactions',
  auth: 'user',
  params: {
    message_id: p.pathId(),
    emoji_name: p.str(),
    emoji_code: p.str().optional(),
    reaction_type: p.str().optional(),
  },
  handler: async (ctx, params) => {
    await checkAddReaction(ctx.app, ctx.user, ctx.userRow, params.message_id, {
      emojiName: params.emoji_name,
      emojiCode: params.emoji_code,
      reactionType: params.reaction_type,
    });
    return {};
  },
});

export const removeReaction = endpoint({
  method: 'DELETE',
  path: '/messages/:message_id/reactions',
  auth: 'user',
  params: {
    message_id: p.pathId(),
    emoji_name: p.str().optional(),
    emoji_code: p.str().optional(),
    reaction_type: p.str().default('unicode_emoji'),
  },
  handler: async (ctx, params) => {
    await checkRemoveReaction(ctx.app, ctx.user, ctx.userRow, params.message_id, {
      emojiName: params.emoji_name,
      emojiCode: params.emoji_code,
      reactionType: params.reaction_type,
    });
    return {};
  },
});

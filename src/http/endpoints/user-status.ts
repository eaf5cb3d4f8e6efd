import { z } from 'zod';
import { transact } from '../../domain/context.js';
import { accessUserById } from '../../domain/access/users.js';
import { checkRealmEmojiReaction, realmEmojiDataForName } from '../../domain/access/realm-emoji.js';
import { doUpdateUserStatus, type StatusChange } from '../../domain/actions/user-status.js';
import { badRequest, notForBots } from '../../domain/errors.js';
import { emojiCodeForName, isValidEmojiCode } from '../../domain/rules/emoji.js';
import { userSettings } from '../../domain/rules/user-settings.js';
import { presentUserStatus } from '../../presenters/user-status.js';
import { statusOf } from '../../store/user-status.js';
import type { UserRow } from '../../store/users.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';

const requireHuman = ({ user }: AuthedCtx): void => {
  if (user.isBot) throw notForBots();
};

const statusParams = {
  status_text: p.str(z.string().trim().max(60)).optional(),
  emoji_name: p.str().optional(),
  emoji_code: p.str().optional(),
  // Zulip's parameter name (emoji_type internally).
  reaction_type: p.str().optional(),
};

/**
 * check_update_user_status: something must change; an emoji name resolves
 * its code and type unless given (the realm's custom emoji first, then
 * "zulip", then Unicode, as Zulip's get_emoji_data); "" clears the emoji;
 * the emoji must exist.
 */
async function checkStatusChange(
  ctx: AuthedCtx,
  away: boolean | undefined,
  params: { status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string },
): Promise<StatusChange> {
  const { status_text: statusText, emoji_name: emojiName } = params;
  let { emoji_code: emojiCode, reaction_type: reactionType } = params;
  if (away === undefined && statusText === undefined && emojiName === undefined) throw badRequest('Client did not pass any new values.');
  if (emojiName === '') {
    emojiCode = '';
    reactionType = 'unicode_emoji';
  } else if (emojiName !== undefined) {
    if (emojiCode === undefined || reactionType === undefined) {
      // "zulip" is Zulip's one extra emoji.
      const found =
        (await realmEmojiDataForName(ctx.app.db, ctx.user.realmId, emojiName)) ??
        (emojiName === 'zulip' ? { code: 'zulip', type: 'zulip_extra_emoji' } : emojiCodeForName(emojiName) !== undefined ? { code: emojiCodeForName(emojiName)!, type: 'unicode_emoji' } : undefined);
      if (!found) throw badRequest(`Emoji '${emojiName}' does not exist`);
      emojiCode ??= found.code;
      reactionType ??= found.type;
    }
    await checkEmoji(ctx, emojiName, emojiCode, reactionType);
  } else if (reactionType || emojiCode) {
    throw badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
  }
  const change: { -readonly [K in keyof StatusChange]: StatusChange[K] } = {};
  if (away !== undefined) change.away = away;
  if (statusText !== undefined) change.statusText = statusText;
  if (emojiName !== undefined) Object.assign(change, { emojiName, emojiCode, reactionType });
  return change;
}

/** Zulip's check_emoji_request. */
async function checkEmoji(ctx: AuthedCtx, name: string, code: string, type: string): Promise<void> {
  if (type === 'unicode_emoji') {
    if (!isValidEmojiCode(code)) throw badRequest('Invalid emoji code.');
    if (emojiCodeForName(name) !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'zulip_extra_emoji') {
    if (code !== 'zulip') throw badRequest('Invalid emoji code.');
    if (name !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'realm_emoji') {
    await checkRealmEmojiReaction(ctx.app.db, ctx.user.realmId, name, code);
  } else {
    throw badRequest('Invalid emoji type.');
  }
}

export const updateOwnStatus = endpoint({
  method: 'POST',
  path: '/users/me/status',
  auth: 'user',
  guard: requireHuman,
  params: { away: p.bool().optional(), ...statusParams },
  handler: async (ctx, { away, ...params }) => {
    const change = await checkStatusChange(ctx, away, params);
    await transact(ctx.app, (tx) => doUpdateUserStatus(ctx.app, tx, ctx.userRow, change, ctx.clientName));
    return {};
  },
});

/** An administrator changes another user's status text and emoji (not "away"). */
export const updateUserStatus = endpoint({
  method: 'POST',
  path: '/users/:user_id/status',
  auth: 'user',
  guard: requireHuman,
  params: { user_id: p.pathId(), ...statusParams },
  handler: async (ctx, { user_id, ...params }) => {
    const target = await accessUserById(ctx.app, ctx.user, user_id, { forAdmin: true });
    const change = await checkStatusChange(ctx, undefined, params);
    await transact(ctx.app, (tx) => doUpdateUserStatus(ctx.app, tx, target, change, ctx.clientName));
    return {};
  },
});

export async function userStatusOf(ctx: AuthedCtx, user: UserRow): Promise<Record<string, unknown>> {
  const row = await statusOf(ctx.app.db, user.id);
  return row ? presentUserStatus(row, userSettings(user.settings).presence_enabled !== false) : {};
}

export const getUserStatus = endpoint({
  method: 'GET',
  path: '/users/:user_id/status',
  auth: 'user',
  params: { user_id: p.pathId() },
  handler: async (ctx, { user_id }) => {
    const target = await accessUserById(ctx.app, ctx.user, user_id);
    return { status: await userStatusOf(ctx, target) };
  },
});

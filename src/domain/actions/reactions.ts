import type { AppCtx, Caller, Tx, TxDb } from '../context.js';
import { checkRealmEmojiReaction, realmEmojiDataForName } from '../access/realm-emoji.js';
import { transact } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { accessMessage, eventRecipientIds } from '../access/messages.js';
import { emojiCodeForName, isValidEmojiCode } from '../rules/emoji.js';
import { HISTORICAL_FLAGS } from '../rules/message-flags.js';
import { apiEmail } from '../../presenters/user.js';
import { fakeEmailDomain } from '../../config.js';
import { insertUserMessagesIgnoringExisting, type MessageRow, type ReactionRow } from '../../store/messages.js';
import { anyReactionWith, deleteReaction, insertReaction, reactionOf } from '../../store/reactions.js';
import type { ChannelRow } from '../../store/channels.js';
import type { UserRow } from '../../store/users.js';

/**
 * Emoji reactions (Zulip's zerver/actions/reactions.py): Unicode emoji,
 * the realm's custom emoji (by id) and the "zulip" extra emoji.
 */
export const ZULIP_EXTRA_EMOJI = 'zulip';

export const reactionExists = (): JsonableError => new JsonableError('Reaction already exists.', { code: 'REACTION_ALREADY_EXISTS' });
export const reactionDoesNotExist = (): JsonableError => new JsonableError("Reaction doesn't exist.", { code: 'REACTION_DOES_NOT_EXIST' });

/** Zulip's get_emoji_data: a name to (code, type); realm emoji first, then "zulip", then Unicode. */
export async function emojiDataForName(db: TxDb, realmId: number, name: string): Promise<{ code: string; type: string }> {
  const custom = await realmEmojiDataForName(db, realmId, name);
  if (custom) return custom;
  if (name === ZULIP_EXTRA_EMOJI) return { code: ZULIP_EXTRA_EMOJI, type: 'zulip_extra_emoji' };
  const code = emojiCodeForName(name);
  if (code !== undefined) return { code, type: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/** Zulip's check_emoji_request: the (name, code, type) triple must agree. */
export async function checkEmoji(db: TxDb, realmId: number, name: string, code: string, type: string): Promise<void> {
  if (type === 'unicode_emoji') {
    if (!isValidEmojiCode(code)) throw badRequest('Invalid emoji code.');
    if (emojiCodeForName(name) !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'zulip_extra_emoji') {
    if (code !== ZULIP_EXTRA_EMOJI) throw badRequest('Invalid emoji code.');
    if (name !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'realm_emoji') {
    await checkRealmEmojiReaction(db, realmId, name, code);
  } else {
    throw badRequest('Invalid emoji type.');
  }
}

async function emitReaction(app: AppCtx, tx: Tx, op: 'add' | 'remove', user: UserRow, message: MessageRow, channel: ChannelRow | null, r: Pick<ReactionRow, 'emoji_name' | 'emoji_code' | 'reaction_type'>): Promise<void> {
  const event = {
    type: 'reaction',
    op,
    user_id: user.id,
    user: { user_id: user.id, email: apiEmail(user, fakeEmailDomain(app.config)), full_name: user.full_name },
    message_id: message.id,
    emoji_name: r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
  };
  tx.emit(message.realm_id, event, await eventRecipientIds(tx.db, [message.id], channel));
}

export interface ReactionInput {
  readonly emojiName: string;
  readonly emojiCode?: string;
  readonly reactionType?: string;
}

/** POST /messages/{id}/reactions (Zulip's check_add_reaction). */
export async function checkAddReaction(app: AppCtx, caller: Caller, user: UserRow, messageId: number, input: ReactionInput): Promise<void> {
  await transact(app, async (tx) => {
    const { message, umFlags, channel } = await accessMessage(tx.db, caller, messageId, { forModify: true });
    let name = input.emojiName;
    let code = input.emojiCode;
    let type = input.reactionType;
    if (code === undefined || type === undefined) ({ code, type } = await emojiDataForName(tx.db, caller.realmId, name));
    if (await reactionOf(tx.db, message.id, caller.id, code, type)) throw reactionExists();
    const vote = await anyReactionWith(tx.db, message.id, code, type);
    if (vote) name = vote.emoji_name;
    else await checkEmoji(tx.db, caller.realmId, name, code, type);
    if (umFlags === null) {
      await insertUserMessagesIgnoringExisting(tx.db, [{ user_id: caller.id, message_id: message.id, flags: HISTORICAL_FLAGS }]);
    }
    await insertReaction(tx.db, { realm_id: message.realm_id, message_id: message.id, user_id: caller.id, emoji_name: name, emoji_code: code, reaction_type: type });
    await emitReaction(app, tx, 'add', user, message, channel, { emoji_name: name, emoji_code: code, reaction_type: type });
  });
}

/** DELETE /messages/{id}/reactions (Zulip's remove_reaction). */
export async function checkRemoveReaction(
  app: AppCtx,
  caller: Caller,
  user: UserRow,
  messageId: number,
  input: { emojiName?: string; emojiCode?: string; reactionType: string },
): Promise<void> {
  await transact(app, async (tx) => {
    const { message, channel } = await accessMessage(tx.db, caller, messageId, { forModify: true });
    if (input.emojiName === undefined && input.emojiCode === undefined) {
      throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
    }
    const code = input.emojiCode ?? (await emojiDataForName(tx.db, caller.realmId, input.emojiName!)).code;
    const existing = await reactionOf(tx.db, message.id, caller.id, code, input.reactionType);
    if (!existing) throw reactionDoesNotExist();
    await deleteReaction(tx.db, existing.id);
    await emitReaction(app, tx, 'remove', user, message, channel, existing);
  });
}

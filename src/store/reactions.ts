import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { ReactionRow } from './messages.js';

type AnyDb = Db | TxDb;

/** Queries for reactions. No rules here. */

export function reactionOf(db: AnyDb, messageId: number, userId: number, emojiCode: string, reactionType: string): Promise<ReactionRow | undefined> {
  return db
    .selectFrom('reactions')
    .selectAll()
    .where('message_id', '=', messageId)
    .where('user_id', '=', userId)
    .where('reaction_type', '=', reactionType)
    .where('emoji_code', '=', emojiCode)
    .executeTakeFirst();
}

/** Someone's reaction with this emoji (a new one with the same code is a vote on it). */
export function anyReactionWith(db: AnyDb, messageId: number, emojiCode: string, reactionType: string): Promise<ReactionRow | undefined> {
  return db
    .selectFrom('reactions')
    .selectAll()
    .where('message_id', '=', messageId)
    .where('reaction_type', '=', reactionType)
    .where('emoji_code', '=', emojiCode)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export async function insertReaction(
  db: AnyDb,
  row: { realm_id: number; message_id: number; user_id: number; emoji_name: string; emoji_code: string; reaction_type: string },
): Promise<void> {
  await db.insertInto('reactions').values(row).execute();
}

export async function deleteReaction(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('reactions').where('id', '=', id).execute();
}

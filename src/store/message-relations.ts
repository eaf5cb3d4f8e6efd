import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import { reactionsOf, type MessageRow, type ReactionRow } from './messages.js';
import { preparedIn } from './prepared.js';

type AnyDb = Db | TxDb;

/** What presenting a message needs besides its row: people, channel names and reactions. */
export interface MessagePerson {
  readonly id: number;
  readonly realm_id: number;
  readonly full_name: string;
  readonly delivery_email: string;
  readonly settings: string;
  readonly is_bot: number;
  readonly avatar_source: string;
  readonly avatar_version: number;
}

export interface MessageRelations {
  readonly users: ReadonlyMap<number, MessagePerson>;
  readonly channels: ReadonlyMap<number, string>;
  readonly reactions: ReadonlyMap<number, ReactionRow[]>;
}

// A page's people and channel names: compiled once per number of ids (store/prepared.ts preparedIn).
const peopleByIds = preparedIn((db, ids) =>
  db.selectFrom('users').select(['id', 'realm_id', 'full_name', 'delivery_email', 'settings', 'is_bot', 'avatar_source', 'avatar_version']).where('id', 'in', ids),
);
const channelNamesByIds = preparedIn((db, ids) => db.selectFrom('channels').select(['id', 'name']).where('id', 'in', ids));

export const dmParticipants = (key: string): number[] => key.split(',').map(Number);

/**
 * At most three queries whatever the number of messages: reactions (none when
 * the rows say that no message has any), people, and channel names (none when
 * every channel's name is among `knownChannels`, names the caller read in
 * this request, e.g. GET /messages' channel narrow).
 */
export async function loadMessageRelations(
  db: AnyDb,
  rows: readonly (Pick<MessageRow, 'id' | 'sender_id' | 'dm_key' | 'stream_id'> & { readonly has_reactions?: number | boolean })[],
  knownChannels?: ReadonlyMap<number, string>,
): Promise<MessageRelations> {
  // Rows read with has_reactions (store/message-search.ts) say which messages have any: a page
  // without reactions reads none. Without it, every message may have some.
  const ids = rows.filter((r) => r.has_reactions === undefined || r.has_reactions).map((r) => r.id);
  const reactionRows = await reactionsOf(db, ids);
  const userIds = new Set<number>();
  const channelIds = new Set<number>();
  for (const r of rows) {
    userIds.add(r.sender_id);
    if (r.dm_key) for (const id of dmParticipants(r.dm_key)) userIds.add(id);
    if (r.stream_id !== null && !knownChannels?.has(r.stream_id)) channelIds.add(r.stream_id);
  }
  for (const r of reactionRows) userIds.add(r.user_id);
  const [users, channels] = await Promise.all([
    userIds.size ? peopleByIds(db, [...userIds]) : Promise.resolve([]),
    channelIds.size ? channelNamesByIds(db, [...channelIds]) : Promise.resolve([]),
  ]);
  const reactions = new Map<number, ReactionRow[]>();
  for (const r of reactionRows) {
    let list = reactions.get(r.message_id);
    if (!list) reactions.set(r.message_id, (list = []));
    list.push(r);
  }
  return {
    users: new Map(users.map((u) => [u.id, u])),
    channels: new Map([...(knownChannels ?? []), ...channels.map((c) => [c.id, c.name] as const)]),
    reactions,
  };
}

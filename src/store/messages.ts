import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { preparedOnPostgres, type Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { MessageTable, ReactionTable } from './messages-schema.js';
import { isStorableId } from './channels.js';
import { dialectOf, textKeyEquals } from './migrations/helpers.js';
import { directRead, preparedIn } from './prepared.js';

type AnyDb = Db | TxDb;
export type MessageRow = Selectable<MessageTable>;
export type ReactionRow = Selectable<ReactionTable>;
/** A message with the reading user's flags (null: no user_messages row). */
export type MessageWithFlags = MessageRow & { um_flags: number | null };

/** Queries for messages, per-user message rows and direct-message recipients. No rules here. */

/** Rows per INSERT: well under SQLite's 32766 bound variables, so a send is one statement up to this many recipients. */
const INSERT_CHUNK = 5000;

/**
 * A message's per-user rows (a send's recipients): one statement whatever
 * their number, with a short constant SQL text. The rows go as one JSON
 * parameter (SQLite, json_each) or two arrays (PostgreSQL, unnest) rather
 * than a VALUES list of 3 placeholders a row: building and compiling that
 * list in Kysely cost ~100 us a send for 50 recipients (more than SQLite's
 * own insert work for the parameters), and on PostgreSQL every recipient
 * count was another statement text to parse and plan.
 */
export async function insertUserMessages(db: AnyDb, messageId: number, rows: readonly { user_id: number; flags: number }[]): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(db as never) === 'postgres') {
    const users = rows.map((r) => r.user_id);
    const flags = rows.map((r) => r.flags);
    await sql`INSERT INTO user_messages (user_id, message_id, flags) SELECT u, ${messageId}::integer, f FROM unnest(${users}::integer[], ${flags}::integer[]) AS t(u, f)`.execute(db);
    return;
  }
  // Each row as one integer, user_id * 2^16 + flags (ids < 2^31, flags < 2^12: exact, under
  // 2^53). Reading three fields out of a JSON array per row (`value ->> n` parses the row's
  // text each time) cost a quarter of the instructions of a send's two inserts and its share
  // of COMMIT (callgrind, docs/performance.md "Sends: statements and the read connection").
  const packed = JSON.stringify(
    rows.map((r) => {
      if (!(r.flags >= 0 && r.flags < PACK && r.user_id > 0 && r.user_id < 2 ** 31)) throw new Error(`insertUserMessages: cannot pack user ${r.user_id}, flags ${r.flags}`);
      return r.user_id * PACK + r.flags;
    }),
  );
  await sql`INSERT INTO user_messages (user_id, message_id, flags) SELECT value >> 16, ${messageId}, value & 65535 FROM json_each(${packed})`.execute(db);
}
const PACK = 2 ** 16;

/**
 * A message and its per-user rows. On PostgreSQL one statement (a
 * data-modifying CTE: one round trip instead of two inside the send's
 * transaction, which holds a pooled connection meanwhile); on SQLite the
 * message insert and insertUserMessages above (statements there cost no
 * round trip).
 *
 * The message's INSERT is written once per dialect and column list (every
 * send passes the same columns) and run as a raw statement with one parameter
 * per column: Kysely's insert builder made and compiled a node per column
 * and value on every send. It still goes through Kysely's executor (the
 * statement is logged and counted, the write watches see its text).
 */
export async function insertMessageWithRows(db: AnyDb, row: Insertable<MessageTable>, rows: readonly { user_id: number; flags: number }[]): Promise<number> {
  const postgres = dialectOf(db as never) === 'postgres';
  const withRows = postgres && rows.length > 0;
  // Columns left undefined are left out, as Kysely's builder did.
  const shape = messageInsertShape(Object.keys(row).filter((c) => (row as Record<string, unknown>)[c] !== undefined), postgres, withRows);
  const values: unknown[] = shape.cols.map((c) => (row as Record<string, unknown>)[c]);
  if (withRows) values.push(rows.map((r) => r.user_id), rows.map((r) => r.flags));
  const statement = sql<{ id: number }>(shape.fragments, ...values);
  // PostgreSQL: a named statement (store/db.ts), parsed and planned once per connection.
  if (postgres && !shape.named) {
    preparedOnPostgres(statement.compile(db).sql);
    shape.named = true;
  }
  const r = await statement.execute(db);
  const id = r.rows[0]!.id;
  if (!withRows) await insertUserMessages(db, id, rows);
  return id;
}

interface InsertShape {
  readonly cols: readonly string[];
  readonly fragments: TemplateStringsArray;
  named?: boolean;
}
const insertShapes = new Map<string, InsertShape>();

/** The fragments of the message INSERT (between its parameters) for these columns, built once per dialect and column list. */
function messageInsertShape(cols: readonly string[], postgres: boolean, withRows: boolean): InsertShape {
  const key = `${postgres ? 'p' : 's'}${withRows ? '+' : ''}:${cols.join(',')}`;
  let shape = insertShapes.get(key);
  if (shape) return shape;
  for (const c of cols) if (!/^[a-z_]+$/.test(c)) throw new Error(`insertMessageWithRows: unexpected column ${c}`);
  const head = `${withRows ? 'WITH m AS (\n      ' : ''}INSERT INTO messages (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (`;
  const tail = withRows
    ? `) RETURNING id\n    ), um AS (\n      INSERT INTO user_messages (user_id, message_id, flags) SELECT t.u, m.id, t.f FROM m, unnest(`
    : ') RETURNING id';
  // One fragment before each parameter and one after the last: head, ", " between columns, tail.
  const parts = [head, ...cols.slice(1).map(() => ', '), tail];
  if (withRows) parts.push('::integer[], ', '::integer[]) AS t(u, f)\n    )\n    SELECT id FROM m');
  const fragments = Object.assign([...parts], { raw: [...parts] }) as unknown as TemplateStringsArray;
  shape = { cols: [...cols], fragments };
  insertShapes.set(key, shape);
  return shape;
}

/** Rows for users who did not have one yet (a move into a channel with protected history, historical rows). */
export async function insertUserMessagesIgnoringExisting(db: AnyDb, rows: readonly { user_id: number; message_id: number; flags: number }[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('user_messages')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .onConflict((oc) => oc.columns(['user_id', 'message_id']).doNothing())
      .execute();
  }
}

export function messageById(db: AnyDb, id: number): Promise<MessageRow | undefined> {
  if (!isStorableId(id)) return Promise.resolve(undefined);
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The message and the user's flags for it, in one query. */
export function messageWithFlags(db: AnyDb, id: number, userId: number): Promise<MessageWithFlags | undefined> {
  if (!isStorableId(id)) return Promise.resolve(undefined);
  return db
    .selectFrom('messages as m')
    .leftJoin('user_messages as um', (j) => j.onRef('um.message_id', '=', 'm.id').on('um.user_id', '=', userId))
    .selectAll('m')
    .select('um.flags as um_flags')
    .where('m.id', '=', id)
    .executeTakeFirst();
}

export function messagesByIds(db: AnyDb, ids: readonly number[]): Promise<MessageRow[]> {
  const ok = ids.filter(isStorableId);
  if (ok.length === 0) return Promise.resolve([]);
  return db.selectFrom('messages').selectAll().where('id', 'in', ok).orderBy('id').execute();
}

/** Messages with the user's flags, by id (ascending). */
export function messagesWithFlagsByIds(db: AnyDb, ids: readonly number[], userId: number): Promise<MessageWithFlags[]> {
  ids = ids.filter(isStorableId);
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('messages as m')
    .leftJoin('user_messages as um', (j) => j.onRef('um.message_id', '=', 'm.id').on('um.user_id', '=', userId))
    .selectAll('m')
    .select('um.flags as um_flags')
    .where('m.id', 'in', [...ids])
    .orderBy('m.id')
    .execute();
}

export async function updateMessage(db: AnyDb, id: number, patch: Updateable<MessageTable>): Promise<void> {
  await db.updateTable('messages').set(patch).where('id', '=', id).execute();
}

/** Every user with a row for the message, with flags. */
export function userMessageRows(db: AnyDb, messageIds: readonly number[]): Promise<{ user_id: number; message_id: number; flags: number }[]> {
  if (messageIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('user_messages').select(['user_id', 'message_id', 'flags']).where('message_id', 'in', [...messageIds]).execute();
}

/** The user's rows among these messages. */
export function userMessagesOf(db: AnyDb, userId: number, messageIds: readonly number[]): Promise<{ message_id: number; flags: number }[]> {
  messageIds = messageIds.filter(isStorableId);
  if (messageIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('user_messages').select(['message_id', 'flags']).where('user_id', '=', userId).where('message_id', 'in', [...messageIds]).execute();
}

export async function setUserMessageFlags(db: AnyDb, userId: number, messageIds: readonly number[], bit: number, on: boolean): Promise<void> {
  if (messageIds.length === 0) return;
  const expr = on ? sql<number>`flags | ${bit}` : sql<number>`flags & ${~bit}`;
  await db.updateTable('user_messages').set({ flags: expr }).where('user_id', '=', userId).where('message_id', 'in', [...messageIds]).execute();
}

/** Sets per-user flags (mention flags after an edit), one statement per distinct value. */
export async function setFlagsExactly(db: AnyDb, messageId: number, byValue: ReadonlyMap<number, readonly number[]>): Promise<void> {
  for (const [flags, userIds] of byValue) {
    if (userIds.length === 0) continue;
    await db.updateTable('user_messages').set({ flags }).where('message_id', '=', messageId).where('user_id', 'in', [...userIds]).execute();
  }
}

export async function deleteUserMessages(db: AnyDb, userIds: readonly number[], messageIds: readonly number[]): Promise<void> {
  if (userIds.length === 0 || messageIds.length === 0) return;
  await db.deleteFrom('user_messages').where('user_id', 'in', [...userIds]).where('message_id', 'in', [...messageIds]).execute();
}

export async function deleteMessages(db: AnyDb, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('reactions').where('message_id', 'in', [...ids]).execute();
  await db.deleteFrom('user_messages').where('message_id', 'in', [...ids]).execute();
  await db.deleteFrom('messages').where('id', 'in', [...ids]).execute();
}

/** The newest message the user received, or -1. */
export async function maxMessageIdForUser(db: AnyDb, userId: number): Promise<number> {
  const r = await db
    .selectFrom('user_messages')
    .select('message_id')
    .where('user_id', '=', userId)
    .orderBy('message_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r ? r.message_id : -1;
}

/** Get-or-create of a recipient row (type 1 personal: type_id user id; type 3 group: type_id group id). */
export async function recipientId(db: AnyDb, realmId: number, type: number, typeId: number): Promise<number> {
  const found = await db.selectFrom('recipients').select('id').where('type', '=', type).where('type_id', '=', typeId).executeTakeFirst();
  if (found) return found.id;
  await db
    .insertInto('recipients')
    .values({ realm_id: realmId, type, type_id: typeId })
    .onConflict((oc) => oc.columns(['type', 'type_id']).doNothing())
    .execute();
  const r = await db.selectFrom('recipients').select('id').where('type', '=', type).where('type_id', '=', typeId).executeTakeFirstOrThrow();
  return r.id;
}

/** The direct-message group of exactly these users, created when missing; returns its recipient id. */
export async function groupRecipientId(db: AnyDb, realmId: number, key: string, size: number): Promise<number> {
  // On PostgreSQL the unique index is over md5(user_ids_key) (migration 1700): the
  // lookups compare through textKeyEquals, and the insert names no conflict target.
  const dialect = dialectOf(db as never);
  const found = await db
    .selectFrom('direct_message_groups as g')
    .innerJoin('recipients as r', (j) => j.onRef('r.type_id', '=', 'g.id').on('r.type', '=', 3))
    .select('r.id')
    .where('g.realm_id', '=', realmId)
    .where(textKeyEquals(dialect, 'g.user_ids_key', key))
    .executeTakeFirst();
  if (found) return found.id;
  await db
    .insertInto('direct_message_groups')
    .values({ realm_id: realmId, user_ids_key: key, group_size: size })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const g = await db.selectFrom('direct_message_groups').select('id').where('realm_id', '=', realmId).where(textKeyEquals(dialect, 'user_ids_key', key)).executeTakeFirstOrThrow();
  return recipientId(db, realmId, 3, g.id);
}

/** Whether a conversation (dm_key) already has messages. */
export async function conversationExists(db: AnyDb, dmKey: string): Promise<boolean> {
  // PostgreSQL's messages_dm is over md5(dm_key) (migration 1700).
  const r = await db.selectFrom('messages').select('id').where(textKeyEquals(dialectOf(db as never), 'dm_key', dmKey)).limit(1).executeTakeFirst();
  return r !== undefined;
}

/** Messages of a topic (optionally from an id on), ascending; for moves. */
export function topicMessages(
  db: AnyDb,
  recipientId: number,
  topicKey: string,
  opts: { fromId?: number } = {},
): Promise<{ id: number; date_sent: number; sender_id: number }[]> {
  let q = db.selectFrom('messages').select(['id', 'date_sent', 'sender_id']).where('recipient_id', '=', recipientId).where('topic_key', '=', topicKey);
  if (opts.fromId !== undefined) q = q.where('id', '>=', opts.fromId);
  return q.orderBy('id').execute();
}

/** The oldest message of a topic, or undefined when the topic has none (excluding some ids). */
export async function firstTopicMessageId(db: AnyDb, recipientId: number, topicKey: string, excluding: readonly number[] = []): Promise<number | undefined> {
  if (excluding.length === 0) {
    // Every channel send asks (is the topic new?): straight on the connection on SQLite (store/prepared.ts directRead).
    const rows = await directRead<{ id: number }>(db, 'SELECT id FROM messages WHERE recipient_id = ? AND topic_key = ? ORDER BY id LIMIT 1', [recipientId, topicKey], () =>
      db.selectFrom('messages').select('id').where('recipient_id', '=', recipientId).where('topic_key', '=', topicKey).orderBy('id').limit(1).execute(),
    );
    return rows[0]?.id;
  }
  let q = db.selectFrom('messages').select('id').where('recipient_id', '=', recipientId).where('topic_key', '=', topicKey);
  if (excluding.length) q = q.where('id', 'not in', [...excluding]);
  const r = await q.orderBy('id').limit(1).executeTakeFirst();
  return r?.id;
}

/** Users who sent or reacted to messages in a topic (Zulip's topic participants). */
export async function topicParticipantIds(db: AnyDb, recipientId: number, topicKey: string): Promise<Set<number>> {
  const senders = await db
    .selectFrom('messages')
    .select('sender_id as user_id')
    .where('recipient_id', '=', recipientId)
    .where('topic_key', '=', topicKey)
    .union(
      db
        .selectFrom('reactions as r')
        .innerJoin('messages as m', 'm.id', 'r.message_id')
        .select('r.user_id as user_id')
        .where('m.recipient_id', '=', recipientId)
        .where('m.topic_key', '=', topicKey),
    )
    .execute();
  return new Set(senders.map((r) => r.user_id));
}

/** The oldest message of a recipient (a channel's first_message_id), or null. */
export async function firstMessageIdOf(db: AnyDb, recipientId: number): Promise<number | null> {
  const r = await db.selectFrom('messages').select('id').where('recipient_id', '=', recipientId).orderBy('id').limit(1).executeTakeFirst();
  return r ? r.id : null;
}

const reactionsByMessageIds = preparedIn((db, ids) => db.selectFrom('reactions').selectAll().where('message_id', 'in', ids).orderBy('id'));

export function reactionsOf(db: AnyDb, messageIds: readonly number[]): Promise<ReactionRow[]> {
  if (messageIds.length === 0) return Promise.resolve([]);
  // Read on the connection when it can, compiled once per number of ids (store/prepared.ts): a GET /messages page with reactions runs it.
  return reactionsByMessageIds(db, messageIds);
}

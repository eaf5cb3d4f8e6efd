import { sql, type RawBuilder } from 'kysely';
import { directReaders, type Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { MessageRow } from './messages.js';
import { FLAG_PRIVATE, FLAG_READ } from '../domain/rules/message-flags.js';
import { fts5Match, type SearchQuery } from '../domain/rules/search-text.js';
import { dialectOf, textKeyEquals, type Dialect } from './migrations/helpers.js';

type AnyDb = Db | TxDb;

/**
 * The message search query: a base (the user's rows, or, for a channel
 * whose history the user may read, the channel's messages) narrowed by
 * resolved conditions and walked by keyset on the message id. No OFFSET:
 * every page is an index seek on (user_id, message_id), (recipient_id, id),
 * (recipient_id, topic_key, id) or (dm_key, id).
 *
 * Security invariant (Zulip's NarrowBuilder): conditions only ever remove
 * rows. History mode is chosen by the caller only for a non-negated channel
 * condition on a channel whose history the user may read.
 */
export type Condition =
  | { readonly kind: 'recipient'; readonly id: number; readonly negated: boolean }
  | { readonly kind: 'recipients'; readonly ids: readonly number[]; readonly negated: boolean }
  | { readonly kind: 'topic'; readonly key: string; readonly negated: boolean }
  | { readonly kind: 'sender'; readonly id: number; readonly negated: boolean }
  | { readonly kind: 'dm'; readonly key: string; readonly negated: boolean }
  | { readonly kind: 'dm_including'; readonly userId: number; readonly groupsOnly: boolean; readonly negated: boolean }
  | { readonly kind: 'flag_set'; readonly mask: number; readonly negated: boolean }
  | { readonly kind: 'flag_clear'; readonly mask: number; readonly negated: boolean }
  | { readonly kind: 'id'; readonly id: number; readonly negated: boolean }
  /** One of these message ids (GET /messages/matches_narrow). */
  | { readonly kind: 'ids'; readonly ids: readonly number[] }
  | { readonly kind: 'resolved'; readonly negated: boolean }
  | { readonly kind: 'has'; readonly column: 'has_link' | 'has_image' | 'has_attachment'; readonly negated: boolean }
  | { readonly kind: 'has_reaction'; readonly negated: boolean }
  | { readonly kind: 'search'; readonly query: SearchQuery; readonly negated: boolean }
  | { readonly kind: 'muted_excluded'; readonly userId: number; readonly channels: boolean }
  | { readonly kind: 'nothing' };

export interface SearchSpec {
  readonly userId: number;
  readonly realmId: number;
  /** Read the channel's messages directly (flags from a left join) rather than the user's rows. */
  readonly includeHistory: boolean;
  readonly conditions: readonly Condition[];
}

/**
 * The columns a found message is presented from (presenters/message.ts,
 * message-relations, highlighting): selecting these rather than m.* saves
 * building the unused values of every row (a measurable share of GET /messages).
 */
const FOUND_COLUMNS = ['id', 'sender_id', 'recipient_id', 'stream_id', 'dm_key', 'topic', 'content', 'rendered_content', 'date_sent', 'sending_client', 'is_me_message', 'edit_history'] as const;
export type FoundMessage = Pick<MessageRow, (typeof FOUND_COLUMNS)[number]>;
/** has_reactions: whether the message has any reaction (0/1, false/true; absent: not known), so a page without reactions skips reading them. */
export type FoundRow = FoundMessage & { um_flags: number | null; has_reactions?: number | boolean };
/** Which message contents a page reads (searchRange). */
export type FoundContent = 'both' | 'rendered' | 'markdown';
/**
 * The select list of a page: the columns with NULL in place of the content it does
 * not show, named (`json`: false) or as the arguments of SQLite's json_array.
 */
const selectLists = new Map<string, RawBuilder<unknown>>();
function foundColumnList(content: FoundContent, json: boolean): RawBuilder<unknown> {
  const key = content + json;
  let list = selectLists.get(key);
  if (!list) {
    const skip = content === 'rendered' ? 'content' : content === 'markdown' ? 'rendered_content' : undefined;
    list = sql.raw(FOUND_COLUMNS.map((c) => (c !== skip ? `m.${c}` : json ? 'NULL' : `NULL AS ${c}`)).join(', '));
    selectLists.set(key, list);
  }
  return list;
}

// An index seek per row (reactions_unique leads with message_id).
const hasReactions = sql`EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)`;

/** A row read as an array (FOUND_COLUMNS in order, then um_flags and has_reactions) as the object Kysely would give (has_reactions 0/1). */
const foundRow = (r: unknown[]): FoundRow =>
  ({
    id: r[0],
    sender_id: r[1],
    recipient_id: r[2],
    stream_id: r[3],
    dm_key: r[4],
    topic: r[5],
    content: r[6],
    rendered_content: r[7],
    date_sent: r[8],
    sending_client: r[9],
    is_me_message: r[10],
    edit_history: r[11],
    um_flags: r[12],
    has_reactions: r[13],
  }) as FoundRow;
// foundRow reads by position: it must follow FOUND_COLUMNS.
if (FOUND_COLUMNS.join() !== Object.keys(foundRow(new Array(13))).slice(0, FOUND_COLUMNS.length).join()) throw new Error('foundRow does not follow FOUND_COLUMNS');

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => '\\' + c);

function condition(c: Condition, idCol: RawBuilder<unknown>, dialect: Dialect, driven?: Condition): RawBuilder<unknown> {
  const neg = (e: RawBuilder<unknown>, negated: boolean): RawBuilder<unknown> => (negated ? sql`NOT (${e})` : e);
  switch (c.kind) {
    case 'recipient':
      return neg(sql`m.recipient_id = ${c.id}`, c.negated);
    case 'recipients':
      return c.ids.length === 0 ? (c.negated ? sql`1 = 1` : sql`1 = 0`) : neg(sql`m.recipient_id IN (${sql.join([...c.ids])})`, c.negated);
    case 'topic':
      // A DM's topic_key is '' too; topic conditions apply to channel messages only.
      return neg(sql`(m.topic_key = ${c.key} AND m.stream_id IS NOT NULL)`, c.negated);
    case 'sender':
      return neg(sql`m.sender_id = ${c.id}`, c.negated);
    case 'dm':
      // Channel messages have no dm_key: the negated form must still keep them.
      // PostgreSQL's index of a conversation's messages is over md5(dm_key) (migration 1700).
      return c.negated ? sql`COALESCE(m.dm_key, '') <> ${c.key}` : textKeyEquals(dialect, 'm.dm_key', c.key);
    case 'dm_including': {
      const hit = sql`(',' || m.dm_key || ',') LIKE ${`%,${c.userId},%`}`;
      const group = c.groupsOnly ? sql` AND (length(m.dm_key) - length(replace(m.dm_key, ',', ''))) >= 2` : sql``;
      const e = sql`(m.dm_key IS NOT NULL AND ${hit}${group})`;
      return neg(e, c.negated);
    }
    case 'flag_set':
      return neg(sql`(um.flags & ${sql.lit(c.mask)}) <> 0`, c.negated);
    case 'flag_clear':
      return neg(sql`(um.flags & ${sql.lit(c.mask)}) = 0`, c.negated);
    case 'id':
      return neg(c.id > MAX_ID ? sql`1 = 0` : sql`${idCol} = ${c.id}`, c.negated);
    case 'ids': {
      const ok = c.ids.filter((id) => id >= 1 && id <= MAX_ID);
      return ok.length === 0 ? sql`1 = 0` : sql`${idCol} IN (${sql.join(ok)})`;
    }
    case 'resolved':
      return neg(sql`(m.stream_id IS NOT NULL AND m.topic LIKE ${'✔ %'})`, c.negated);
    case 'has':
      return neg(sql`m.${sql.ref(c.column)} = 1`, c.negated);
    case 'has_reaction':
      return neg(sql`EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)`, c.negated);
    case 'search': {
      // Zulip's _by_search_tsearch: every word matches (stemmed, through the
      // full-text index of migration 1000), and each quoted phrase is also a
      // case-insensitive substring of the content or the topic.
      const q = c.query;
      let words: RawBuilder<unknown>;
      if (c === driven) words = sql`1 = 1`; // the walk itself goes through the full-text index (searchRange)
      else if (q.words.length === 0) words = sql`1 = 0`;
      else if (dialect === 'postgres') words = sql`m.search_tsv @@ plainto_tsquery('english', ${q.text})`;
      // On the walk's own id column (um.message_id when walking the user's rows):
      // SQLite then seeks the user's rows for each match of the full-text index
      // (the matches are few: every word must match) instead of walking all the
      // user's rows and reading each message to test it (P2 search row at 1M).
      else words = sql`${idCol} IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ${fts5Match(q.words)})`;
      const parts = [words];
      for (const phrase of q.phrases) {
        const pat = `%${likeEscape(phrase)}%`;
        parts.push(sql`(lower(m.content) LIKE ${pat} ESCAPE '\\' OR m.topic_key LIKE ${pat} ESCAPE '\\')`);
      }
      return neg(parts.length === 1 ? words : sql`(${sql.join(parts, sql` AND `)})`, c.negated);
    }
    case 'muted_excluded': {
      const topics = sql`NOT EXISTS (SELECT 1 FROM user_topics ut WHERE ut.user_id = ${c.userId} AND ut.channel_id = m.stream_id AND ut.topic_lower = m.topic_key AND ut.visibility_policy = 1)`;
      if (!c.channels) return topics;
      const channels = sql`m.recipient_id NOT IN (SELECT s.recipient_id FROM subscriptions s WHERE s.user_id = ${c.userId} AND s.active = 1 AND s.is_muted = 1)`;
      return sql`(${channels} AND ${topics})`;
    }
    case 'nothing':
      return sql`1 = 0`;
  }
}

interface Base {
  readonly from: RawBuilder<unknown>;
  readonly where: RawBuilder<unknown>[];
  readonly idCol: RawBuilder<unknown>;
  /** Columns fixed by equality that lead the index the walk should use (ORDER BY them first, so planners pick it). */
  readonly orderPrefix: RawBuilder<unknown>[];
}

const single = <K extends Condition['kind']>(spec: SearchSpec, kind: K): Extract<Condition, { kind: K }> | undefined => {
  const found = spec.conditions.filter((c) => c.kind === kind && !('negated' in c && c.negated));
  return found.length === 1 ? (found[0] as Extract<Condition, { kind: K }>) : undefined;
};

/**
 * Where the walk starts. A channel (and topic) or a DM conversation is walked
 * on its own index of messages, joined to the user's row (inner join: only
 * messages the user received; left join only in history mode); anything
 * else walks the user's rows.
 */
function base(spec: SearchSpec, dialect: Dialect): Base {
  const recipient = single(spec, 'recipient');
  const topic = recipient ? single(spec, 'topic') : undefined;
  const dm = single(spec, 'dm');
  const channelPrefix = recipient ? [sql`m.recipient_id`, ...(topic ? [sql`m.topic_key`] : [])] : [];
  if (spec.includeHistory) {
    return {
      from: sql`messages m LEFT JOIN user_messages um ON um.message_id = m.id AND um.user_id = ${spec.userId}`,
      where: [sql`m.realm_id = ${spec.realmId}`],
      idCol: sql`m.id`,
      orderPrefix: channelPrefix,
    };
  }
  if (recipient || dm) {
    return {
      from: sql`messages m JOIN user_messages um ON um.message_id = m.id AND um.user_id = ${spec.userId}`,
      where: [],
      idCol: sql`m.id`,
      orderPrefix: recipient ? channelPrefix : [dialect === 'postgres' ? sql`md5(m.dm_key)` : sql`m.dm_key`],
    };
  }
  return {
    from: sql`user_messages um JOIN messages m ON m.id = um.message_id`,
    where: [sql`um.user_id = ${spec.userId}`],
    idCol: sql`um.message_id`,
    orderPrefix: [],
  };
}

/**
 * A search over the user's rows (no channel or conversation narrow) on
 * SQLite: the one full-text condition drives the walk. The index's matches
 * are read newest first (FTS5 walks its doclists by rowid, so it stops once
 * the page is full) and each is checked against the user's row, rather than
 * building the full list of matches first: at 1M messages, two common words
 * (~5,000 matches) took 8-10 ms that way and take ~0.4 ms so (docs/performance.md,
 * "Sends and reads"). Never more work than before: the old plan also probed
 * the user's rows once per match. Channel and conversation narrows keep
 * their own index walks (a small channel must not walk every match).
 */
function ftsDriven(spec: SearchSpec): Extract<Condition, { kind: 'search' }> | undefined {
  if (spec.includeHistory || single(spec, 'recipient') || single(spec, 'dm')) return undefined;
  const found = single(spec, 'search');
  return found && found.query.words.length > 0 ? found : undefined;
}

function ftsBase(spec: SearchSpec, c: Extract<Condition, { kind: 'search' }>, part: RangePart, bound: number): Base {
  const range = part.dir === 'before' ? sql`rowid <= ${bound} ORDER BY rowid DESC` : part.dir === 'after' ? sql`rowid >= ${bound} ORDER BY rowid ASC` : sql`rowid = ${bound}`;
  return {
    from: sql`(SELECT rowid AS fid FROM messages_fts WHERE messages_fts MATCH ${fts5Match(c.query.words)} AND ${range}) f
      JOIN user_messages um ON um.user_id = ${spec.userId} AND um.message_id = f.fid
      JOIN messages m ON m.id = f.fid`,
    where: [],
    idCol: sql`f.fid`,
    orderPrefix: [],
  };
}

export interface RangePart {
  /** Rows with id <= bound (descending) or >= bound (ascending), or exactly the bound. */
  readonly dir: 'before' | 'after' | 'exact';
  readonly bound: number;
  readonly limit: number;
}

/** Message ids are 32-bit: a larger bound (the anchor "newest") means the same as the largest id. */
const MAX_ID = 2147483647;

/**
 * One keyset page of the search, returned in ascending id order. `content`:
 * which of the two contents to read ('rendered': rendered_content only,
 * 'markdown': content only, the other being null; 'both' by default), so a
 * page reads only the one its answer shows.
 */
export async function searchRange(db: AnyDb, spec: SearchSpec, part: RangePart, content: FoundContent = 'both'): Promise<FoundRow[]> {
  const dialect = dialectOf(db as never);
  const bound = Math.min(part.bound, MAX_ID);
  const driven = dialect === 'sqlite' ? ftsDriven(spec) : undefined;
  const b = driven ? ftsBase(spec, driven, part, bound) : base(spec, dialect);
  const where = [...b.where, ...spec.conditions.map((c) => condition(c, b.idCol, dialect, driven))];
  let order: RawBuilder<unknown>;
  const orderBy = (dir: RawBuilder<unknown>): RawBuilder<unknown> => sql`ORDER BY ${sql.join([...b.orderPrefix, b.idCol].map((c) => sql`${c} ${dir}`))}`;
  if (part.dir === 'before') {
    where.push(sql`${b.idCol} <= ${bound}`);
    order = orderBy(sql`DESC`);
  } else if (part.dir === 'after') {
    if (part.bound > MAX_ID) return [];
    where.push(sql`${b.idCol} >= ${bound}`);
    order = orderBy(sql`ASC`);
  } else {
    if (part.bound > MAX_ID) return [];
    where.push(sql`${b.idCol} = ${bound}`);
    order = sql``;
  }
  const tail = sql`FROM ${b.from} WHERE ${sql.join(where, sql` AND `)} ${order} LIMIT ${part.limit}`;
  // On SQLite (outside a transaction) each row comes as one JSON array of its columns,
  // parsed here at once: better-sqlite3 builds a row's array or object with one V8 call
  // per column, which cost more than the page's index walk and seeks (P2, docs/performance.md
  // "GET /messages reads"); SQLite writing the page's JSON and JSON.parse reading it cost a third less.
  const direct = directReaders.get(db as Db);
  if (direct) {
    const q = sql`SELECT json_array(${foundColumnList(content, true)}, um.flags, ${hasReactions}) ${tail}`.compile(db);
    const json = direct(q.sql, q.parameters, 'pluck') as string[] | undefined;
    if (json) {
      const rows = (JSON.parse('[' + json.join(',') + ']') as unknown[][]).map(foundRow);
      return part.dir === 'before' ? rows.reverse() : rows;
    }
  }
  const q = sql<FoundRow>`SELECT ${foundColumnList(content, false)}, um.flags AS um_flags, ${hasReactions} AS has_reactions ${tail}`.compile(db);
  const rows = (await db.executeQuery(q)).rows;
  return part.dir === 'before' ? rows.reverse() : rows;
}

/** The first unread message id matching the narrow (muted channels and topics excluded), or undefined. */
export async function firstUnreadId(db: AnyDb, spec: SearchSpec): Promise<number | undefined> {
  // The user's unread rows have their own (partial) index: walk it, whatever the narrow.
  const idCol = sql`um.message_id`;
  const where = [sql`um.user_id = ${spec.userId}`, sql`(um.flags & ${sql.lit(FLAG_READ)}) = 0`, ...spec.conditions.map((c) => condition(c, idCol, dialectOf(db as never)))];
  const rows = await sql<{ id: number }>`SELECT um.message_id AS id FROM user_messages um JOIN messages m ON m.id = um.message_id WHERE ${sql.join(where, sql` AND `)} ORDER BY um.message_id ASC LIMIT 1`.execute(db);
  return rows.rows[0] ? Number(rows.rows[0].id) : undefined;
}

/** The user's unread rows with what unread_msgs needs, newest first, at most `limit`. */
export async function unreadRows(
  db: AnyDb,
  userId: number,
  limit: number,
): Promise<{ message_id: number; flags: number; sender_id: number; stream_id: number | null; topic: string; dm_key: string | null }[]> {
  const rows = await sql<{ message_id: number; flags: number; sender_id: number; stream_id: number | null; topic: string; dm_key: string | null }>`
    SELECT um.message_id, um.flags, m.sender_id, m.stream_id, m.topic, m.dm_key
    FROM user_messages um JOIN messages m ON m.id = um.message_id
    WHERE um.user_id = ${userId} AND (um.flags & ${sql.lit(FLAG_READ)}) = 0
    ORDER BY um.message_id DESC LIMIT ${limit}`.execute(db);
  return rows.rows;
}

/** The user's most recent DM conversations: each dm_key with its newest message id (from the last `scan` DMs). */
export async function recentConversations(db: AnyDb, userId: number, scan: number): Promise<{ dm_key: string; max_id: number }[]> {
  const rows = await sql<{ dm_key: string; max_id: number }>`
    SELECT m.dm_key AS dm_key, MAX(m.id) AS max_id
    FROM (SELECT um.message_id FROM user_messages um
          WHERE um.user_id = ${userId} AND (um.flags & ${sql.lit(FLAG_PRIVATE)}) <> 0
          ORDER BY um.message_id DESC LIMIT ${scan}) recent
    JOIN messages m ON m.id = recent.message_id
    GROUP BY m.dm_key`.execute(db);
  return rows.rows.map((r) => ({ dm_key: r.dm_key, max_id: Number(r.max_id) }));
}

/** The user's starred message ids, ascending (at most `limit`). */
export async function starredIds(db: AnyDb, userId: number, starredMask: number, limit: number): Promise<number[]> {
  const rows = await sql<{ message_id: number }>`
    SELECT message_id FROM user_messages WHERE user_id = ${userId} AND (flags & ${sql.lit(starredMask)}) <> 0
    ORDER BY message_id ASC LIMIT ${limit}`.execute(db);
  return rows.rows.map((r) => Number(r.message_id));
}

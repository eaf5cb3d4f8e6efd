import type { AppCtx } from '../domain/context.js';
import { realmDomainRows } from '../store/channel-extras.js';
import { prepared } from '../store/prepared.js';
import type { Store } from '../store/db.js';

/**
 * The newest message the user received, or -1 (the same statement as
 * store/messages.ts's maxMessageIdForUser, prepared once: GET /users/me runs
 * it on every call, performance target P1).
 */
const newestUserMessage = prepared(1, (db, userId: number) =>
  db.selectFrom('user_messages').select('message_id').where('user_id', '=', userId).orderBy('message_id', 'desc').limit(1),
);
async function maxMessageIdQuery(app: AppCtx, userId: number): Promise<number> {
  const memo = memoFor(app.store);
  const version = memo && app.store.dataVersion!();
  if (memo === undefined || version === undefined) {
    const rows = await newestUserMessage(app.db, userId);
    return rows.length ? rows[0]!.message_id : -1;
  }
  const hit = memoHit(memo, version, userId);
  if (hit !== undefined) return hit;
  const writes = app.store.userMessageWrites.writes;
  const rows = await newestUserMessage(app.db, userId);
  const value = rows.length ? rows[0]!.message_id : -1;
  // A write to user_messages between the read and now: the value may predate it. (A commit by
  // another connection after the data_version read is newer than `version`: the next read clears.)
  if (app.store.userMessageWrites.writes === writes) memo.byUser.set(userId, value);
  return value;
}

/** The kept value for a user at this data_version, after dropping every entry if another connection committed since. */
function memoHit(memo: MaxIdMemo, version: number, userId: number): number | undefined {
  if (version !== memo.dataVersion) {
    memo.byUser.clear();
    memo.dataVersion = version;
  }
  return memo.byUser.get(userId);
}

/**
 * max_message_id when it is kept (SQLite) and still exact, without a promise, else undefined
 * (the caller then awaits maxMessageIdForUser). GET /users/me's synchronous path.
 *
 * `sameBatch`: the caller is a request that the HTTP server read from its socket in the
 * current poll phase of the event loop, not pipelined behind another request of its
 * connection, with fewer than TURN_MAX_CONNECTIONS connections open (server.ts decides).
 * Such a request reuses the data_version read by an earlier request of the same phase, so
 * the pragma runs once per phase instead of once per request (P1). Exact: the sockets of
 * one phase's requests were all reported readable by one epoll_wait (libuv polls again
 * within a phase only after a full batch of 1,024 events, impossible with fewer fds), so
 * each request had arrived, and was sent, before that epoll_wait returned, hence before
 * the pragma was read; a commit it could have known about is in the value read. The
 * value is dropped by setImmediate, which runs right after the poll phase, before any
 * timer or the next poll. Pipelined requests may have arrived later in the same read()
 * and read the pragma themselves.
 */
export function maxMessageIdNow(app: AppCtx, userId: number, sameBatch: boolean): number | undefined {
  const memo = memoFor(app.store);
  if (memo === undefined) return undefined;
  let version: number | undefined;
  if (sameBatch && memo.turnVersion !== undefined && app.store.inTransaction?.() === false) version = memo.turnVersion;
  else {
    version = app.store.dataVersion!();
    if (version === undefined) return undefined;
    if (sameBatch) {
      if (memo.turnVersion === undefined) setImmediate(memo.endTurn);
      memo.turnVersion = version;
    }
  }
  return memoHit(memo, version, userId);
}

/**
 * max_message_id per user, kept in memory on SQLite (GET /users/me reads it on
 * every call; P1). Never stale, because every way user_messages can change drops
 * all entries:
 * - a write through this process's Kysely (sends, deletes, moves, reactions and
 *   flags that add historical rows, imports; raw SQL included): the
 *   WriteWatchPlugin store.userMessageWrites sees the statement itself, so a new
 *   writer cannot forget, and a read that overlapped a write is not kept;
 * - a commit by another connection (another process on the same file: the
 *   CLI's create-user or import): PRAGMA data_version moved (checked on every
 *   read, one cheap statement instead of the index seek);
 * - a rolled-back write: dropped at the statement already, so re-read.
 * While this connection has a transaction open, the statement runs as before.
 * PostgreSQL: not kept (other processes and the CLI commit without telling
 * this one); the statement runs every time.
 */
interface MaxIdMemo {
  byUser: Map<number, number>;
  dataVersion: number;
  /** data_version as read in the current poll phase by a request (maxMessageIdNow), until setImmediate drops it. */
  turnVersion: number | undefined;
  readonly endTurn: () => void;
}
const memos = new WeakMap<Store, MaxIdMemo>();
function memoFor(store: Store): MaxIdMemo | undefined {
  if (!store.dataVersion) return undefined;
  let memo = memos.get(store);
  if (!memo) {
    const m: MaxIdMemo = { byUser: new Map(), dataVersion: -1, turnVersion: undefined, endTurn: () => (m.turnVersion = undefined) };
    store.userMessageWrites.onWrite(() => m.byUser.clear());
    memos.set(store, (memo = m));
  }
  return memo;
}

/**
 * Values other resources own but user endpoints report. Each resource
 * replaces its hook when it lands (messages: max_message_id; realm domains:
 * allowed domains), so the user endpoints need not import those modules.
 */
export const userExtras = {
  maxMessageId: (app: AppCtx, userId: number): Promise<number> => maxMessageIdQuery(app, userId),
  realmDomains: async (app: AppCtx, realmId: number): Promise<{ domain: string; allow_subdomains: boolean }[]> =>
    (await realmDomainRows(app.db, realmId)).map((r) => ({ domain: r.domain, allow_subdomains: r.allow_subdomains === 1 })),
};

export const maxMessageIdForUser = (app: AppCtx, userId: number): Promise<number> => userExtras.maxMessageId(app, userId);
export const realmDomains = (app: AppCtx, realmId: number) => userExtras.realmDomains(app, realmId);

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
  // Another connection (the CLI) committed since the entries were read: any of them may be stale.
  if (version !== memo.dataVersion) {
    memo.byUser.clear();
    memo.dataVersion = version;
  }
  const hit = memo.byUser.get(userId);
  if (hit !== undefined) return hit;
  const writes = app.store.userMessageWrites.writes;
  const rows = await newestUserMessage(app.db, userId);
  const value = rows.length ? rows[0]!.message_id : -1;
  // A write to user_messages between the read and now: the value may predate it. (A commit by
  // another connection after the data_version read is newer than `version`: the next read clears.)
  if (app.store.userMessageWrites.writes === writes) memo.byUser.set(userId, value);
  return value;
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
}
const memos = new WeakMap<Store, MaxIdMemo>();
function memoFor(store: Store): MaxIdMemo | undefined {
  if (!store.dataVersion) return undefined;
  let memo = memos.get(store);
  if (!memo) {
    const m: MaxIdMemo = { byUser: new Map(), dataVersion: -1 };
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

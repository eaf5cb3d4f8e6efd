import type { Logger } from 'pino';
import type { FileService } from '../files/service.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';
import type { EventQueues } from '../events/queues.js';
import type { EventDelivery, ParleyEvent } from '../events/types.js';
import type { Db, Store } from '../store/db.js';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { RateLimiter } from './rules/rate-limit.js';

/** Process-wide services, built once in app.ts and passed explicitly. */
export interface AppCtx {
  readonly config: Config;
  readonly store: Store;
  readonly db: Db;
  readonly bus: EventBus;
  readonly log: Logger;
  readonly limiter: RateLimiter;
  /** API key -> user row; dropped on any write to users or realms. */
  readonly authCache: { clear(): void; get(key: string): any; set(key: string, row: any): void };
  /** Event queues: registration, long-polling, delivery of committed events (events/queues.ts). */
  readonly queues: EventQueues;
  /** Issue 15: upload storage, thumbnails, the unclaimed-upload cleaner, temporary URLs. */
  readonly files: FileService;
  /** Wakes the job scheduler after a job is added or moved (absent: nothing to wake). */
  readonly jobs?: { wake(): void };
}

/** The authenticated caller of a request. */
export interface Caller {
  readonly id: number;
  readonly realmId: number;
  readonly role: number;
  readonly isBot: boolean;
  readonly botType: number | null;
  readonly email: string;
  readonly deliveryEmail: string;
  readonly fullName: string;
}

export type TxDb = Transaction<Database>;

/** A unit of work: a transaction and the events it will send once committed. */
export interface Tx {
  readonly db: TxDb;
  /** Queue an event for these users' queues; sent only after commit. */
  emit(realmId: number, event: ParleyEvent, userIds: readonly number[]): void;
  /** Run after a successful commit, before its events are published (cache invalidation). */
  afterCommit(fn: () => void | Promise<void>): void;
  /**
   * Run after the commit's events are published (side effects that send
   * their own events or mail), so clients see the action's events first.
   */
  afterPublish(fn: () => void | Promise<void>): void;
}

/**
 * Runs fn in one transaction. Events queued with tx.emit are published after
 * the commit succeeds; if fn throws, the transaction rolls back and nothing is sent.
 */
export async function transact<T>(app: AppCtx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const deliveries: EventDelivery[] = [];
  const after: (() => void | Promise<void>)[] = [];
  const afterPub: (() => void | Promise<void>)[] = [];
  const writesBefore = app.store.userWrites.writes;
  const result = await app.db.transaction().execute(async (trx) =>
    fn({
      db: trx,
      emit: (realmId, event, userIds) => {
        if (userIds.length > 0) deliveries.push({ realmId, event, userIds: [...userIds] });
      },
      afterCommit: (f) => {
        after.push(f);
      },
      afterPublish: (f) => {
        afterPub.push(f);
      },
    }),
  );
  // A read that raced with this transaction may have cached a pre-commit row.
  if (app.store.userWrites.writes !== writesBefore) app.authCache.clear();
  for (const f of after) await f();
  await app.bus.publish(deliveries);
  for (const f of afterPub) await f();
  return result;
}

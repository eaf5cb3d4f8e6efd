import type { Logger } from 'pino';
import type { FileService } from '../files/service.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';
import type { EventQueues } from '../events/queues.js';
import type { EventDelivery, ParleyEvent } from '../events/types.js';
import type { Db, Store } from '../store/db.js';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, Transaction, UnknownRow } from 'kysely';
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
  const unit = new UnitOfWork(app);
  const result = await app.db.transaction().execute(async (trx) => fn(unit.tx(trx)));
  await unit.committed();
  return result;
}

/**
 * Runs fn, which writes with exactly one statement, outside a transaction
 * block: PostgreSQL runs a single statement as its own transaction, all of it
 * or nothing, so BEGIN and COMMIT would only add two round trips. Events,
 * afterCommit and afterPublish behave as in transact: nothing is sent if the
 * statement fails. Only for writes known to be one statement (the PostgreSQL
 * message insert with its recipients' rows, store/messages.ts); anything
 * that may issue a second statement must use transact.
 */
export async function oneStatement<T>(app: AppCtx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const unit = new UnitOfWork(app);
  // The statement runs on a pooled connection in autocommit; Transaction's extra methods are never used on this path.
  // A second statement is refused before it runs (a caller's condition gone wrong fails loudly in the tests).
  const result = await fn(unit.tx(app.db.withPlugin(new OneStatementGuard()) as unknown as TxDb));
  await unit.committed();
  return result;
}

/** Lets one statement through and refuses any other (a statement compiled, then run, is one query id). */
class OneStatementGuard implements KyselyPlugin {
  private first: QueryId | undefined;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.first ??= args.queryId;
    if (args.queryId !== this.first) throw new Error('oneStatement: the unit issued a second statement');
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** What a unit of work queues while it runs, and what happens once its writes are committed. */
class UnitOfWork {
  private readonly deliveries: EventDelivery[] = [];
  private readonly after: (() => void | Promise<void>)[] = [];
  private readonly afterPub: (() => void | Promise<void>)[] = [];
  private readonly writesBefore: number;
  constructor(private readonly app: AppCtx) {
    this.writesBefore = app.store.userWrites.writes;
  }

  tx(db: TxDb): Tx {
    return {
      db,
      emit: (realmId, event, userIds) => {
        if (userIds.length > 0) this.deliveries.push({ realmId, event, userIds: [...userIds] });
      },
      afterCommit: (f) => {
        this.after.push(f);
      },
      afterPublish: (f) => {
        this.afterPub.push(f);
      },
    };
  }

  async committed(): Promise<void> {
    // A read that raced with this unit may have cached a pre-commit row.
    if (this.app.store.userWrites.writes !== this.writesBefore) this.app.authCache.clear();
    for (const f of this.after) await f();
    await this.app.bus.publish(this.deliveries);
    for (const f of this.afterPub) await f();
  }
}

import type { Db } from '../store/db.js';
import type { TxDb } from './context.js';

type AnyDb = Db | TxDb;

/**
 * A per-realm cache of data that changes rarely (custom emoji, linkifiers):
 * one load per realm, kept until the owning action calls invalidate() (it
 * does so in the transaction and again after commit). Entries are kept per
 * database handle, so several apps in one process (tests) do not share them;
 * reads inside a transaction bypass the cache (they may see uncommitted rows).
 */
export class RealmCache<T> {
  private readonly byDb = new WeakMap<object, { generation: number; values: Map<number, Promise<T>> }>();

  constructor(private readonly load: (db: AnyDb, realmId: number) => Promise<T>) {}

  private entry(db: object): { generation: number; values: Map<number, Promise<T>> } {
    let e = this.byDb.get(db);
    if (!e) this.byDb.set(db, (e = { generation: 0, values: new Map() }));
    return e;
  }

  get(db: AnyDb, realmId: number): Promise<T> {
    if ((db as { isTransaction?: boolean }).isTransaction) return this.load(db, realmId);
    const e = this.entry(db);
    const cached = e.values.get(realmId);
    if (cached) return cached;
    const generation = e.generation;
    const p = this.load(db, realmId);
    e.values.set(realmId, p);
    // A failed load, or one that raced with an invalidation, is not kept.
    p.then(
      () => {
        if (e.generation !== generation && e.values.get(realmId) === p) e.values.delete(realmId);
      },
      () => {
        if (e.values.get(realmId) === p) e.values.delete(realmId);
      },
    );
    return p;
  }

  /** Drops every realm's entry for this database handle. */
  invalidate(db: AnyDb): void {
    const e = this.entry(db);
    e.generation++;
    e.values.clear();
  }
}

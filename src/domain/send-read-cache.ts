import type { AppCtx } from './context.js';

/**
 * The reads a channel send repeats for every message (performance.md P8): the
 * channel, the sender's groups, and the channel's active subscribers with
 * whether each muted the sender. Under a sustained send load they were about
 * a quarter of a send's SQL time (docs/performance.md, "fifth session").
 * Channel typing notifications keep their checks' outcome and their receivers
 * here too (http/endpoints/typing.ts, domain/actions/typing.ts; P5).
 *
 * An entry is used only while nothing has been committed to the database since
 * it was read, which makes it exact by construction rather than by each write
 * path: the generation is the read-only connection's PRAGMA data_version
 * (store/db.ts committedVersion), which moves at every commit of any other
 * connection, this process's writer and other processes alike. It is read once
 * per send, before any of that send's reads, so an entry's data is never older
 * than its generation. While a transaction is open, the send's reads come from
 * the last committed state anyway (the read-only connection, store/db.ts), so
 * an entry gives exactly what a read would.
 *
 * SQLite on a file only: PostgreSQL has no such counter (other connections'
 * commits cannot be seen without a round trip of their own, and there the
 * send's reads are one statement already), and an in-memory database has no
 * second connection. There every read runs, as before.
 *
 * Values are shared between sends: callers must not change them (the channel
 * row and the subscriber rows are frozen).
 */
interface Generation {
  readonly version: number;
  readonly values: Map<string, Promise<unknown>>;
}

const generations = new WeakMap<AppCtx, Generation>();
const MAX_ENTRIES = 10_000;

export interface SendReads {
  /** `read()` under `key`, or the value read in this generation. A read that fails is not kept. */
  get<T>(key: string, read: () => Promise<T>): Promise<T>;
}

const uncached: SendReads = { get: (_key, read) => read() };

/**
 * The send's view of the cache: the generation is read now (one statement),
 * before the send reads anything. `use` false: every read runs (internal sends,
 * such as the first start's welcome messages: the read-only connection the
 * generation needs is opened at the first user's send, not during the start).
 */
export function sendReads(app: AppCtx, use = true): SendReads {
  const version = use ? app.store.committedVersion?.() : undefined;
  if (version === undefined) return uncached;
  let gen = generations.get(app);
  if (!gen || gen.version !== version) generations.set(app, (gen = { version, values: new Map() }));
  const values = gen.values;
  return {
    get<T>(key: string, read: () => Promise<T>): Promise<T> {
      const hit = values.get(key);
      if (hit) return hit as Promise<T>;
      // A long quiet spell (no commit) with sends to many channels, or to many names that do not
      // exist, must not grow the map without bound: past MAX_ENTRIES it starts over.
      if (values.size >= MAX_ENTRIES) values.clear();
      const value = read();
      values.set(key, value);
      value.catch(() => {
        if (values.get(key) === value) values.delete(key);
      });
      return value;
    },
  };
}

/** How many reads the current generation holds (tests). */
export function sendReadEntries(app: AppCtx): number {
  return generations.get(app)?.values.size ?? 0;
}

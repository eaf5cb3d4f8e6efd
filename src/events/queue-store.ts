import type { QueueDescriptor } from './delivery.js';
import type { ParleyEvent } from './types.js';

/**
 * Where event queues live. Everything that reads or changes a queue's state
 * goes through this interface, so a Redis implementation (scale-out) can
 * replace the in-process one without touching the HTTP layer or the
 * delivery path:
 *
 * - any process can serve any queue's GET /events (state is in the store,
 *   only parked polls are local to a process);
 * - appends assign ids, enforce the backlog cap and notify subscribers
 *   (in Redis: a pub/sub message naming the queues that grew);
 * - acknowledgements prune, expiry is computed from the stored last
 *   connection time, and snapshot()/restore() carry queues across a restart.
 *
 * Methods are async for that reason even though MemoryQueueStore answers at once.
 */

/** An event as stored in one queue: the queue's id for it and the (shared, immutable) event. */
export interface QueuedEvent {
  readonly id: number;
  readonly event: ParleyEvent;
}

export type AckResult = 'ok' | 'pruned' | 'not_in_queue';

/** A queue in the form snapshot() writes and restore() reads (JSON). */
export interface SerializedQueue {
  readonly descriptor: QueueDescriptor;
  readonly nextEventId: number;
  readonly newestPrunedId: number;
  readonly lastConnection: number;
  readonly events: readonly { id: number; event: ParleyEvent }[];
}

export interface AppendResult {
  /** Queues that received at least one event. */
  readonly grown: readonly string[];
  /** Queues dropped because their backlog passed the cap (their clients must re-register). */
  readonly dropped: readonly QueueDescriptor[];
}

export type QueueListener = (grown: readonly string[], dropped: readonly string[]) => void;

export interface QueueStore {
  create(desc: QueueDescriptor, now: number): Promise<void>;
  get(queueId: string): Promise<QueueDescriptor | undefined>;
  /** Queues owned by these users. */
  forUsers(userIds: readonly number[]): Promise<QueueDescriptor[]>;
  /** Queues of the realm that watch more than their owner's messages (all_public_streams, or a narrow). */
  watchers(realmId: number): Promise<QueueDescriptor[]>;
  /** Appends events to queues, assigning each queue's next ids, in one step per batch. */
  append(batch: ReadonlyMap<string, readonly ParleyEvent[]>): Promise<AppendResult>;
  /** Prunes events with id <= lastEventId, with Zulip's consistency checks. */
  acknowledge(queueId: string, lastEventId: number): Promise<AckResult>;
  /** Events not yet acknowledged, oldest first. */
  pending(queueId: string): Promise<readonly QueuedEvent[]>;
  /** Records a client connection (a poll that parks or ends), which postpones expiry. */
  touch(queueId: string, now: number): Promise<void>;
  remove(queueIds: readonly string[]): Promise<QueueDescriptor[]>;
  /** Ids of queues idle for at least their timeout, other than those given. */
  expired(now: number, busy: ReadonlySet<string>): Promise<string[]>;
  count(): Promise<number>;
  snapshot(): Promise<SerializedQueue[]>;
  restore(queues: readonly SerializedQueue[]): Promise<void>;
  /** Called after every append (from any process) with the queues that grew and those dropped for their backlog. */
  subscribe(listener: QueueListener): () => void;
}

interface MemQueue {
  readonly desc: QueueDescriptor;
  nextEventId: number;
  newestPrunedId: number;
  lastConnection: number;
  events: QueuedEvent[];
  /** Index of the first unacknowledged event in `events` (amortised pruning). */
  head: number;
}

/** The in-process queue store: plain maps, with an index by user and by realm watcher. */
export class MemoryQueueStore implements QueueStore {
  private readonly queues = new Map<string, MemQueue>();
  private readonly byUser = new Map<number, Set<string>>();
  private readonly watchersByRealm = new Map<number, Set<string>>();
  private readonly listeners = new Set<QueueListener>();

  constructor(private readonly maxEvents: number) {}

  private index(d: QueueDescriptor): void {
    let s = this.byUser.get(d.userId);
    if (!s) this.byUser.set(d.userId, (s = new Set()));
    s.add(d.id);
    if (d.allPublicStreams || d.narrow.length > 0) {
      let w = this.watchersByRealm.get(d.realmId);
      if (!w) this.watchersByRealm.set(d.realmId, (w = new Set()));
      w.add(d.id);
    }
  }

  private unindex(d: QueueDescriptor): void {
    const s = this.byUser.get(d.userId);
    if (s) {
      s.delete(d.id);
      if (s.size === 0) this.byUser.delete(d.userId);
    }
    const w = this.watchersByRealm.get(d.realmId);
    if (w) {
      w.delete(d.id);
      if (w.size === 0) this.watchersByRealm.delete(d.realmId);
    }
  }

  async create(desc: QueueDescriptor, now: number): Promise<void> {
    this.queues.set(desc.id, { desc, nextEventId: 0, newestPrunedId: -1, lastConnection: now, events: [], head: 0 });
    this.index(desc);
  }

  async get(queueId: string): Promise<QueueDescriptor | undefined> {
    return this.queues.get(queueId)?.desc;
  }

  async forUsers(userIds: readonly number[]): Promise<QueueDescriptor[]> {
    const out: QueueDescriptor[] = [];
    for (const uid of userIds) {
      const ids = this.byUser.get(uid);
      if (ids) for (const id of ids) out.push(this.queues.get(id)!.desc);
    }
    return out;
  }

  async watchers(realmId: number): Promise<QueueDescriptor[]> {
    const ids = this.watchersByRealm.get(realmId);
    return ids ? [...ids].map((id) => this.queues.get(id)!.desc) : [];
  }

  async append(batch: ReadonlyMap<string, readonly ParleyEvent[]>): Promise<AppendResult> {
    const grown: string[] = [];
    const dropped: QueueDescriptor[] = [];
    for (const [id, events] of batch) {
      const q = this.queues.get(id);
      if (!q || events.length === 0) continue;
      if (q.events.length - q.head + events.length > this.maxEvents) {
        this.queues.delete(id);
        this.unindex(q.desc);
        dropped.push(q.desc);
        continue;
      }
      for (const event of events) q.events.push({ id: q.nextEventId++, event });
      grown.push(id);
    }
    if (grown.length > 0 || dropped.length > 0) {
      const droppedIds = dropped.map((d) => d.id);
      for (const l of this.listeners) l(grown, droppedIds);
    }
    return { grown, dropped };
  }

  async acknowledge(queueId: string, lastEventId: number): Promise<AckResult> {
    const q = this.queues.get(queueId);
    if (!q) return 'ok';
    if (lastEventId < q.newestPrunedId) return 'pruned';
    while (q.head < q.events.length && q.events[q.head]!.id <= lastEventId) {
      q.newestPrunedId = q.events[q.head]!.id;
      q.head++;
    }
    if (q.head > 64 && q.head * 2 > q.events.length) {
      q.events = q.events.slice(q.head);
      q.head = 0;
    }
    return lastEventId !== q.newestPrunedId ? 'not_in_queue' : 'ok';
  }

  async pending(queueId: string): Promise<readonly QueuedEvent[]> {
    const q = this.queues.get(queueId);
    if (!q) return [];
    return q.head === 0 ? q.events.slice() : q.events.slice(q.head);
  }

  async touch(queueId: string, now: number): Promise<void> {
    const q = this.queues.get(queueId);
    if (q) q.lastConnection = now;
  }

  async remove(queueIds: readonly string[]): Promise<QueueDescriptor[]> {
    const out: QueueDescriptor[] = [];
    for (const id of queueIds) {
      const q = this.queues.get(id);
      if (!q) continue;
      this.queues.delete(id);
      this.unindex(q.desc);
      out.push(q.desc);
    }
    return out;
  }

  async expired(now: number, busy: ReadonlySet<string>): Promise<string[]> {
    const out: string[] = [];
    for (const [id, q] of this.queues) {
      if (!busy.has(id) && now - q.lastConnection >= q.desc.timeoutSecs * 1000) out.push(id);
    }
    return out;
  }

  async count(): Promise<number> {
    return this.queues.size;
  }

  async snapshot(): Promise<SerializedQueue[]> {
    return [...this.queues.values()].map((q) => ({
      descriptor: q.desc,
      nextEventId: q.nextEventId,
      newestPrunedId: q.newestPrunedId,
      lastConnection: q.lastConnection,
      events: q.events.slice(q.head),
    }));
  }

  async restore(queues: readonly SerializedQueue[]): Promise<void> {
    for (const s of queues) {
      const q: MemQueue = {
        desc: s.descriptor,
        nextEventId: s.nextEventId,
        newestPrunedId: s.newestPrunedId,
        lastConnection: s.lastConnection,
        events: s.events.map((e) => ({ id: e.id, event: e.event })),
        head: 0,
      };
      this.queues.set(s.descriptor.id, q);
      this.index(s.descriptor);
    }
  }

  subscribe(listener: QueueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

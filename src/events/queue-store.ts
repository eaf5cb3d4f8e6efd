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
  /** How many queues received at least one event (their ids reach the subscribers). */
  readonly grown: number;
  /** Queues dropped because their backlog passed the cap (their clients must re-register). */
  readonly dropped: readonly QueueDescriptor[];
}

/**
 * What a shared store's notification says about the events one append added
 * (the notification carries them, so a parked poll can answer without reading
 * its queue back).
 */
export interface AppendedEvents {
  /**
   * The wire JSON of the events the append gave grown[i], if the first of them
   * has id `firstId`; otherwise (another first id, or no such entry) undefined.
   */
  json(i: number, firstId: number): string | undefined;
}

export type QueueListener = (grown: readonly string[], dropped: readonly string[], appended?: AppendedEvents) => void;

/**
 * Synchronous access to an in-process store: the event queues use it on the
 * long-poll path (no promise and no microtask hop per parked poll or per
 * delivery). Same semantics as the async methods of QueueStore.
 */
export interface LocalQueueOps {
  getNow(queueId: string): QueueDescriptor | undefined;
  acknowledgeNow(queueId: string, lastEventId: number): AckResult;
  /** The wire JSON of the pending events (what pendingJson() resolves to). */
  pendingJsonNow(queueId: string): string;
  hasPending(queueId: string): boolean;
  touchNow(queueId: string, now: number): void;
}

/** What one poll step found (QueueStore.pollStep). */
export type PollStep =
  /** No such queue, or not the caller's. */
  | { readonly status: 'missing' | 'pruned' | 'not_in_queue' }
  /** Acknowledged; `eventsJson` is the wire JSON of what is still pending ('[]' when nothing). */
  | {
      readonly status: 'ok';
      readonly eventsJson: string;
      /** The id the queue's next event will get (a shared store says, so a poll parked on an empty queue knows which append answers it). */
      readonly nextEventId?: number;
    };

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
  /** The pending events as wire JSON, byte for byte JSON.stringify(pending.map(wireEvent)); '[]' for a missing queue. */
  pendingJson(queueId: string): Promise<string>;
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
  /**
   * A poll's store work in one step (one round trip for a shared store): the
   * queue exists and is the user's, acknowledge through lastEventId, record
   * the connection when the poll blocks, and read what is pending.
   */
  pollStep?(queueId: string, userId: number, lastEventId: number, block: boolean, now: number): Promise<PollStep>;
  /**
   * A blocking poll step the store can answer at once, without I/O (a shared
   * store's copy of a queue this process is notified of); undefined, with
   * nothing changed, when pollStep must run.
   */
  pollOwned?(queueId: string, userId: number, lastEventId: number, now: number): PollStep | undefined;
  /** pendingJson of several queues in one step (one round trip for a shared store), in the same order. */
  pendingJsonMany?(queueIds: readonly string[]): Promise<string[]>;
  /** Present on in-process stores: synchronous versions of the poll path's operations. */
  readonly local?: LocalQueueOps;
}

/** The wire form of a queued event: the event with its id. */
export const wireEvent = (q: QueuedEvent): Record<string, unknown> => ({ ...q.event, id: q.id });

/**
 * JSON of each stored event without its id, computed once per event object:
 * queues share the (immutable) event objects of one fan-out, so an event
 * delivered to many queues is serialized once and only its id is spliced in.
 */
const eventJsonCache = new WeakMap<object, string>();
const hasOwn = Object.prototype.hasOwnProperty;

/** The event's JSON without an id, or null when the event has its own `id` key (whose position the wire form keeps). */
export function eventJsonWithoutId(e: ParleyEvent): string | null {
  if (hasOwn.call(e, 'id')) return null;
  let s = eventJsonCache.get(e);
  if (s === undefined) {
    s = JSON.stringify(e);
    eventJsonCache.set(e, s);
  }
  return s;
}

/** Adds `"id":N` as the last key of an event's JSON, as JSON.stringify({ ...event, id }) writes it. */
export const spliceId = (json: string, id: number): string => (json.length === 2 ? `{"id":${id}}` : `${json.slice(0, -1)},"id":${id}}`);

/** JSON.stringify(wireEvent({ id, event })), byte for byte. */
export function wireEventJson(id: number, event: ParleyEvent): string {
  const s = eventJsonWithoutId(event);
  return s === null ? JSON.stringify({ ...event, id }) : spliceId(s, id);
}

/**
 * The most recent one-event answer. A fan-out gives many queues the same
 * event object, usually under the same id (queues that saw the same
 * history), so their answers share one string instead of building one each.
 */
let lastOne: { event: ParleyEvent; id: number; json: string } | undefined;

/** JSON.stringify of events[from..] with ids firstId, firstId + 1, ... (wire form). */
export function wireListJson(events: readonly ParleyEvent[], from: number, firstId: number): string {
  const n = events.length - from;
  if (n <= 0) return '[]';
  if (n === 1) {
    const event = events[from]!;
    if (lastOne !== undefined && lastOne.event === event && lastOne.id === firstId) return lastOne.json;
    const json = '[' + wireEventJson(firstId, event) + ']';
    lastOne = { event, id: firstId, json };
    return json;
  }
  let out = '[' + wireEventJson(firstId, events[from]!);
  for (let i = 1; i < n; i++) out += ',' + wireEventJson(firstId + i, events[from + i]!);
  return out + ']';
}

/** JSON.stringify(events.map(wireEvent)), byte for byte. */
export function wireEventsJson(events: readonly QueuedEvent[]): string {
  if (events.length === 0) return '[]';
  let out = '[' + wireEventJson(events[0]!.id, events[0]!.event);
  for (let i = 1; i < events.length; i++) out += ',' + wireEventJson(events[i]!.id, events[i]!.event);
  return out + ']';
}

/**
 * One queue in memory. Event ids are consecutive, so the queue keeps only
 * the (shared, immutable) event objects, no wrapper per event: the id of
 * events[i] is nextEventId - (events.length - i).
 */
class MemQueue {
  /** Index of the first unacknowledged event in `events` (amortised pruning). */
  head = 0;
  events: ParleyEvent[] = [];
  constructor(
    readonly desc: QueueDescriptor,
    public nextEventId: number,
    public newestPrunedId: number,
    public lastConnection: number,
  ) {}
  idAt(i: number): number {
    return this.nextEventId - (this.events.length - i);
  }
}

/** The in-process queue store: plain maps, with an index by user and by realm watcher. */
export class MemoryQueueStore implements QueueStore, LocalQueueOps {
  private readonly queues = new Map<string, MemQueue>();
  private readonly byUser = new Map<number, Set<string>>();
  private readonly watchersByRealm = new Map<number, Set<string>>();
  private readonly listeners = new Set<QueueListener>();
  /** The store answers synchronously. */
  readonly local: LocalQueueOps = this;

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
    this.queues.set(desc.id, new MemQueue(desc, 0, -1, now));
    this.index(desc);
  }

  getNow(queueId: string): QueueDescriptor | undefined {
    return this.queues.get(queueId)?.desc;
  }

  async get(queueId: string): Promise<QueueDescriptor | undefined> {
    return this.getNow(queueId);
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
      for (const event of events) q.events.push(event);
      q.nextEventId += events.length;
      grown.push(id);
    }
    if (grown.length > 0 || dropped.length > 0) {
      const droppedIds = dropped.map((d) => d.id);
      for (const l of this.listeners) l(grown, droppedIds);
    }
    return { grown: grown.length, dropped };
  }

  acknowledgeNow(queueId: string, lastEventId: number): AckResult {
    const q = this.queues.get(queueId);
    if (!q) return 'ok';
    if (lastEventId < q.newestPrunedId) return 'pruned';
    if (q.head < q.events.length) {
      // Ids are consecutive: everything up to lastEventId goes in one step.
      const firstId = q.idAt(q.head);
      if (lastEventId >= firstId) {
        const upto = Math.min(lastEventId, q.nextEventId - 1);
        q.head += upto - firstId + 1;
        q.newestPrunedId = upto;
        if (q.head === q.events.length) {
          q.events = [];
          q.head = 0;
        } else if (q.head > 64 && q.head * 2 > q.events.length) {
          q.events = q.events.slice(q.head);
          q.head = 0;
        }
      }
    }
    return lastEventId !== q.newestPrunedId ? 'not_in_queue' : 'ok';
  }

  async acknowledge(queueId: string, lastEventId: number): Promise<AckResult> {
    return this.acknowledgeNow(queueId, lastEventId);
  }

  async pending(queueId: string): Promise<readonly QueuedEvent[]> {
    const q = this.queues.get(queueId);
    if (!q) return [];
    const out: QueuedEvent[] = [];
    for (let i = q.head; i < q.events.length; i++) out.push({ id: q.idAt(i), event: q.events[i]! });
    return out;
  }

  pendingJsonNow(queueId: string): string {
    const q = this.queues.get(queueId);
    return q ? wireListJson(q.events, q.head, q.idAt(q.head)) : '[]';
  }

  async pendingJson(queueId: string): Promise<string> {
    return this.pendingJsonNow(queueId);
  }

  hasPending(queueId: string): boolean {
    const q = this.queues.get(queueId);
    return q !== undefined && q.head < q.events.length;
  }

  touchNow(queueId: string, now: number): void {
    const q = this.queues.get(queueId);
    if (q) q.lastConnection = now;
  }

  async touch(queueId: string, now: number): Promise<void> {
    this.touchNow(queueId, now);
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
    return [...this.queues.values()].map((q) => {
      const events: QueuedEvent[] = [];
      for (let i = q.head; i < q.events.length; i++) events.push({ id: q.idAt(i), event: q.events[i]! });
      return { descriptor: q.desc, nextEventId: q.nextEventId, newestPrunedId: q.newestPrunedId, lastConnection: q.lastConnection, events };
    });
  }

  async restore(queues: readonly SerializedQueue[]): Promise<void> {
    for (const s of queues) {
      const q = new MemQueue(s.descriptor, s.nextEventId, s.newestPrunedId, s.lastConnection);
      // A saved queue's events are its consecutive tail, ending at nextEventId - 1.
      q.events = s.events.map((e) => e.event);
      this.queues.set(s.descriptor.id, q);
      this.index(s.descriptor);
    }
  }

  subscribe(listener: QueueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

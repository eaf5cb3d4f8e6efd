import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { badRequest, JsonableError } from '../domain/errors.js';
import type { EventBus } from './bus.js';
import { accepts, shapeFor, stripHints, wantsType, type QueueDescriptor } from './delivery.js';
import { wireEvent, wireEventsJson, type AppendedEvents, type LocalQueueOps, type PollStep, type QueuedEvent, type QueueStore, type SerializedQueue } from './queue-store.js';
import type { EventDelivery, ParleyEvent } from './types.js';

/**
 * Event queues: registration, long-polling, acknowledgement, heartbeats,
 * idle expiry, backlog cap and persistence across restarts.
 *
 * The delivery path: an action's transaction commits -> the bus publishes its
 * EventDelivery batch -> dispatch() shapes each event per recipient queue
 * (delivery.ts) and appends the results to the QueueStore in one call -> the
 * store notifies its subscribers of the queues that grew -> parked polls on
 * those queues answer. With a shared (Redis) store the publishing process
 * runs dispatch() and the other processes learn of growth through the
 * store's subscription; parked polls, the heartbeat sweep and the expiry
 * sweep are the only per-process state.
 */

/** Zulip: 10 minutes idle; queue_lifespan_secs may ask for more, up to 7 days. */
export const DEFAULT_QUEUE_TIMEOUT_SECS = 600;
export const MAX_QUEUE_TIMEOUT_SECS = 7 * 24 * 3600;
/** Zulip sweeps expired queues every minute. */
const GC_INTERVAL_MS = 60_000;
const SNAPSHOT_FILE = 'event-queues.json';

export const badEventQueueId = (queueId: string): JsonableError =>
  new JsonableError(`Bad event queue ID: ${queueId}`, { code: 'BAD_EVENT_QUEUE_ID', data: { queue_id: queueId } });

export { wireEvent, wireEventsJson };

/**
 * A GET /events answer whose events are already JSON: the HTTP layer splices
 * `eventsJson` into the body ({"result","msg","events","queue_id"}) rather
 * than building and serializing per-queue event objects.
 */
export class PollAnswer {
  readonly [key: string]: unknown;
  constructor(
    readonly eventsJson: string,
    /** Present when the request named no queue, or when the poll had to wait (as Zulip does). */
    readonly queue_id?: string,
  ) {}
  /** The answer as objects: { events, queue_id? }. */
  toResult(): PollResult {
    const events = JSON.parse(this.eventsJson) as Record<string, unknown>[];
    return this.queue_id === undefined ? { events } : { events, queue_id: this.queue_id };
  }
}

export interface PollResult {
  readonly [key: string]: unknown;
  readonly events: Record<string, unknown>[];
  /** Present when the request named no queue, or when the poll had to wait (as Zulip does). */
  readonly queue_id?: string;
}

export interface EventQueueOptions {
  readonly heartbeatMinMs: number;
  readonly heartbeatJitterMs: number;
  /** Where queues are saved on shutdown and restored at start (null: not persisted). */
  readonly dataDir: string | null;
  readonly log?: Logger;
  readonly now?: () => number;
}

/**
 * Where a poll's answer goes, exactly once: the events as wire JSON (with the
 * queue id when the poll waited or made the queue), or the error. The lean
 * GET /events path (http/server.ts) passes a plain record that writes the
 * HTTP answer itself, so a parked poll holds no promise, resolver closures or
 * suspended async frame, and answering one allocates none (P4, P5, P6).
 * An implementation must not throw: wake() answers many polls in one loop.
 */
export interface PollSink {
  answered(eventsJson: string, queueId: string | undefined): void;
  failed(err: unknown): void;
}

/** The sink behind the promise API (pollAnswer, poll): settles one promise. */
class PromiseSink implements PollSink {
  constructor(
    private readonly resolve: (result: PollAnswer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}
  answered(eventsJson: string, queueId: string | undefined): void {
    this.resolve(new PollAnswer(eventsJson, queueId));
  }
  failed(err: unknown): void {
    this.reject(err);
  }
}

/** A parked GET /events, local to this process (one small object: no closures per poll). */
class Waiter {
  constructor(
    readonly queueId: string,
    /** When the heartbeat is due (ms since epoch). */
    readonly due: number,
    readonly sink: PollSink,
    /** Shared store: the id the next event appended to the (then empty) queue gets; -1 when unknown. */
    readonly next: number,
  ) {}
}

/**
 * A new queue id: 16 characters of base64url (96 random bits). Clients treat
 * queue ids as opaque strings (Zulip's own are "<timestamp>:<counter>"), and a
 * poll of another user's queue fails as a missing one, so the id needs to be
 * unique, not secret. With Redis every fan-out carries each recipient queue's id
 * to the append script and back in the notification, and every key of a queue
 * holds it: against 36-character UUIDs, seven alternated pairs of
 * `BENCH_SCALE_PARTS=p4,p5 BENCH_PROCESSES=0,1 node bench/scale-events.mjs`
 * (2026-12-02) gave 10% less Redis CPU per delivery and 3% less Redis memory per
 * queue with one Redis process (docs/scaling.md, "Shorter queue ids").
 */
export const newQueueId = (): string => randomBytes(12).toString('base64url');

/**
 * What a parked poll listens on for its client going away: the HTTP
 * response (its 'close' event). One listener function is shared by all
 * parked polls; it finds the poll through a symbol-keyed slot on the emitter.
 */
export interface CloseSignal {
  on(event: 'close', listener: (this: CloseSignal) => void): unknown;
}
const WAITER = Symbol('parley.waiter');
type Slotted = CloseSignal & { [WAITER]?: Waiter };

export type NewQueue = Omit<QueueDescriptor, 'id' | 'timeoutSecs'> & { readonly lifespanSecs: number };

export function queueTimeoutSecs(lifespanSecs: number): number {
  return lifespanSecs <= 0 ? DEFAULT_QUEUE_TIMEOUT_SECS : Math.min(lifespanSecs, MAX_QUEUE_TIMEOUT_SECS);
}

function ackError(ack: 'pruned' | 'not_in_queue', lastEventId: number): JsonableError {
  return ack === 'pruned' ? badRequest(`An event newer than ${lastEventId} has already been pruned!`) : badRequest(`Event ${lastEventId} was not in this queue`);
}

function checkAck(ack: string, lastEventId: number): void {
  if (ack === 'pruned' || ack === 'not_in_queue') throw ackError(ack, lastEventId);
}

export class EventQueues {
  private readonly waiters = new Map<string, Waiter>();
  /** Shared store: queues with a poll step in flight here -> whether they grew meanwhile. */
  private readonly inflight = new Map<string, boolean>();
  private readonly unsubscribe: (() => void)[] = [];
  private gcTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly interned = new Map<string, unknown>();
  private closing = false;
  private readonly now: () => number;
  /** The store's synchronous operations, when it is in-process. */
  private readonly local: LocalQueueOps | undefined;
  /** The one 'close' listener of every parked poll of this instance. */
  private readonly onClientClose: (this: CloseSignal) => void;
  /** In-process store: polls woken by appends since the last answerWoken (see wake). */
  private woken: Waiter[] = [];
  private readonly answerWoken = (): void => {
    const local = this.local!;
    const woken = this.woken;
    this.woken = [];
    for (let i = 0; i < woken.length; i++) this.finishNow(local, woken[i]!);
  };

  constructor(
    readonly store: QueueStore,
    private readonly opts: EventQueueOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.local = store.local;
    const waiters = this.waiters;
    this.onClientClose = function (this: CloseSignal) {
      const w = (this as Slotted)[WAITER];
      if (w !== undefined && waiters.get(w.queueId) === w) waiters.delete(w.queueId);
    };
    this.unsubscribe.push(store.subscribe((grown, dropped, appended) => this.wake(grown, dropped, appended)));
  }

  /** Starts consuming committed events from the bus and the expiry sweep. */
  attach(bus: EventBus): void {
    // A failed delivery must not fail the action that already committed: log it.
    // Only the committing process appends (a Redis bus also hands this process other processes' batches).
    this.unsubscribe.push(
      bus.subscribe((deliveries, origin) => {
        if (origin === 'remote') return;
        return this.dispatch(deliveries).catch((err) => this.opts.log?.error({ err }, 'event dispatch failed'));
      }),
    );
    this.gcTimer = setInterval(() => void this.gc().catch((err) => this.opts.log?.error({ err }, 'event queue sweep failed')), GC_INTERVAL_MS);
    this.gcTimer.unref();
  }

  /**
   * Most clients register with the same few event-type lists, narrows and
   * capability sets: queues share one frozen copy of each (memory per idle client).
   */
  private intern<T>(value: T): T {
    const key = JSON.stringify(value);
    const found = this.interned.get(key);
    if (found !== undefined) return found as T;
    if (this.interned.size < 10_000) this.interned.set(key, Object.freeze(value));
    return value;
  }

  async register(spec: NewQueue): Promise<QueueDescriptor> {
    // One literal with every field in a fixed order: a rest/spread copy gave each
    // descriptor its own hidden class (about 400 bytes per queue in a heap snapshot).
    const desc: QueueDescriptor = {
      id: newQueueId(),
      userId: spec.userId,
      realmId: spec.realmId,
      eventTypes: spec.eventTypes && this.intern([...spec.eventTypes]),
      narrow: this.intern(spec.narrow.map((t) => [t[0], t[1]] as const)),
      capabilities: this.intern({ ...spec.capabilities }),
      applyMarkdown: spec.applyMarkdown,
      clientGravatar: spec.clientGravatar,
      slimPresence: spec.slimPresence,
      allPublicStreams: spec.allPublicStreams,
      includeSubscribers: spec.includeSubscribers,
      clientName: spec.clientName,
      timeoutSecs: queueTimeoutSecs(spec.lifespanSecs),
    };
    await this.store.create(desc, this.now());
    return desc;
  }

  /** The queue, if it exists and belongs to this user; otherwise BAD_EVENT_QUEUE_ID. */
  async access(userId: number, queueId: string): Promise<QueueDescriptor> {
    const desc = await this.store.get(queueId);
    if (!desc || desc.userId !== userId) throw badEventQueueId(queueId);
    return desc;
  }

  /** Events waiting in a queue (for /register, which applies them to the fresh state). */
  pending(queueId: string): Promise<readonly QueuedEvent[]> {
    return this.store.pending(queueId);
  }

  /**
   * GET /events on an existing queue: acknowledge through lastEventId, then
   * answer with what is pending, or park until an event or the heartbeat.
   * `onClose` is the response whose 'close' means the client went away.
   */
  async poll(userId: number, queueId: string, lastEventId: number, dontBlock: boolean, onClose?: CloseSignal): Promise<PollResult> {
    return (await this.pollAnswer(userId, queueId, lastEventId, dontBlock, onClose)).toResult();
  }

  /** poll(), with the events as JSON (what GET /events sends). */
  pollAnswer(userId: number, queueId: string, lastEventId: number, dontBlock: boolean, onClose?: CloseSignal): Promise<PollAnswer> {
    return new Promise<PollAnswer>((resolve, reject) => this.pollInto(userId, queueId, lastEventId, dontBlock, onClose, new PromiseSink(resolve, reject)));
  }

  /**
   * The poll, answered through `sink` (exactly once: now, when an event or
   * the heartbeat arrives, or never if the client goes away first). With the
   * in-process store an immediate answer or error reaches the sink before
   * this returns.
   */
  pollInto(userId: number, queueId: string, lastEventId: number, dontBlock: boolean, onClose: CloseSignal | undefined, sink: PollSink): void {
    const local = this.local;
    if (local === undefined) {
      // A re-poll the shared store answers from its copy of the queue: synchronous up to parking, as in process.
      // (With a poll still parked here, the async path ends that one first.)
      if (!dontBlock && !this.closing && this.store.pollOwned !== undefined && !this.waiters.has(queueId) && !this.inflight.has(queueId)) {
        const step = this.store.pollOwned(queueId, userId, lastEventId, this.now());
        if (step !== undefined && step.status === 'ok') {
          if (step.eventsJson === '[]') return this.park(queueId, onClose, step.nextEventId ?? -1, sink);
          return sink.answered(step.eventsJson, queueId);
        }
      }
      void this.pollShared(userId, queueId, lastEventId, dontBlock, onClose, sink);
      return;
    }
    // In-process store: the whole poll is synchronous up to parking (no await, so nothing can arrive in between).
    let json: string;
    let waited: string | undefined;
    try {
      const desc = local.getNow(queueId);
      if (!desc || desc.userId !== userId) throw badEventQueueId(queueId);
      checkAck(local.acknowledgeNow(queueId, lastEventId), lastEventId);
      // A new poll on the queue ends the one still waiting on it.
      const previous = this.waiters.get(queueId);
      if (previous) this.finishNow(local, previous);
      if (dontBlock || this.closing) json = local.pendingJsonNow(queueId);
      else {
        local.touchNow(queueId, this.now());
        // Nothing waiting: park. Events already waiting: answered as a poll that waited (with the queue id).
        if (!local.hasPending(queueId)) return this.park(queueId, onClose, -1, sink);
        json = local.pendingJsonNow(queueId);
        waited = queueId;
      }
    } catch (err) {
      sink.failed(err);
      return;
    }
    sink.answered(json, waited);
  }

  /** The poll against a shared (Redis) store: one round trip (pollStep) before answering or parking. */
  private async pollShared(userId: number, queueId: string, lastEventId: number, dontBlock: boolean, onClose: CloseSignal | undefined, sink: PollSink): Promise<void> {
    const block = !dontBlock && !this.closing;
    let json: string;
    try {
      if (this.store.pollStep === undefined) return await this.pollStepwise(userId, queueId, lastEventId, block, onClose, sink);
      // Growth announced while the step is in flight (the notification may be read before the step's reply).
      this.inflight.set(queueId, false);
      let step: PollStep;
      let grewMeanwhile: boolean;
      try {
        step = await this.store.pollStep(queueId, userId, lastEventId, block, this.now());
      } finally {
        grewMeanwhile = this.inflight.get(queueId) === true;
        this.inflight.delete(queueId);
      }
      if (step.status !== 'ok') throw step.status === 'missing' ? badEventQueueId(queueId) : ackError(step.status, lastEventId);
      const previous = this.waiters.get(queueId);
      if (previous) await this.finishWaiter(previous);
      json = step.eventsJson;
      // The queue is empty up to step.nextEventId: the append that gives it that id carries its whole answer.
      if (block && json === '[]') {
        this.park(queueId, onClose, step.nextEventId ?? -1, sink);
        if (grewMeanwhile) {
          const w = this.waiters.get(queueId);
          if (w !== undefined) void this.finishWaiter(w);
        }
        return;
      }
    } catch (err) {
      sink.failed(err);
      return;
    }
    // Events already waiting: answered as a poll that waited (with the queue id).
    sink.answered(json, block ? queueId : undefined);
  }

  /** The same for a shared store without pollStep: access, acknowledge, then touch and re-read after parking. */
  private async pollStepwise(userId: number, queueId: string, lastEventId: number, block: boolean, onClose: CloseSignal | undefined, sink: PollSink): Promise<void> {
    await this.access(userId, queueId);
    checkAck(await this.store.acknowledge(queueId, lastEventId), lastEventId);
    const previous = this.waiters.get(queueId);
    if (previous) await this.finishWaiter(previous);
    if (!block) {
      const json = await this.store.pendingJson(queueId);
      return sink.answered(json, undefined);
    }
    this.park(queueId, onClose, -1, sink);
    void this.store.touch(queueId, this.now());
    // Events may have arrived between the checks above and parking.
    void this.store.pendingJson(queueId).then((json) => {
      const w = this.waiters.get(queueId);
      if (json !== '[]' && w !== undefined) void this.finishWaiter(w);
    });
  }

  /** GET /events without queue_id (dont_block): a new queue and its (empty) events. */
  async registerAndPoll(spec: NewQueue): Promise<PollResult> {
    return (await this.registerAndPollAnswer(spec)).toResult();
  }

  /** registerAndPoll(), with the events as JSON. */
  async registerAndPollAnswer(spec: NewQueue): Promise<PollAnswer> {
    const desc = await this.register(spec);
    return new PollAnswer(await this.store.pendingJson(desc.id), desc.id);
  }

  async delete(userId: number, queueId: string): Promise<void> {
    await this.access(userId, queueId);
    await this.drop([queueId]);
  }

  /** Drops every queue of a user (deactivation); parked polls answer with what they have. */
  async dropUser(userId: number): Promise<void> {
    const ids = (await this.store.forUsers([userId])).map((d) => d.id);
    await this.drop(ids);
  }

  private async drop(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const w = this.waiters.get(id);
      if (w) await this.finishWaiter(w);
    }
    await this.store.remove(ids);
  }

  private park(queueId: string, onClose: CloseSignal | undefined, next: number, sink: PollSink): void {
    const delay = this.opts.heartbeatMinMs + Math.floor(Math.random() * (this.opts.heartbeatJitterMs + 1));
    const waiter = new Waiter(queueId, Date.now() + delay, sink, next);
    this.waiters.set(queueId, waiter);
    this.startHeartbeats();
    if (onClose !== undefined) {
      (onClose as Slotted)[WAITER] = waiter;
      onClose.on('close', this.onClientClose);
    }
  }

  /**
   * Heartbeats: one sweep timer for all parked polls (a timer per poll would
   * cost memory for every idle client). Each sweep gives every poll whose
   * heartbeat is due a heartbeat event, in one append.
   */
  private startHeartbeats(): void {
    if (this.heartbeatTimer) return;
    const tick = Math.max(50, Math.min(1000, Math.floor(this.opts.heartbeatMinMs / 4)));
    this.heartbeatTimer = setInterval(() => void this.sweepHeartbeats(), tick);
    this.heartbeatTimer.unref();
  }

  private async sweepHeartbeats(): Promise<void> {
    if (this.waiters.size === 0) {
      clearInterval(this.heartbeatTimer);
      this.heartbeatTimer = undefined;
      return;
    }
    const now = Date.now();
    const due: [string, ParleyEvent[]][] = [];
    for (const w of this.waiters.values()) if (w.due <= now) due.push([w.queueId, [{ type: 'heartbeat' }]]);
    if (due.length) await this.store.append(new Map(due));
  }

  private async finishWaiter(w: Waiter): Promise<void> {
    if (this.local !== undefined) return this.finishNow(this.local, w);
    if (this.waiters.get(w.queueId) !== w) return;
    this.waiters.delete(w.queueId);
    let json: string;
    try {
      json = await this.store.pendingJson(w.queueId);
    } catch (err) {
      return w.sink.failed(err);
    }
    w.sink.answered(json, w.queueId);
  }

  /** Answers polls already taken out of `waiters`, with one store read for all. */
  private async finishMany(claimed: readonly Waiter[]): Promise<void> {
    let jsons: string[];
    try {
      jsons = await this.store.pendingJsonMany!(claimed.map((w) => w.queueId));
    } catch (err) {
      // The store is unreachable: the polls fail as any request would (500), and the clients poll again.
      for (const w of claimed) w.sink.failed(err);
      return;
    }
    for (let i = 0; i < claimed.length; i++) claimed[i]!.sink.answered(jsons[i]!, claimed[i]!.queueId);
  }

  private finishNow(local: LocalQueueOps, w: Waiter): void {
    if (this.waiters.get(w.queueId) !== w) return;
    this.waiters.delete(w.queueId);
    w.sink.answered(local.pendingJsonNow(w.queueId), w.queueId);
  }

  private failWaiter(queueId: string): void {
    const w = this.waiters.get(queueId);
    if (!w) return;
    this.waiters.delete(queueId);
    w.sink.failed(badEventQueueId(queueId));
  }

  /**
   * Store notification: these queues grew, those were dropped (backlog cap).
   *
   * In process, the woken polls are answered on the next check phase of the event loop
   * (one setImmediate for all the appends of a turn), not inside the append. The events are
   * in the queues already, so a poll that arrives in between finds them pending; what waits is
   * only the writing of the parked polls' answers. The request that caused the events (a send,
   * a typing notification) is thereby answered first, in the same turn as its commit, instead of
   * after hundreds of other answers, and its client's next request comes sooner (P5:
   * docs/performance.md, "2026-12-03, afternoon"). With a shared store the polls wake on the
   * store's notification, which is already a later turn.
   */
  private wake(grown: readonly string[], dropped: readonly string[], appended?: AppendedEvents): void {
    const local = this.local;
    // Shared store: the woken polls are claimed now and read their queues in one step.
    const claimed: Waiter[] = [];
    for (let i = 0; i < grown.length; i++) {
      const id = grown[i]!;
      const w = this.waiters.get(id);
      if (w === undefined) {
        if (this.inflight.has(id)) this.inflight.set(id, true);
        continue;
      }
      if (local !== undefined) {
        if (this.woken.length === 0) setImmediate(this.answerWoken);
        this.woken.push(w);
        continue;
      }
      // Parked on an empty queue whose next id is w.next: if this append's first event has that id,
      // its events are exactly what is pending (appends are serialized in the store), no read needed.
      const json = w.next >= 0 && appended !== undefined ? appended.json(i, w.next) : undefined;
      if (json !== undefined) {
        this.waiters.delete(id);
        w.sink.answered(json, id);
      } else if (this.store.pendingJsonMany === undefined) void this.finishWaiter(w);
      else {
        this.waiters.delete(id);
        claimed.push(w);
      }
    }
    if (claimed.length > 0) void this.finishMany(claimed);
    for (const id of dropped) this.failWaiter(id);
  }

  /**
   * Fans committed deliveries out to the queues of their recipients: one
   * store append for the whole batch. The event-type filter runs before any
   * shaping; the shaped events pass the queue's remaining filters.
   */
  async dispatch(deliveries: readonly EventDelivery[]): Promise<void> {
    const batch = new Map<string, ParleyEvent[]>();
    const deactivated: number[] = [];
    // Every delivery's queues are looked up at once: with Redis, the lookups of a batch (each
    // delivery's SUNION, and for a public channel message the realm's watchers) go out together
    // and cost one round trip, not one each in turn.
    // (Awaited together, so that one failing leaves no other rejection unhandled.)
    const found = await Promise.all(
      deliveries.map((d) => Promise.all([this.store.forUsers(d.userIds), d.event.__public_stream_message === true ? this.store.watchers(d.realmId) : undefined])),
    );
    for (let k = 0; k < deliveries.length; k++) {
      const d = deliveries[k]!;
      const event = d.event;
      const clean = stripHints(event);
      const memo = new Map<string, unknown>();
      const seen = new Set<string>();
      const [targets, watching] = found[k]!;
      // Queues watching all public channels (or a narrow) see public channel messages of others.
      if (watching !== undefined && watching.length > 0) {
        const recipients = new Set(d.userIds);
        for (const w of watching) if (!recipients.has(w.userId)) targets.push(w);
      }
      for (const q of targets) {
        if (seen.has(q.id) || !wantsType(q, event.type)) continue;
        seen.add(q.id);
        for (const shaped of shapeFor({ event, clean, queue: q, userId: q.userId, memo })) {
          if (!accepts(q, shaped)) continue;
          let list = batch.get(q.id);
          if (!list) batch.set(q.id, (list = []));
          list.push(shaped);
        }
      }
      const person = event.person as { user_id?: unknown; is_active?: unknown } | undefined;
      if (event.type === 'realm_user' && event.op === 'update' && person?.is_active === false && typeof person.user_id === 'number') {
        deactivated.push(person.user_id);
      }
    }
    if (batch.size > 0) await this.store.append(batch);
    // A deactivated user's queues go (after their last events reached any parked poll).
    for (const uid of deactivated) await this.dropUser(uid);
  }

  /** Removes queues idle past their timeout (never one with a parked poll here). */
  async gc(): Promise<number> {
    const ids = await this.store.expired(this.now(), new Set(this.waiters.keys()));
    if (ids.length) await this.store.remove(ids);
    return ids.length;
  }

  /** Number of polls parked in this process. */
  get parkedPolls(): number {
    return this.waiters.size;
  }

  /**
   * Graceful shutdown, step 1: stop taking long polls and answer every parked
   * one with a heartbeat (a normal, acknowledgeable event), so clients get a
   * reply rather than a cut connection and poll again after the restart.
   */
  async drain(): Promise<void> {
    this.closing = true;
    if (this.gcTimer) clearInterval(this.gcTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    const ids = [...this.waiters.keys()];
    if (ids.length) await this.store.append(new Map(ids.map((id) => [id, [{ type: 'heartbeat' } as ParleyEvent]])));
    for (const id of ids) {
      const w = this.waiters.get(id);
      if (w) await this.finishWaiter(w);
    }
  }

  /** Step 2 (after the HTTP server closed): save queues and their pending events. */
  async persist(): Promise<number> {
    for (const off of this.unsubscribe.splice(0)) off();
    if (!this.opts.dataDir) return 0;
    const queues = await this.store.snapshot();
    fs.mkdirSync(this.opts.dataDir, { recursive: true });
    const file = path.join(this.opts.dataDir, SNAPSHOT_FILE);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ version: 1, savedAt: this.now(), queues }), { mode: 0o600 });
    fs.renameSync(tmp, file);
    this.opts.log?.info({ queues: queues.length }, 'saved event queues');
    return queues.length;
  }

  /**
   * At start: load the queues saved at the last shutdown. The file is renamed
   * to *.last once read, so a crash later never brings back stale queues.
   */
  async restore(): Promise<number> {
    if (!this.opts.dataDir) return 0;
    const file = path.join(this.opts.dataDir, SNAPSHOT_FILE);
    let raw: string;
    try {
      raw = fs.readFileSync(file, 'utf8');
    } catch {
      return 0;
    }
    fs.renameSync(file, `${file}.last`);
    try {
      const parsed = JSON.parse(raw) as { version: number; queues: SerializedQueue[] };
      if (parsed.version !== 1 || !Array.isArray(parsed.queues)) throw new Error(`unknown snapshot version ${String(parsed.version)}`);
      await this.store.restore(parsed.queues);
      this.opts.log?.info({ queues: parsed.queues.length }, 'restored event queues');
      return parsed.queues.length;
    } catch (err) {
      this.opts.log?.error({ err }, 'could not restore event queues');
      return 0;
    }
  }
}

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BusListener, EventBus } from './bus.js';
import type { EventDelivery } from './types.js';

/**
 * The event bus of several processes. publish() (called once per action,
 * after its commit) first runs this process's listeners with origin 'local'
 * (the event queues append to the shared Redis store there, so the events
 * are in Redis before the action's response is sent), then publishes the
 * batch on a Redis channel; every other process runs its listeners with
 * origin 'remote'. The event queues ignore remote batches (the publisher
 * already appended them); per-process caches (profile data, the presence
 * directory) use them to forget what changed elsewhere.
 *
 * The same message carries cache invalidation: when this process wrote to
 * users or realms since the last message (the store's write watch), the
 * message says so and every other process treats it as a write of its own
 * (auth cache, realm row cache, presence directory are dropped). Writes made
 * outside a transaction are announced by a short timer instead.
 */

interface Wire {
  readonly from: string;
  readonly deliveries: readonly EventDelivery[];
  /** users/realms were written by the sender. */
  readonly inv: boolean;
}

/** Writes not followed by a publish (outside transact()) are announced after this delay. */
const LONE_WRITE_DELAY_MS = 20;

export class RedisBus implements EventBus {
  readonly nodeId = randomUUID();
  private readonly listeners = new Set<BusListener>();
  private readonly channel: string;
  private dirty = false;
  private loneTimer: NodeJS.Timeout | undefined;
  private applyingRemote = false;
  private subscribed: Promise<void> | undefined;
  private closed = false;

  /**
   * `pub` is a command connection; `sub` a connection this bus puts in
   * subscriber mode. `onRemoteWrite` is called when another process wrote
   * users/realms; `watchWrites` registers a callback for local writes.
   */
  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    prefix: string,
    private readonly hooks: { onRemoteWrite: () => void; watchWrites: (fn: () => void) => void; log?: Logger },
  ) {
    this.channel = prefix + 'bus';
    hooks.watchWrites(() => this.localWrite());
    sub.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      let wire: Wire;
      try {
        wire = JSON.parse(message) as Wire;
      } catch {
        return;
      }
      if (wire.from === this.nodeId) return;
      void this.receive(wire);
    });
  }

  ready(): Promise<void> {
    this.subscribed ??= this.sub.subscribe(this.channel).then(() => undefined);
    return this.subscribed;
  }

  private localWrite(): void {
    if (this.applyingRemote) return;
    this.dirty = true;
    if (!this.loneTimer && !this.closed) {
      this.loneTimer = setTimeout(() => {
        this.loneTimer = undefined;
        if (this.dirty) void this.send([]).catch((err) => this.hooks.log?.error({ err }, 'cache invalidation publish failed'));
      }, LONE_WRITE_DELAY_MS);
      this.loneTimer.unref();
    }
  }

  private async receive(wire: Wire): Promise<void> {
    if (wire.inv) {
      this.applyingRemote = true;
      try {
        this.hooks.onRemoteWrite();
      } finally {
        this.applyingRemote = false;
      }
    }
    if (wire.deliveries.length === 0) return;
    for (const l of this.listeners) {
      try {
        await l(wire.deliveries, 'remote');
      } catch (err) {
        this.hooks.log?.error({ err }, 'remote event listener failed');
      }
    }
  }

  private async send(deliveries: readonly EventDelivery[]): Promise<void> {
    const inv = this.dirty;
    if (!inv && deliveries.length === 0) return;
    this.dirty = false;
    const wire: Wire = { from: this.nodeId, deliveries, inv };
    await this.pub.publish(this.channel, JSON.stringify(wire));
  }

  async publish(deliveries: readonly EventDelivery[]): Promise<void> {
    if (deliveries.length > 0) {
      const pending: Promise<void>[] = [];
      for (const l of this.listeners) {
        const r = l(deliveries, 'local');
        if (r) pending.push(r);
      }
      if (pending.length) await Promise.all(pending);
    }
    // transact() publishes after every commit, with or without events: the moment to announce its writes.
    // The action has committed: a failed broadcast is logged, not turned into an error response.
    await this.send(deliveries).catch((err) => this.hooks.log?.error({ err }, 'event broadcast failed'));
  }

  subscribe(listener: BusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.loneTimer) clearTimeout(this.loneTimer);
    if (this.dirty) await this.send([]).catch(() => undefined);
    this.listeners.clear();
  }
}

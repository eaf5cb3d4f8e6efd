import type { EventDelivery } from './types.js';

/**
 * Carries committed events to whatever holds event queues. In-process now; the
 * Redis bus implements the same interface so that several processes share it.
 * publish() is called only after the writing transaction has committed, and
 * resolves once every listener has taken the batch (for the event queues:
 * once the events are in the queues), so a client that made a change finds
 * its events in its own queue as soon as the response arrives.
 */
export type BusListener = (deliveries: readonly EventDelivery[], origin: BusOrigin) => void | Promise<void>;

/**
 * 'local': committed by this process (the event queues append these);
 * 'remote': committed by another process and broadcast by the Redis bus
 * (its event queues already appended them; per-process caches still listen).
 */
export type BusOrigin = 'local' | 'remote';

export interface EventBus {
  publish(deliveries: readonly EventDelivery[]): Promise<void>;
  /** Registers a listener; returns a function that removes it. */
  subscribe(listener: BusListener): () => void;
  close(): Promise<void>;
}

export class InProcessBus implements EventBus {
  private readonly listeners = new Set<BusListener>();
  async publish(deliveries: readonly EventDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const pending: Promise<void>[] = [];
    for (const l of this.listeners) {
      const r = l(deliveries, 'local');
      if (r) pending.push(r);
    }
    if (pending.length) await Promise.all(pending);
  }
  subscribe(listener: BusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async close(): Promise<void> {
    this.listeners.clear();
  }
}

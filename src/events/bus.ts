import type { EventDelivery } from './types.js';

/**
 * Carries committed events to whatever holds event queues. In-process now; the
 * Redis bus implements the same interface so that several processes share it.
 * publish() is called only after the writing transaction has committed.
 */
export interface EventBus {
  publish(deliveries: readonly EventDelivery[]): Promise<void>;
  /** Registers a listener; returns a function that removes it. */
  subscribe(listener: (deliveries: readonly EventDelivery[]) => void): () => void;
  close(): Promise<void>;
}

export class InProcessBus implements EventBus {
  private readonly listeners = new Set<(d: readonly EventDelivery[]) => void>();
  async publish(deliveries: readonly EventDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    for (const l of this.listeners) l(deliveries);
  }
  subscribe(listener: (d: readonly EventDelivery[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async close(): Promise<void> {
    this.listeners.clear();
  }
}

/**
 * Every event is a JSON object with a `type`; the event queue adds `id`.
 * Individual shapes are documented where they are built (domain/actions/*);
 * this type is the common envelope the bus carries.
 */
export interface ParleyEvent {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** One event and the users whose queues may receive it. */
export interface EventDelivery {
  readonly realmId: number;
  readonly event: ParleyEvent;
  readonly userIds: readonly number[];
}

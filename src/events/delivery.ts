import { EMPTY_TOPIC_FALLBACK_NAME } from '../domain/rules/limits.js';
import type { ClientCapabilities } from '../state/types.js';
import { messageMatchesNarrow, type NarrowTerm } from './narrow.js';
import type { ParleyEvent } from './types.js';

/**
 * Per-queue delivery: which queues accept an event, and how an event is
 * shaped for one queue. Events are emitted once, in their richest form;
 * everything that depends on what a client declared at registration
 * (client_gravatar, apply_markdown, capabilities, narrow) happens here, at
 * delivery, never at emit.
 *
 * Delivery hints: an emitter may put keys starting with `__` on an event.
 * Shapers read them; they are always removed before the event enters a queue.
 * Known hints:
 * - `__inaccessible_user: true` on realm_user add: not delivered to queues
 *   with the user_list_incomplete capability;
 * - `__public_stream_message: true` on message events of public channels:
 *   also delivered to the realm's queues registered with all_public_streams
 *   or a narrow (events/queues.ts dispatch), which then filter by narrow;
 * - anything a resource's own shaper needs (e.g. per-user message flags).
 */

/** What a queue was registered with; everything delivery decisions need. */
export interface QueueDescriptor {
  readonly id: string;
  readonly userId: number;
  readonly realmId: number;
  /** null: every event type. */
  readonly eventTypes: readonly string[] | null;
  readonly narrow: readonly NarrowTerm[];
  readonly capabilities: ClientCapabilities;
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly slimPresence: boolean;
  readonly allPublicStreams: boolean;
  readonly includeSubscribers: boolean | 'partial';
  /** The client name of the registering request (User-Agent prefix). */
  readonly clientName: string;
  /** Idle expiry, seconds (600 unless queue_lifespan_secs asked otherwise, capped at 7 days). */
  readonly timeoutSecs: number;
}

/** Everything a shaper may use for one (event, queue) pair. */
export interface ShapeContext {
  /** The event as emitted, hints included. */
  readonly event: ParleyEvent;
  /** The event without hints (one shared object per delivery: return it as is when nothing changes). */
  readonly clean: ParleyEvent;
  readonly queue: QueueDescriptor;
  /** The recipient the delivery named (the queue's owner). */
  readonly userId: number;
  /** Per-delivery memo, so a shaper builds each variant once for all queues (e.g. keyed by apply_markdown). */
  readonly memo: Map<string, unknown>;
}

/** Returns the event(s) this queue gets instead (none, one or several). */
export type Shaper = (ctx: ShapeContext) => ParleyEvent | readonly ParleyEvent[] | null;

const shapers = new Map<string, Shaper>();

/**
 * Registers the shaper for an event type (one per type; a later call
 * replaces an earlier one). The messages resource registers 'message'
 * (apply_markdown, client_gravatar, per-user flags from a hint), for example.
 */
export function registerShaper(type: string, shaper: Shaper): void {
  shapers.set(type, shaper);
}

export function hasHints(event: ParleyEvent): boolean {
  for (const k in event) if (k.startsWith('__')) return true;
  return false;
}

/** The event without its `__` hint keys (the same object when it has none). */
export function stripHints(event: ParleyEvent): ParleyEvent {
  if (!hasHints(event)) return event;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event)) if (!k.startsWith('__')) out[k] = v;
  return out as ParleyEvent;
}

/** Shapes an event for one queue. */
export function shapeFor(ctx: ShapeContext): readonly ParleyEvent[] {
  const shaper = shapers.get(ctx.event.type);
  const out = shaper ? shaper(ctx) : ctx.clean;
  if (out === null) return [];
  return Array.isArray(out) ? (out as readonly ParleyEvent[]) : [out as ParleyEvent];
}

/** Cheap first check, before any shaping: is the type wanted at all? */
export function wantsType(q: QueueDescriptor, type: string): boolean {
  return q.eventTypes === null || q.eventTypes.includes(type);
}

/** Zulip's accepts_event: the queue's filters and capabilities, on the shaped event. */
export function accepts(q: QueueDescriptor, e: ParleyEvent): boolean {
  if (q.eventTypes !== null) {
    if (!q.eventTypes.includes(e.type)) return false;
    // Clients that understand user_topic ask for both and get muted_topics only from older servers.
    if (e.type === 'muted_topics' && q.eventTypes.includes('user_topic')) return false;
  }
  switch (e.type) {
    case 'message':
      return messageMatchesNarrow(q.narrow, e.message, e.flags);
    case 'typing':
      // Channel typing reaches only clients that declared they understand it.
      return 'stream_id' in e ? q.capabilities.stream_typing_notifications : true;
    case 'update_display_settings':
    case 'update_global_notifications':
      return !q.capabilities.user_settings_object;
    case 'user_group':
      if (e.op === 'remove') return !q.capabilities.include_deactivated_groups;
      if (e.op === 'update' && e.data && typeof e.data === 'object' && 'deactivated' in e.data) return q.capabilities.include_deactivated_groups;
      return true;
    default:
      return true;
  }
}

// ---- built-in shapers: per-queue capabilities of event types emitted by several resources ----

const isGravatar = (url: unknown): boolean => typeof url === 'string' && url.startsWith('https://secure.gravatar.com/');

/**
 * realm_user add: a client with client_gravatar computes gravatar URLs
 * itself for users whose real email is their API email (visible to
 * everyone), as /register presents realm_users; clients with
 * user_list_incomplete get no add events for users they cannot access.
 */
registerShaper('realm_user', ({ event, clean, queue, memo }) => {
  if (event.op !== 'add') return clean;
  if (event.__inaccessible_user === true && queue.capabilities.user_list_incomplete) return null;
  const person = clean.person as Record<string, unknown> | undefined;
  // Only addresses visible to everyone are the API email itself, from which the client computes the URL.
  const computable = person && person.delivery_email != null && person.email === person.delivery_email;
  if (!queue.clientGravatar || !computable || !isGravatar(person.avatar_url)) return clean;
  let nulled = memo.get('gravatar') as ParleyEvent | undefined;
  if (!nulled) {
    nulled = { ...clean, person: { ...person, avatar_url: null } };
    memo.set('gravatar', nulled);
  }
  return nulled;
});

/** Channel typing: the empty topic is shown as "general chat" to clients without empty_topic_name. */
registerShaper('typing', ({ clean, queue }) => {
  if ('stream_id' in clean && clean.topic === '' && !queue.capabilities.empty_topic_name) {
    return { ...clean, topic: EMPTY_TOPIC_FALLBACK_NAME };
  }
  return clean;
});

/** Clients without bulk_message_deletion get one delete_message event per message id. */
registerShaper('delete_message', ({ clean, queue }) => {
  let e = clean;
  if (e.topic === '' && !queue.capabilities.empty_topic_name) e = { ...e, topic: EMPTY_TOPIC_FALLBACK_NAME };
  if (queue.capabilities.bulk_message_deletion || !Array.isArray(e.message_ids)) return e;
  return (e.message_ids as number[]).map((id) => {
    const { message_ids: _ids, ...rest } = e;
    return { ...rest, message_id: id } as ParleyEvent;
  });
});

/** realm_emoji: clients with individual_emoji_changes get the one change (add / update_one), not the whole set. */
registerShaper('realm_emoji', ({ event, clean, queue }) =>
  queue.capabilities.individual_emoji_changes && event.__individual && typeof event.__individual === 'object' ? (event.__individual as ParleyEvent) : clean,
);

// presence: state/presence.ts registers its shaper (slim_presence, simplified_presence_events); it is loaded
// with the state modules wherever queues exist (app.ts -> http routes -> state/register.ts).

/** user_topic: the empty topic as "general chat" for clients without empty_topic_name. */
registerShaper('user_topic', ({ clean, queue }) =>
  clean.topic_name === '' && !queue.capabilities.empty_topic_name ? { ...clean, topic_name: EMPTY_TOPIC_FALLBACK_NAME } : clean,
);

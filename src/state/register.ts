import type { AppCtx, Caller } from '../domain/context.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../domain/version.js';
import type { NarrowTerm } from '../events/narrow.js';
import type { ParleyEvent } from '../events/types.js';
import { userById, type UserRow } from '../store/users.js';
import { peekRealmCache } from './realm-cache.js';
import { stateModules } from './modules.js';
import { materializeState, stringifyWithFragments } from './json-fragment.js';
import type { ClientCapabilities, ClientView, RegisterContext, StateModule } from './types.js';

/**
 * POST /register: the mechanism that builds a client's initial state from
 * the StateModule list (state/modules.ts) and keeps it consistent with the
 * queue it returns.
 *
 * Order matters: the queue is created first, then the state is read, then
 * the events that reached the queue meanwhile are applied to that state by
 * the modules' apply(). A change racing with registration is therefore
 * either in the state already (applying its event again is idempotent) or
 * applied from its event; last_event_id tells the client where to resume.
 */

export const NO_CAPABILITIES: ClientCapabilities = {
  notification_settings_null: false,
  bulk_message_deletion: false,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: false,
  user_settings_object: false,
  linkifier_url_template: false,
  user_list_incomplete: false,
  include_deactivated_groups: false,
  archived_channels: false,
  empty_topic_name: false,
  simplified_presence_events: false,
  individual_emoji_changes: false,
};

export interface RegisterOptions {
  /** Event types the queue receives; null for all. */
  readonly eventTypes: readonly string[] | null;
  /** Initial-state types; null falls back to eventTypes (null again: everything). */
  readonly fetchEventTypes: readonly string[] | null;
  readonly narrow: readonly NarrowTerm[];
  readonly allPublicStreams: boolean;
  readonly includeSubscribers: boolean | 'partial';
  readonly capabilities: ClientCapabilities;
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly slimPresence: boolean;
  readonly lifespanSecs: number;
  readonly clientName: string;
  /** presence_history_limit_days / presence_last_update_id (the presence module's window and resumption point). */
  readonly presenceHistoryDays?: number;
  readonly presenceLastUpdateId?: number;
}

/** The per-client view state modules present for (and apply events with). */
export function clientView(user: Caller, o: Pick<RegisterOptions, 'narrow' | 'allPublicStreams' | 'includeSubscribers' | 'capabilities' | 'applyMarkdown' | 'clientGravatar' | 'slimPresence'>): ClientView {
  return {
    user,
    capabilities: o.capabilities,
    applyMarkdown: o.applyMarkdown,
    clientGravatar: o.clientGravatar,
    includeSubscribers: o.includeSubscribers,
    slimPresence: o.slimPresence,
    allPublicStreams: o.allPublicStreams,
    narrow: o.narrow.map(([operator, operand]) => ({ operator, operand })),
  };
}

/** The fetch types asked for: fetch_event_types, else event_types, else null (everything). */
export function effectiveFetchTypes(eventTypes: readonly string[] | null, fetchEventTypes: readonly string[] | null): readonly string[] | null {
  return fetchEventTypes ?? eventTypes;
}

export function wantFn(fetchTypes: readonly string[] | null): (t: string) => boolean {
  if (fetchTypes === null) return () => true;
  const set = new Set(fetchTypes);
  return (t) => set.has(t);
}

/** The modules that contribute: any of their fetchTypes asked for, or nothing specified. */
export function modulesFor(fetchTypes: readonly string[] | null, modules: readonly StateModule[] = stateModules): StateModule[] {
  const want = wantFn(fetchTypes);
  return modules.filter((m) => m.fetchTypes.some(want));
}

/** Reads every contributing module's keys, merged in list order. */
export async function fetchState(ctx: RegisterContext, modules: readonly StateModule[]): Promise<Record<string, unknown>> {
  const parts = await Promise.all(modules.map((m) => m.fetch(ctx)));
  return Object.assign({}, ...parts) as Record<string, unknown>;
}

/** Applies events to a state with the modules that contributed to it (each event to the modules that handle its type). */
export function applyEvents(state: Record<string, unknown>, events: readonly ParleyEvent[], view: ClientView, modules: readonly StateModule[]): void {
  for (const event of events) {
    for (const m of modules) if (m.eventTypes.includes(event.type)) m.apply(state, event, view);
  }
}

/** Same, choosing the modules from the client's fetch types (what the consistency tests use). */
export function applyEventsForClient(
  state: Record<string, unknown>,
  events: readonly ParleyEvent[],
  view: ClientView,
  fetchTypes: readonly string[] | null,
): void {
  applyEvents(state, events, view, modulesFor(fetchTypes));
}

/**
 * Registers a queue for the caller and returns the whole /register payload:
 * queue_id, last_event_id, the version triple and every contributing module's keys.
 */
export async function registerClient(app: AppCtx, caller: Caller, o: RegisterOptions): Promise<Record<string, unknown>> {
  return registerAnswer(app, caller, o, false);
}

/**
 * The same answer as registerClient, serialized: JSON.stringify of it, with
 * the state keys that modules returned serialized (realm-wide parts kept per
 * realm generation) spliced in rather than built and serialized again.
 */
export async function registerClientJson(app: AppCtx, caller: Caller, o: RegisterOptions): Promise<string> {
  return stringifyWithFragments(await registerAnswer(app, caller, o, true));
}

async function registerAnswer(app: AppCtx, caller: Caller, o: RegisterOptions, jsonFragments: boolean): Promise<Record<string, unknown>> {
  const queue = await app.queues.register({
    userId: caller.id,
    realmId: caller.realmId,
    eventTypes: o.eventTypes,
    narrow: o.narrow,
    capabilities: o.capabilities,
    applyMarkdown: o.applyMarkdown,
    clientGravatar: o.clientGravatar,
    slimPresence: o.slimPresence,
    allPublicStreams: o.allPublicStreams,
    includeSubscribers: o.includeSubscribers,
    clientName: o.clientName,
    lifespanSecs: o.lifespanSecs,
  });
  const fetchTypes = effectiveFetchTypes(o.eventTypes, o.fetchEventTypes);
  const modules = modulesFor(fetchTypes);
  // Read after the queue exists: anything committed later is in the queue. The realm cache's
  // users, when current (its generation is taken now, after the queue), hold the same row.
  const shared = new Map<string, Promise<unknown>>();
  const cachedUsers = peekRealmCache<readonly UserRow[]>({ app, user: caller, shared }, 'users');
  const userRow = (cachedUsers && (await cachedUsers).find((u) => u.id === caller.id)) ?? (await userById(app.db, caller.realmId, caller.id))!;
  const view = clientView(caller, o);
  const ctx: RegisterContext = {
    ...view,
    app,
    userRow,
    want: wantFn(fetchTypes),
    presence: { historyDays: o.presenceHistoryDays, lastUpdateId: o.presenceLastUpdateId },
    shared,
    jsonFragments,
  };
  const state = await fetchState(ctx, modules);
  const raced = await app.queues.pending(queue.id);
  // Events that reached the queue meanwhile change the state as objects (rare: then nothing is spliced).
  if (raced.length || !jsonFragments) materializeState(state);
  applyEvents(
    state,
    raced.map((q) => q.event),
    view,
    modules,
  );
  return {
    queue_id: queue.id,
    zulip_version: ZULIP_VERSION,
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_merge_base: ZULIP_MERGE_BASE,
    ...state,
    last_event_id: raced.length ? raced[raced.length - 1]!.id : -1,
  };
}

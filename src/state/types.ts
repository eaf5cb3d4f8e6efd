import type { AppCtx, Caller } from '../domain/context.js';
import type { ParleyEvent } from '../events/types.js';
import type { UserRow } from '../store/users.js';

/** client_capabilities of POST /register (all default false except where Zulip defaults true). */
export interface ClientCapabilities {
  readonly notification_settings_null: boolean;
  readonly bulk_message_deletion: boolean;
  readonly user_avatar_url_field_optional: boolean;
  readonly stream_typing_notifications: boolean;
  readonly user_settings_object: boolean;
  readonly linkifier_url_template: boolean;
  readonly user_list_incomplete: boolean;
  readonly include_deactivated_groups: boolean;
  readonly archived_channels: boolean;
  readonly empty_topic_name: boolean;
  readonly simplified_presence_events: boolean;
  /** realm_emoji add / update_one events instead of the whole set (Zulip 12; the mobile app sends it). */
  readonly individual_emoji_changes: boolean;
}

/** What a queue (and the /register call that created it) asked for. */
export interface ClientView {
  readonly user: Caller;
  readonly capabilities: ClientCapabilities;
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly includeSubscribers: boolean | 'partial';
  readonly slimPresence: boolean;
  readonly allPublicStreams: boolean;
  /** The narrow of the queue, in the object form [{operator, operand, negated?}], [] for all. */
  readonly narrow: readonly { operator: string; operand: unknown; negated?: boolean }[];
}

export interface RegisterContext extends ClientView {
  readonly app: AppCtx;
  /** The user's row as read after the queue was created (never an older cached copy). */
  readonly userRow: UserRow;
  /**
   * Whether a fetch_event_types name was asked for (always true when the
   * client named none). Modules use it for keys that depend on one of several
   * names, e.g. the legacy settings keys of update_display_settings.
   */
  readonly want: (fetchType: string) => boolean;
  /** presence_history_limit_days and presence_last_update_id of POST /register (undefined: not given). */
  readonly presence?: { readonly historyDays?: number; readonly lastUpdateId?: number };
  /**
   * Whether modules may return values already serialized (state/json-fragment.ts), which
   * registerClient splices into the answer or parses; absent: plain values.
   */
  readonly jsonFragments?: boolean;
  /** Reads shared by the modules of one registration (state/shared.ts); absent: each module reads on its own. */
  readonly shared?: Map<string, Promise<unknown>>;
}

/**
 * One resource's part of POST /register: the state keys it contributes and
 * how its events change that state. Each resource adds one module to the
 * list in state/modules.ts. A test checks, for every action, that applying
 * its events to a stale state gives the same result as a fresh fetch.
 */
export interface StateModule {
  /** The fetch_event_types names that ask for this module's keys (e.g. ['alert_words']). */
  readonly fetchTypes: readonly string[];
  /** Reads the module's keys for this client. */
  fetch(ctx: RegisterContext): Promise<Record<string, unknown>>;
  /** Event types this module applies (e.g. ['alert_words']); others are ignored. */
  readonly eventTypes: readonly string[];
  /** Applies one event to the state in place (used at registration and by the consistency test). */
  apply(state: Record<string, unknown>, event: ParleyEvent, view: ClientView): void;
}

export type { ParleyEvent };

import { PRESENCE_OFFLINE_THRESHOLD_SECS, PRESENCE_PING_INTERVAL_SECS } from './limits.js';

/**
 * Presence rules (Zulip's zerver/actions/presence.py, zerver/lib/presence.py
 * and zproject/default_settings.py). Times are unix seconds.
 */

/** A stored timestamp is only moved when the new report is at least this much newer (fewer writes). */
export const PRESENCE_UPDATE_MIN_FREQ_SECS = 55;
/** For the legacy format: "active" when the last activity is within this of the last connection. */
export const PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECS = 70;
/** Above this many active users, a user coming online sends no presence event (clients poll instead). */
export const USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS = 100;
/** Presence older than this many days is left out unless the client asks otherwise. */
export const DEFAULT_PRESENCE_HISTORY_DAYS = 14;
/**
 * A user counts as newly online (and others get an immediate event) when
 * their last activity is older than this: they missed regular check-ins and
 * are at risk of being shown offline before the next one.
 */
export const NEWLY_ONLINE_AFTER_SECS = PRESENCE_OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10;
/** Turning presence sharing off makes the user look last online this long ago (offline, with a margin). */
export const PRESENCE_DISABLED_BACKDATE_SECS = PRESENCE_OFFLINE_THRESHOLD_SECS + 120;

export type PresenceStatus = 'active' | 'idle';

/** One user's presence as stored. */
export interface PresenceEntry {
  /** null: never active (presented as the user's date_joined). */
  lastActive: number | null;
  lastConnected: number;
  /** Realm sequence value of the last change. */
  lastUpdateId: number;
}

export interface PresenceChange {
  readonly entry: PresenceEntry;
  /** The entry changed (it gets a new update id and must be written). */
  readonly changed: boolean;
  /** No entry existed before. */
  readonly created: boolean;
  /** An "active" report from a user whose last activity was long ago. */
  readonly becameOnline: boolean;
}

/**
 * Zulip's do_update_user_presence, without storage: how a report at
 * `logTime` changes the entry. `lastUpdateId` is left for the caller to set
 * when `changed`.
 */
export function applyPresenceReport(existing: PresenceEntry | undefined, status: PresenceStatus, logTime: number): PresenceChange {
  const active = status === 'active';
  if (!existing) {
    const entry = { lastActive: active ? logTime : null, lastConnected: logTime, lastUpdateId: 0 };
    return { entry, changed: true, created: true, becameOnline: active };
  }
  const sinceActive = existing.lastActive === null ? 86400 : logTime - existing.lastActive;
  const sinceConnected = logTime - existing.lastConnected;
  const becameOnline = active && sinceActive > NEWLY_ONLINE_AFTER_SECS;
  const entry = { ...existing };
  let changed = false;
  // Several open windows report every minute each; only one write per interval.
  if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECS) {
    entry.lastConnected = logTime;
    changed = true;
  }
  if (active && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECS) {
    entry.lastActive = logTime;
    changed = true;
    // Keep last_connected_time >= last_active_time.
    if (logTime > entry.lastConnected) entry.lastConnected = logTime;
  }
  return { entry, changed, created: false, becameOnline };
}

export function statusFromString(s: string): PresenceStatus | null {
  return s === 'active' || s === 'idle' ? s : null;
}

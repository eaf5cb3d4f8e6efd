import { PRESENCE_OFFLINE_THRESHOLD_SECS } from '../domain/rules/limits.js';
import { PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECS, type PresenceEntry } from '../domain/rules/presence.js';

/**
 * Presence in Zulip's two wire formats (zerver/lib/presence.py):
 * - modern (slim_presence, last_update_id): keyed by user id,
 *   {active_timestamp, idle_timestamp};
 * - legacy: keyed by API email, one "website" client entry plus an
 *   `aggregated` copy of it (Zulip keeps a single record per user now; the
 *   client name is always "website").
 * A never-active user's activity time is their date_joined.
 */

export interface ModernPresence {
  readonly active_timestamp: number;
  readonly idle_timestamp: number;
}

export interface LegacyClientPresence {
  readonly client: 'website';
  readonly status: 'active' | 'idle';
  readonly timestamp: number;
  readonly pushable: false;
}

export interface LegacyPresence {
  readonly website: LegacyClientPresence;
  readonly aggregated: { readonly client: 'website'; readonly status: 'active' | 'idle'; readonly timestamp: number };
}

const activeTime = (e: PresenceEntry, dateJoined: number): number => e.lastActive ?? dateJoined;

export function modernPresence(e: PresenceEntry, dateJoined: number): ModernPresence {
  return { active_timestamp: activeTime(e, dateJoined), idle_timestamp: e.lastConnected };
}

/** Zulip's format_legacy_presence_dict. */
export function legacyClientPresence(e: PresenceEntry, dateJoined: number): LegacyClientPresence {
  const active = activeTime(e, dateJoined);
  if (active + PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECS >= e.lastConnected) {
    return { client: 'website', status: 'active', timestamp: active, pushable: false };
  }
  return { client: 'website', status: 'idle', timestamp: e.lastConnected, pushable: false };
}

export function legacyPresence(e: PresenceEntry, dateJoined: number): LegacyPresence {
  const website = legacyClientPresence(e, dateJoined);
  return { website, aggregated: { client: 'website', status: website.status, timestamp: website.timestamp } };
}

/**
 * GET /users/{user}/presence in the legacy format: no client or pushable
 * keys, and the aggregated status "offline" past the offline threshold.
 */
export function singleUserLegacyPresence(e: PresenceEntry, dateJoined: number, now: number): Record<string, { status: string; timestamp: number }> {
  const { status, timestamp } = legacyClientPresence(e, dateJoined);
  const aggregated = now - timestamp > PRESENCE_OFFLINE_THRESHOLD_SECS ? 'offline' : status;
  return { website: { status, timestamp }, aggregated: { status: aggregated, timestamp } };
}

/**
 * Length limits and protocol timings that POST /register hands to clients
 * (api.md "Limits"; values as Zulip's models and default settings have them).
 * Resources that enforce a limit import it from here so the two never differ.
 */
export const MAX_STREAM_NAME_LENGTH = 60;
export const MAX_STREAM_DESCRIPTION_LENGTH = 1024;
export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10_000;
export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
export const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;
export const MAX_REMINDER_NOTE_LENGTH = 1000;
export const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100;
export const MAX_AVATAR_FILE_SIZE_MIB = 5;
export const MAX_ICON_FILE_SIZE_MIB = 5;
export const MAX_LOGO_FILE_SIZE_MIB = 5;
export const MAX_FILE_UPLOAD_SIZE_MIB = 25;
export const MAX_ALERT_WORD_LENGTH = 100;

/** Typing protocol (zproject/default_settings.py). */
export const TYPING_STARTED_EXPIRY_PERIOD_MS = 45_000;
export const TYPING_STOPPED_WAIT_PERIOD_MS = 12_000;
export const TYPING_STARTED_WAIT_PERIOD_MS = 30_000;
/** Channels with more subscribers than this get no typing notifications. */
export const MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

export const PRESENCE_PING_INTERVAL_SECS = 60;
export const PRESENCE_OFFLINE_THRESHOLD_SECS = 200;

/** The fallback shown for the empty topic to clients without the empty_topic_name capability. */
export const EMPTY_TOPIC_FALLBACK_NAME = 'general chat';

/** Password policy reported to clients (the strength check is in credentials.ts). */
export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MAX_LENGTH = 100;
export const PASSWORD_MIN_GUESSES = 10_000;

/**
 * Clients use this as the HTTP timeout of GET /events; it must exceed the
 * longest heartbeat wait (Zulip: 90 s against 45-55 s heartbeats).
 */
export function longpollTimeoutSeconds(heartbeatMinMs: number, heartbeatJitterMs: number): number {
  return Math.max(90, Math.ceil((heartbeatMinMs + heartbeatJitterMs) / 1000) + 35);
}

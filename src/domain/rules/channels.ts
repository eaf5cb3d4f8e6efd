import { badRequest, JsonableError } from '../errors.js';
import type { SettingRules } from './group-settings.js';

/** Zulip's Stream.MAX_NAME_LENGTH and MAX_DESCRIPTION_LENGTH. */
export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;
/** Zulip's MAX_TOPIC_NAME_LENGTH. */
export const MAX_TOPIC_LENGTH = 60;

/** Recipient types, as Zulip numbers them (messages add 1 personal and 3 group DMs). */
export const RECIPIENT_PERSONAL = 1;
export const RECIPIENT_CHANNEL = 2;
export const RECIPIENT_DIRECT_GROUP = 3;

// Zulip's 66 Unicode non-characters: U+FDD0..U+FDEF and the last two code points of every plane.
function isNonCharacter(cp: number): boolean {
  return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe;
}

/** 1-based position of the first character Zulip deems unprintable (Cc, Cs, non-characters), or null. */
export function firstUnprintable(s: string): number | null {
  let pos = 0;
  for (const ch of s) {
    pos++;
    const cp = ch.codePointAt(0)!;
    if (/\p{Cc}/u.test(ch) || (cp >= 0xd800 && cp <= 0xdfff) || isNonCharacter(cp)) return pos;
  }
  return null;
}

/** Zulip's check_stream_name. Length counts code points, as Python does. */
export function checkChannelName(name: string): void {
  if (name.trim() === '') throw badRequest("Channel name can't be empty.");
  if ([...name].length > MAX_CHANNEL_NAME_LENGTH) {
    throw badRequest(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  }
  const bad = firstUnprintable(name);
  if (bad !== null) throw badRequest(`Invalid character in channel name, at position ${bad}.`);
}

/** Channel descriptions are one line: Zulip turns newlines into spaces. */
export function normalizeChannelDescription(description: string): string {
  return description.replace(/\n/g, ' ');
}

/** Zulip's check_stream_topic (used for topic preferences). */
export function checkTopicCharacters(topic: string): void {
  const bad = firstUnprintable(topic);
  if (bad !== null) throw badRequest(`Invalid character in topic, at position ${bad}!`);
}

export const TOPICS_POLICIES = ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];

export function parseTopicsPolicy(value: string): TopicsPolicy {
  if (!(TOPICS_POLICIES as readonly string[]).includes(value)) throw badRequest('Invalid topics_policy');
  return value as TopicsPolicy;
}

/** The policy that applies to a channel: its own, or the realm's when it inherits. */
export function effectiveTopicsPolicy(channelPolicy: string, realmPolicy: string): Exclude<TopicsPolicy, 'inherit'> {
  return (channelPolicy === 'inherit' ? realmPolicy : channelPolicy) as Exclude<TopicsPolicy, 'inherit'>;
}

/**
 * message_retention_days as Zulip parses it: "realm_default" (null, the
 * organization's setting), "unlimited" (-1) or a positive number of days.
 */
export function parseRetentionDays(value: number | string): number | null {
  if (value === 'realm_default') return null;
  if (value === 'unlimited') return -1;
  if (typeof value === 'string' || !Number.isInteger(value) || value <= 0) {
    throw new JsonableError(`Bad value for 'message_retention_days': ${String(value)}`, { code: 'REQUEST_VARIABLE_INVALID' });
  }
  return value;
}

/**
 * A channel permission setting: its default (a system group name, or
 * 'channel_creator' for an anonymous group holding the creator) and which
 * system groups it may not be set to. Settings with allowEveryone false are
 * never held by guests, whatever their value (Zulip's allow_everyone_group).
 */
export interface ChannelPermissionSetting {
  readonly defaultGroup: string;
  readonly allowEveryone: boolean;
  readonly rules: SettingRules;
  /** Changing it on an existing channel also needs content access. */
  readonly needsContentAccess: boolean;
  /** Membership grants metadata access to a private channel. */
  readonly grantsMetadataAccess: boolean;
}

const everyoneOk = (defaultGroup: string, needsContentAccess = false): ChannelPermissionSetting => ({
  defaultGroup,
  allowEveryone: true,
  rules: { disallowed: ['role:internet'] },
  needsContentAccess,
  grantsMetadataAccess: false,
});
const noEveryone = (defaultGroup: string): ChannelPermissionSetting => ({
  defaultGroup,
  allowEveryone: false,
  rules: { disallowed: ['role:internet', 'role:everyone'] },
  needsContentAccess: false,
  grantsMetadataAccess: true,
});

/** Zulip's Stream.stream_permission_group_settings, in its (alphabetical) order. */
export const CHANNEL_PERMISSION_SETTINGS = {
  can_add_subscribers_group: noEveryone('role:nobody'),
  can_administer_channel_group: noEveryone('channel_creator'),
  can_create_topic_group: everyoneOk('role:everyone'),
  can_delete_any_message_group: everyoneOk('role:nobody', true),
  can_delete_own_message_group: everyoneOk('role:nobody', true),
  can_move_messages_out_of_channel_group: everyoneOk('role:nobody', true),
  can_move_messages_within_channel_group: everyoneOk('role:nobody', true),
  can_remove_subscribers_group: everyoneOk('role:administrators'),
  can_resolve_topics_group: everyoneOk('role:nobody', true),
  can_send_message_group: everyoneOk('role:everyone'),
  can_subscribe_group: noEveryone('role:nobody'),
} as const satisfies Record<string, ChannelPermissionSetting>;

export type ChannelPermissionName = keyof typeof CHANNEL_PERMISSION_SETTINGS;
export const CHANNEL_PERMISSION_NAMES = Object.keys(CHANNEL_PERMISSION_SETTINGS) as ChannelPermissionName[];
export const settingColumn = (name: ChannelPermissionName) => `${name}_id` as const;

/** Zulip's Stream.SYSTEM_GROUPS_ENUM_MAP: the legacy stream_post_policy of can_send_message_group. */
export function streamPostPolicy(sendGroupName: string | null): number {
  switch (sendGroupName) {
    case 'role:administrators':
      return 2;
    case 'role:fullmembers':
      return 3;
    case 'role:moderators':
      return 4;
    default:
      return 1;
  }
}

/** Zulip's STREAM_ASSIGNMENT_COLORS. */
export const CHANNEL_COLORS = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5',
  '#f5ce6e', '#c2726a', '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063',
  '#9987e1', '#e4523d', '#c2c2c2', '#4f8de4', '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
] as const;

/** Zulip's pick_colors for one user: the first unused palette colour, else one chosen by recipient id. */
export function pickColor(used: ReadonlySet<string>, recipientId: number): string {
  const free = CHANNEL_COLORS.find((c) => !used.has(c));
  return free ?? CHANNEL_COLORS[recipientId % CHANNEL_COLORS.length]!;
}

/** Zulip's check_color: #rgb to #rrggbb-style hex. */
export const isHexColor = (s: string): boolean => /^#([a-fA-F0-9]{3,6})$/.test(s);

/** Topic preference values (UserTopic.VisibilityPolicy). */
export const VISIBILITY_INHERIT = 0;
export const VISIBILITY_MUTED = 1;
export const VISIBILITY_UNMUTED = 2;
export const VISIBILITY_FOLLOWED = 3;

/**
 * The first time (seconds) at or after which weeklyTraffic(dateCreated, t) with no
 * message count may differ from its value at `now`: until then a presented
 * channel's stream_weekly_traffic is the same (state/shared.ts caches the
 * presented channels by it). With no message count the value is null below a
 * week of age and 0 from then on, so the only change is at the week.
 * Keep in step with weeklyTraffic (a unit test checks the two agree).
 */
export function weeklyTrafficStableUntil(dateCreated: number, now: number): number {
  const week = dateCreated + 7 * 86400;
  return now < week ? week : Infinity;
}

/** Average weekly traffic as Zulip reports it: null for channels younger than a week. */
export function weeklyTraffic(dateCreated: number, now: number, messagesLast28Days = 0): number | null {
  const ageDays = Math.floor((now - dateCreated) / 86400);
  let avg: number;
  if (ageDays >= 28) avg = Math.floor(messagesLast28Days / 4);
  else if (ageDays >= 7) avg = Math.floor((messagesLast28Days * 7) / ageDays);
  else return null;
  if (avg === 0 && messagesLast28Days > 0) avg = 1;
  const digits = String(avg).length;
  const factor = 10 ** Math.max(0, digits - 2);
  return Math.round(avg / factor) * factor;
}

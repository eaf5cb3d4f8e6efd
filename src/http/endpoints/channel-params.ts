import { z } from 'zod';
import { Param, p } from '../params.js';
import { badRequest } from '../../domain/errors.js';
import { CHANNEL_PERMISSION_NAMES, MAX_CHANNEL_DESCRIPTION_LENGTH, parseTopicsPolicy, type ChannelPermissionName, type TopicsPolicy } from '../../domain/rules/channels.js';
import type { GroupSettingValue } from '../../domain/rules/group-settings.js';

/** Wire shapes shared by the channel endpoints. */

export const groupSettingValue = z.union([
  z.int(),
  z.object({ direct_members: z.array(z.int()), direct_subgroups: z.array(z.int()) }),
]);

/**
 * Ids that no 32-bit column can hold are refused here with the message the
 * lookup would give, before they reach a query.
 */
export function checkGroupValueIds(value: GroupSettingValue): void {
  const ok = (n: number) => Number.isSafeInteger(n) && n > 0 && n <= 2147483647;
  if (typeof value === 'number') {
    if (!ok(value)) throw badRequest('Invalid user group');
    return;
  }
  const m = value.direct_members.find((n) => !ok(n));
  if (m !== undefined) throw badRequest(`Invalid user ID: ${m}`);
  const g = value.direct_subgroups.find((n) => !ok(n));
  if (g !== undefined) throw badRequest(`Invalid user group ID: ${g}`);
}

/** PATCH's {new, old?} form (Zulip's GroupSettingChangeRequest). */
export const groupSettingChange = z.object({ new: groupSettingValue, old: groupSettingValue.optional() });
export type GroupSettingChange = z.output<typeof groupSettingChange>;

export const createGroupParams = Object.fromEntries(
  CHANNEL_PERMISSION_NAMES.map((n) => [n, p.json(groupSettingValue).optional()]),
) as Record<ChannelPermissionName, Param<GroupSettingValue | undefined>>;

export const changeGroupParams = Object.fromEntries(
  CHANNEL_PERMISSION_NAMES.map((n) => [n, p.json(groupSettingChange).optional()]),
) as Record<ChannelPermissionName, Param<GroupSettingChange | undefined>>;

/** A description: raw string, at most 1024 characters. */
export const descriptionParam = (): Param<string> => p.str(z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH));

/**
 * topics_policy: Zulip reads it JSON-encoded on create and subscribe, raw on
 * PATCH; clients send both forms, so both are accepted everywhere.
 */
export const topicsPolicyParam = (): Param<string> => p.str();
export function readTopicsPolicy(raw: string): TopicsPolicy {
  let value = raw;
  if (raw.startsWith('"')) {
    try {
      value = JSON.parse(raw) as string;
    } catch {
      throw badRequest('topics_policy is not valid JSON');
    }
    if (typeof value !== 'string') throw badRequest('Invalid topics_policy');
  }
  return parseTopicsPolicy(value);
}

/** message_retention_days: a JSON integer, or "realm_default"/"unlimited" (quoted or not). */
export const retentionParam = (): Param<string> => p.str();
export function readRetention(raw: string): number | string {
  const trimmed = raw.trim();
  if (/^-?\d+$/.test(trimmed)) return Number(trimmed);
  if (trimmed.startsWith('"')) {
    try {
      const v = JSON.parse(trimmed) as unknown;
      if (typeof v === 'string' || typeof v === 'number') return v;
    } catch {
      /* fall through */
    }
  }
  return trimmed;
}

/** principals / subscribers: a JSON list of user ids or of emails. */
export const principalsSchema = z.union([z.array(z.int()), z.array(z.string())]);

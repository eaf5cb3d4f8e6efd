import { sql } from 'kysely';
import { z } from 'zod';
import { doChangeFullName } from '../../domain/actions/users.js';
import {
  doChangeUserSetting,
  doStartEmailChange,
  emailChangesDisabled,
  nameTakenInRealm,
} from '../../domain/actions/user-settings.js';
import { transact } from '../../domain/context.js';
import { adminRequired, badRequest, notForBots, rateLimited } from '../../domain/errors.js';
import { hashPassword, isStrongPassword, verifyPassword } from '../../domain/rules/credentials.js';
import { realmEmailProblem } from '../../domain/rules/email-policy.js';
import { isAvailableLanguage } from '../../domain/rules/languages.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import {
  isValidTimezone,
  MAX_EMAIL_BATCHING_PERIOD_SECONDS,
  NOTIFICATION_SOUNDS,
  SECURITY_SENSITIVE_SETTINGS,
  USER_SETTINGS,
  userSettings,
  type SettingValue,
} from '../../domain/rules/user-settings.js';
import { checkFullName, isAdminRole, isValidEmail } from '../../domain/rules/users.js';
import { realmById } from '../../store/realms.js';
import { selfEditedUserIds } from '../../store/user-settings.js';
import { userByEmail, type UserRow } from '../../store/users.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p, type Param } from '../params.js';

/**
 * PATCH /settings (api.md endpoint 1, behaviour-a §1) and its deprecated
 * aliases PATCH /settings/display and /settings/notifications.
 *
 * Order, as Zulip's view: bots refused; parameters decoded (declared
 * alphabetically, so the first bad one in that order is reported);
 * target_users (admins; bulk, then return); value checks; password; email;
 * full name; settings; time zone. Everything is validated before anything is
 * written, and all writes are one transaction.
 */

const NOT_IN_LIST = 'Invalid {var}: Value error, Not in the list of possible values';

export function settingParam(name: string): Param<SettingValue | undefined> {
  const spec = USER_SETTINGS[name]!;
  if (spec.kind === 'bool') return p.bool().optional();
  if (spec.kind === 'int') return spec.values ? p.intIn(spec.values).optional() : p.int().optional();
  if (!spec.values) return p.str().optional();
  const values = spec.values;
  const message = name === 'resolved_topic_notice_auto_read_policy' ? 'Invalid {var}' : NOT_IN_LIST;
  return p.str(z.string().refine((v) => values.includes(v), { message })).optional();
}

const targetUsersSchema = z.object({
  user_ids: z.array(z.int()).default([]),
  group_ids: z.array(z.int()).default([]),
  skip_if_already_edited: z.boolean(),
});

const declared: Record<string, Param<unknown>> = {
  email: p.str().optional(),
  full_name: p.str().optional(),
  new_password: p.str().optional(),
  old_password: p.str().optional(),
  target_users: p.json(targetUsersSchema).optional(),
  timezone: p.str(z.string().refine(isValidTimezone, { message: 'Invalid {var}: Value error, Not a recognized time zone' })).optional(),
};
for (const name of Object.keys(USER_SETTINGS)) declared[name] = settingParam(name);
/** Zulip's view declares its parameters alphabetically; the first invalid one in that order is reported. */
const params = Object.fromEntries(Object.keys(declared).sort().map((k) => [k, declared[k]!])) as Record<string, Param<unknown>>;

const guard = ({ user }: AuthedCtx): void => {
  if (user.isBot) throw notForBots();
};

export function checkSettingValues(s: Record<string, unknown>): void {
  if (typeof s.default_language === 'string' && !isAvailableLanguage(s.default_language)) throw badRequest('Invalid default_language');
  const sound = s.notification_sound;
  if (typeof sound === 'string' && sound !== 'none' && !(NOTIFICATION_SOUNDS as readonly string[]).includes(sound)) {
    throw badRequest(`Invalid notification sound '${sound}'`);
  }
  const period = s.email_notifications_batching_period_seconds;
  if (typeof period === 'number' && (period <= 0 || period > MAX_EMAIL_BATCHING_PERIOD_SECONDS)) {
    throw badRequest(`Invalid email batching period: ${period} seconds`);
  }
}

/** Bulk edit by an administrator: every listed user and every (recursive) member of the listed groups; bots never. */
async function bulkChange(ctx: AuthedCtx, v: Record<string, unknown>, requested: [string, SettingValue][]): Promise<void> {
  if (!isAdminRole(ctx.user.role)) throw adminRequired();
  const target = v.target_users as z.output<typeof targetUsersSchema>;
  if (target.user_ids.length === 0 && target.group_ids.length === 0) throw badRequest('Either user_ids or group_ids must be provided.');
  if (v.email !== undefined || v.new_password !== undefined || v.timezone !== undefined) throw badRequest('Cannot change this setting for other users.');
  if (requested.some(([name]) => SECURITY_SENSITIVE_SETTINGS.has(name))) throw badRequest('Cannot change this setting for other users.');
  checkSettingValues(v);
  const db = ctx.app.db;
  const realmId = ctx.user.realmId;
  const listed = target.user_ids.length
    ? await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('id', 'in', target.user_ids).execute()
    : [];
  const found = new Set(listed.map((r) => r.id));
  const missing = target.user_ids.find((id) => !found.has(id));
  if (missing !== undefined) throw badRequest(`Invalid user ID: ${missing}`);
  const ids = new Set(found);
  if (target.group_ids.length) {
    const groups = await db.selectFrom('user_groups').select('id').where('realm_id', '=', realmId).where('id', 'in', target.group_ids).where('name', 'is not', null).execute();
    const known = new Set(groups.map((g) => g.id));
    const badGroup = target.group_ids.find((id) => !known.has(id));
    if (badGroup !== undefined) throw badRequest(`Invalid user group ID: ${badGroup}`);
    for (const id of await groupMembersIncludingDeactivated(ctx, target.group_ids)) ids.add(id);
  }
  const rows = ids.size
    ? await db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('id', 'in', [...ids]).where('is_bot', '=', 0).orderBy('id').execute()
    : [];
  await transact(ctx.app, async (tx) => {
    const current = new Map<number, UserRow>(rows.map((r) => [r.id, r]));
    for (const [name, value] of requested) {
      const skip = target.skip_if_already_edited ? await selfEditedUserIds(tx.db, [...current.keys()], name) : new Set<number>();
      for (const [id, row] of current) {
        if (skip.has(id)) continue;
        current.set(id, await doChangeUserSetting(ctx.app, tx, row, name, value, id === ctx.user.id));
      }
    }
  });
}

/** Members of the groups, recursively through subgroups, deactivated users included (one query). */
async function groupMembersIncludingDeactivated(ctx: AuthedCtx, groupIds: readonly number[]): Promise<number[]> {
  const list = sql.join(groupIds.map((id) => sql`${id}`));
  const res = await sql<{ user_id: number }>`
    WITH RECURSIVE reach(id) AS (
      SELECT id FROM user_groups WHERE id IN (${list})
      UNION
      SELECT s.subgroup_id FROM user_group_subgroups s JOIN reach r ON s.supergroup_id = r.id
    )
    SELECT DISTINCT user_id FROM user_group_members WHERE group_id IN (SELECT id FROM reach)`.execute(ctx.app.db);
  return res.rows.map((r) => Number(r.user_id));
}

async function checkNewEmail(ctx: AuthedCtx, email: string): Promise<void> {
  const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
  const settings = realmSettings(realm.settings);
  if (settings.email_changes_disabled && !isAdminRole(ctx.user.role)) throw emailChangesDisabled();
  if (!isValidEmail(email)) throw badRequest('Invalid address.');
  const problem = await realmEmailProblem(ctx.app, realm.id, email);
  if (problem) throw badRequest(problem);
  const existing = await userByEmail(ctx.app.db, realm.id, email);
  if (existing) throw badRequest(existing.is_active ? 'Already has an account.' : 'Account has been deactivated.');
  // Zulip's email_change_by_user rate limit: 2 per hour and 5 per day.
  const hourKey = `email_change_hour:${ctx.user.id}`;
  const dayKey = `email_change_day:${ctx.user.id}`;
  const wait = Math.max(await ctx.app.limiter.retryAfter(hourKey, 2, 3600), await ctx.app.limiter.retryAfter(dayKey, 5, 86400));
  if (wait > 0) throw rateLimited(wait);
  await ctx.app.limiter.hit(hourKey, 3600);
  await ctx.app.limiter.hit(dayKey, 86400);
}

async function checkPasswordChange(ctx: AuthedCtx, oldPassword: string | undefined, newPassword: string): Promise<string> {
  const row = ctx.userRow;
  const { loginFailLimit, loginFailWindowSec } = ctx.app.config;
  const limitKey = `login:${row.delivery_email.toLowerCase()}`;
  const wait = await ctx.app.limiter.retryAfter(limitKey, loginFailLimit, loginFailWindowSec);
  if (wait > 0) throw badRequest(`You're making too many attempts! Try again in ${Math.floor(wait)} seconds.`);
  const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
  const ok = realmSettings(realm.settings).password_auth_enabled && oldPassword !== undefined && (await verifyPassword(row.password_hash, oldPassword));
  if (!ok) {
    await ctx.app.limiter.hit(limitKey, loginFailWindowSec);
    throw badRequest('Wrong password!');
  }
  if (!isStrongPassword(newPassword)) throw badRequest('New password is too weak!');
  return hashPassword(newPassword, ctx.app.config.passwordHashCost);
}

async function handler(ctx: AuthedCtx, v: Record<string, unknown>): Promise<Record<string, unknown>> {
  const requested: [string, SettingValue][] = [];
  for (const name of Object.keys(USER_SETTINGS)) if (v[name] !== undefined) requested.push([name, v[name] as SettingValue]);
  if (v.target_users !== undefined) {
    await bulkChange(ctx, v, requested);
    return {};
  }
  checkSettingValues(v);
  const me = ctx.userRow;
  const newPassword = v.new_password as string | undefined;
  const passwordHash = newPassword !== undefined ? await checkPasswordChange(ctx, v.old_password as string | undefined, newPassword) : undefined;

  let newEmail: string | undefined;
  if (typeof v.email === 'string' && v.email.trim() !== me.delivery_email) {
    newEmail = v.email.trim();
    await checkNewEmail(ctx, newEmail);
  }

  let newName: string | undefined;
  const fullName = v.full_name as string | undefined;
  if (fullName !== undefined && fullName !== me.full_name) {
    const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
    const settings = realmSettings(realm.settings);
    // With name changes disabled, non-admins' changes are ignored silently (as Zulip does).
    if (!settings.name_changes_disabled || isAdminRole(ctx.user.role)) {
      newName = checkFullName(fullName);
      if (settings.require_unique_names && (await nameTakenInRealm(ctx.app, realm.id, me.id, newName))) {
        throw badRequest('Unique names required in this organization.');
      }
    }
  }

  const current = userSettings(me.settings);
  const changes = requested.filter(([name, value]) => current[name] !== value);
  const timezone = v.timezone as string | undefined;

  await transact(ctx.app, async (tx) => {
    let row: UserRow = me;
    if (passwordHash !== undefined) await tx.db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', me.id).execute();
    if (newEmail !== undefined) await doStartEmailChange(ctx.app, tx, row, newEmail);
    if (newName !== undefined && newName !== row.full_name) {
      await doChangeFullName(tx, row, newName);
      row = { ...row, full_name: newName };
    }
    for (const [name, value] of changes) row = await doChangeUserSetting(ctx.app, tx, row, name, value, true);
    if (timezone !== undefined) row = await doChangeUserSetting(ctx.app, tx, row, 'timezone', timezone, true);
  });
  if (passwordHash !== undefined) await ctx.app.limiter.reset(`login:${me.delivery_email.toLowerCase()}`);
  return {};
}

const define = (path: string) => endpoint({ method: 'PATCH', path, auth: 'user', guard, params, handler });

export const updateSettings = define('/settings');
/** Deprecated aliases (feature level 80 merged them into PATCH /settings). */
export const updateDisplaySettings = define('/settings/display');
export const updateNotificationSettings = define('/settings/notifications');

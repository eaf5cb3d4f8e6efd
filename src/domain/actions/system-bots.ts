import type { AppCtx, TxDb } from '../context.js';
import { transact } from '../context.js';
import { nowSeconds } from '../../store/db.js';
import { insertUser, type UserRow } from '../../store/users.js';
import { generateApiKey } from '../rules/credentials.js';
import { BOT_GENERIC, ROLE_MEMBER } from '../rules/users.js';

/**
 * Zulip's cross-realm system bots (settings.NOTIFICATION_BOT, WELCOME_BOT):
 * users of an internal organization ("zulipinternal" in Zulip), so they are
 * never part of an organization's realm_users, yet can send to every
 * organization. /register lists them in cross_realm_bots with
 * is_system_bot: true and bot_owner_id: null (zerver/lib/users.py,
 * get_cross_realm_dicts / format_user_row), sorted by full name.
 *
 * They are created after the organization and its first users, so that
 * existing ids do not move, and only once per database.
 */

export const INTERNAL_REALM_STRING_ID = 'zulipinternal';

export const SYSTEM_BOTS = {
  notification: { email: 'notification-bot@zulip.com', fullName: 'Notification Bot' },
  welcome: { email: 'welcome-bot@zulip.com', fullName: 'Welcome Bot' },
} as const;

export type SystemBotName = keyof typeof SYSTEM_BOTS;

const cache = new WeakMap<AppCtx['db'], Map<SystemBotName, UserRow>>();

async function internalRealmId(db: TxDb): Promise<number> {
  const found = await db.selectFrom('realms').select('id').where('string_id', '=', INTERNAL_REALM_STRING_ID).executeTakeFirst();
  if (found) return found.id;
  const row = await db
    .insertInto('realms')
    .values({ string_id: INTERNAL_REALM_STRING_ID, name: 'System bot realm', description: '', date_created: nowSeconds(), deactivated: 0, settings: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Creates the internal organization and the system bots if missing (idempotent). */
export async function ensureSystemBots(app: AppCtx): Promise<void> {
  await transact(app, async (tx) => {
    const realmId = await internalRealmId(tx.db);
    for (const bot of Object.values(SYSTEM_BOTS)) {
      const exists = await tx.db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('email_lower', '=', bot.email).executeTakeFirst();
      if (exists) continue;
      await insertUser(tx.db, {
        realm_id: realmId,
        delivery_email: bot.email,
        email_lower: bot.email,
        full_name: bot.fullName,
        password_hash: null,
        api_key: generateApiKey(),
        role: ROLE_MEMBER,
        is_active: 1,
        is_bot: 1,
        bot_type: BOT_GENERIC,
        bot_owner_id: null,
        date_joined: nowSeconds(),
        timezone: '',
        avatar_source: 'G',
        avatar_file: null,
        avatar_version: 1,
        default_sending_stream_id: null,
        default_events_register_stream_id: null,
        default_all_public_streams: 0,
        is_imported_stub: 0,
        can_create_users: 0,
        tos_version: 0,
        settings: '{}',
      });
    }
  });
  cache.delete(app.db);
}

/** Every system bot, sorted by full name as Zulip lists them. */
export async function systemBotRows(app: AppCtx): Promise<UserRow[]> {
  let m = cache.get(app.db);
  if (!m) {
    const rows = await app.db
      .selectFrom('users')
      .innerJoin('realms', 'realms.id', 'users.realm_id')
      .selectAll('users')
      .where('realms.string_id', '=', INTERNAL_REALM_STRING_ID)
      .orderBy('users.id')
      .execute();
    m = new Map();
    for (const [name, bot] of Object.entries(SYSTEM_BOTS) as [SystemBotName, (typeof SYSTEM_BOTS)[SystemBotName]][]) {
      const row = rows.find((r) => r.email_lower === bot.email);
      if (row) m.set(name, row);
    }
    if (m.size === Object.keys(SYSTEM_BOTS).length) cache.set(app.db, m);
  }
  return [...m.values()].sort(byFullName);
}

/**
 * Title Case words of ASCII letters, as the system bots are named: for such names the
 * order of code units is localeCompare's order (at the first difference both have a
 * capital, or both a small letter, or one a space, which sorts first either way).
 * Comparing them without localeCompare keeps ICU's collation data (3 MB of resident
 * memory, performance.md P7) out of a start, which lists the system bots.
 */
const PLAIN_NAME = /^[A-Z][a-z]*(?: [A-Z][a-z]*)*$/;

/** localeCompare's order of full names. */
export function byFullName(a: { full_name: string }, b: { full_name: string }): number {
  const x = a.full_name;
  const y = b.full_name;
  if (PLAIN_NAME.test(x) && PLAIN_NAME.test(y)) return x < y ? -1 : x > y ? 1 : 0;
  return x.localeCompare(y);
}

export async function systemBot(app: AppCtx, name: SystemBotName): Promise<UserRow> {
  await systemBotRows(app);
  let bot = cache.get(app.db)?.get(name);
  if (!bot) {
    await ensureSystemBots(app);
    await systemBotRows(app);
    bot = cache.get(app.db)?.get(name);
  }
  if (!bot) throw new Error(`system bot ${name} missing`);
  return bot;
}

/** Whether a user id belongs to a system bot (their messages cross organizations). */
export async function isSystemBotId(app: AppCtx, id: number): Promise<boolean> {
  return (await systemBotRows(app)).some((b) => b.id === id);
}

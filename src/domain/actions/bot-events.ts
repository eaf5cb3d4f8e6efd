import type { Tx, TxDb } from '../context.js';
import type { Db } from '../../store/db.js';
import { botsInRealm, botsOwnedBy, channelsBrief, humanAdminIds } from '../../store/bots.js';
import type { UserRow } from '../../store/users.js';
import { presentRealmBot, type BotChannelNames } from '../../presenters/bot.js';
import { servicesOfBots } from '../../store/bot-services.js';
import { BOT_OUTGOING_WEBHOOK } from '../rules/users.js';

type AnyDb = Db | TxDb;

/** Names of a bot's default channels (null when unset). */
export async function botChannelNames(db: AnyDb, bot: UserRow): Promise<BotChannelNames> {
  const ids = [bot.default_sending_stream_id, bot.default_events_register_stream_id].filter((x): x is number => x !== null);
  const channels = await channelsBrief(db, bot.realm_id, ids);
  const name = (id: number | null) => (id === null ? null : (channels.get(id)?.name ?? null));
  return { defaultSendingStream: name(bot.default_sending_stream_id), defaultEventsRegisterStream: name(bot.default_events_register_stream_id) };
}

/**
 * Who hears about a bot (Zulip's bot_owner_user_ids): its owner and the
 * realm's human administrators, or only the owner when one of the bot's
 * default channels is private.
 */
export async function botOwnerUserIds(db: AnyDb, bot: UserRow): Promise<number[]> {
  const ids = [bot.default_sending_stream_id, bot.default_events_register_stream_id].filter((x): x is number => x !== null);
  const channels = await channelsBrief(db, bot.realm_id, ids);
  const isPrivate = [...channels.values()].some((c) => c.invite_only);
  const out = new Set<number>(isPrivate ? [] : await humanAdminIds(db, bot.realm_id));
  if (bot.bot_owner_id !== null) out.add(bot.bot_owner_id);
  return [...out].sort((a, b) => a - b);
}

export async function realmBotDict(db: AnyDb, bot: UserRow): Promise<Record<string, unknown>> {
  // Services are read only for outgoing-webhook bots (no statement for the others).
  const services = bot.bot_type === BOT_OUTGOING_WEBHOOK ? ((await servicesOfBots(db, [bot.id])).get(bot.id) ?? []) : [];
  return presentRealmBot(bot, await botChannelNames(db, bot), services);
}

/** realm_bot add: the full bot; owner_id only when the bot has an owner (as Zulip's created_bot_event). */
export async function realmBotAddEvent(db: AnyDb, bot: UserRow) {
  const dict = await realmBotDict(db, bot);
  if (dict.owner_id === null) delete dict.owner_id;
  return { type: 'realm_bot', op: 'add', bot: dict } as const;
}

/** Sends realm_bot update {user_id, ...changes} to the bot's owner and the admins. */
export async function emitRealmBotUpdate(tx: Tx, bot: UserRow, changes: Record<string, unknown>): Promise<void> {
  tx.emit(bot.realm_id, { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...changes } }, await botOwnerUserIds(tx.db, bot));
}

/** The realm_bots a user sees: every bot of the realm for administrators, their own bots otherwise. */
export async function realmBotsFor(db: AnyDb, realmId: number, userId: number, role: number): Promise<Record<string, unknown>[]> {
  const bots = role <= 200 ? await botsInRealm(db, realmId) : await botsOwnedBy(db, realmId, userId);
  const channelIds = bots.flatMap((b) => [b.default_sending_stream_id, b.default_events_register_stream_id]).filter((x): x is number => x !== null);
  const channels = await channelsBrief(db, realmId, channelIds);
  const name = (id: number | null) => (id === null ? null : (channels.get(id)?.name ?? null));
  // One query for every outgoing-webhook bot's services, and none when the realm has no such bot.
  const serviceBotIds = bots.filter((b) => b.bot_type === BOT_OUTGOING_WEBHOOK).map((b) => b.id);
  const services = await servicesOfBots(db, serviceBotIds);
  return bots.map((b) =>
    presentRealmBot(
      b,
      { defaultSendingStream: name(b.default_sending_stream_id), defaultEventsRegisterStream: name(b.default_events_register_stream_id) },
      services.get(b.id) ?? [],
    ),
  );
}

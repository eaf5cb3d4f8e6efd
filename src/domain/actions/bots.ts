import type { Tx } from '../context.js';
import { isAdminRole } from '../rules/users.js';
import { activeUserIds, updateUser, userById, type UserRow } from '../../store/users.js';
import { botOwnerUserIds, emitRealmBotUpdate, realmBotAddEvent } from './bot-events.js';
import { channelsBrief } from '../../store/bots.js';
import { servicesOfBots, updateBotService } from '../../store/bot-services.js';
import { presentService } from '../../presenters/bot.js';

/**
 * Zulip's do_change_bot_owner and send_bot_owner_update_events: the previous
 * owner (unless an administrator, who sees every bot) gets realm_bot delete,
 * the new owner (likewise) realm_bot add, the other owner-and-admin
 * recipients realm_bot update {owner_id}, and everyone realm_user update
 * {bot_owner_id}.
 */
export async function doChangeBotOwner(tx: Tx, bot: UserRow, newOwner: UserRow): Promise<void> {
  if (bot.bot_owner_id === newOwner.id) return;
  const previous = bot.bot_owner_id === null ? undefined : await userById(tx.db, bot.realm_id, bot.bot_owner_id);
  await updateUser(tx.db, bot.id, { bot_owner_id: newOwner.id });
  const updated: UserRow = { ...bot, bot_owner_id: newOwner.id };
  const updateTo = new Set(await botOwnerUserIds(tx.db, updated));
  if (previous && !isAdminRole(previous.role)) {
    tx.emit(bot.realm_id, { type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } }, [previous.id]);
    updateTo.delete(previous.id);
  }
  if (!isAdminRole(newOwner.role)) {
    tx.emit(bot.realm_id, await realmBotAddEvent(tx.db, updated), [newOwner.id]);
    updateTo.delete(newOwner.id);
  }
  tx.emit(bot.realm_id, { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, owner_id: newOwner.id } }, [...updateTo]);
  tx.emit(
    bot.realm_id,
    { type: 'realm_user', op: 'update', person: { user_id: bot.id, bot_owner_id: newOwner.id } },
    await activeUserIds(tx.db, bot.realm_id),
  );
}

export type DefaultChannelKind = 'default_sending_stream' | 'default_events_register_stream';

/** Sets (or clears, with null) one of a bot's default channels; realm_bot update with the channel's name. */
export async function doChangeBotDefaultChannel(tx: Tx, bot: UserRow, kind: DefaultChannelKind, channelId: number | null): Promise<UserRow> {
  const column = kind === 'default_sending_stream' ? 'default_sending_stream_id' : 'default_events_register_stream_id';
  await updateUser(tx.db, bot.id, { [column]: channelId });
  const updated: UserRow = { ...bot, [column]: channelId };
  const name = channelId === null ? null : ((await channelsBrief(tx.db, bot.realm_id, [channelId])).get(channelId)?.name ?? null);
  await emitRealmBotUpdate(tx, updated, { [kind]: name });
  return updated;
}

export async function doChangeBotDefaultAllPublicStreams(tx: Tx, bot: UserRow, value: boolean): Promise<UserRow> {
  await updateUser(tx.db, bot.id, { default_all_public_streams: value ? 1 : 0 });
  const updated: UserRow = { ...bot, default_all_public_streams: value ? 1 : 0 };
  await emitRealmBotUpdate(tx, updated, { default_all_public_streams: value });
  return updated;
}

/**
 * Zulip's do_update_outgoing_webhook_service: the bot's (first) service gets
 * the new URL and interface; realm_bot update {services: [{base_url,
 * interface, token}]} to the owner and admins. A bot without a service (not
 * an outgoing-webhook bot) is left as it is (Zulip fails there with a
 * server error).
 */
export async function doUpdateOutgoingWebhookService(tx: Tx, bot: UserRow, serviceInterface: number, payloadUrl: string): Promise<void> {
  const service = (await servicesOfBots(tx.db, [bot.id])).get(bot.id)?.[0];
  if (!service) return;
  await updateBotService(tx.db, service.id, { base_url: payloadUrl, interface: serviceInterface });
  await emitRealmBotUpdate(tx, bot, { services: [presentService({ ...service, base_url: payloadUrl, interface: serviceInterface })] });
}

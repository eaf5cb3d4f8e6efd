import { BOT_OUTGOING_WEBHOOK } from '../domain/rules/users.js';
import type { UserRow } from '../store/users.js';
import type { BotServiceRow } from '../store/bot-services.js';
import { avatarUrl } from './user.js';

/** Channel names of a bot's defaults (null when unset or unknown). */
export interface BotChannelNames {
  readonly defaultSendingStream: string | null;
  readonly defaultEventsRegisterStream: string | null;
}

/**
 * A bot as realm_bots (/register) and realm_bot add events show it. Bots'
 * emails are always public, so email is the bot's address.
 */
export function presentRealmBot(bot: UserRow, channels: BotChannelNames, services: readonly BotServiceRow[] = []): Record<string, unknown> {
  return {
    email: bot.delivery_email,
    user_id: bot.id,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active === 1,
    api_key: bot.api_key,
    default_sending_stream: channels.defaultSendingStream,
    default_events_register_stream: channels.defaultEventsRegisterStream,
    default_all_public_streams: bot.default_all_public_streams === 1,
    owner_id: bot.bot_owner_id,
    avatar_url: avatarUrl(bot),
    // Zulip's get_service_dicts_for_bots: outgoing-webhook bots list their services; other types none
    // (embedded bots, which would show config_data, are not offered).
    services: bot.bot_type === BOT_OUTGOING_WEBHOOK ? services.map(presentService) : [],
  };
}

/** One service of an outgoing-webhook bot, as realm_bots and realm_bot events show it. */
export function presentService(s: BotServiceRow): { base_url: string; interface: number; token: string } {
  return { base_url: s.base_url, interface: s.interface, token: s.token };
}

/** A bot as GET /bots lists it for its owner. */
export function presentOwnedBot(bot: UserRow, channels: BotChannelNames): Record<string, unknown> {
  return {
    username: bot.delivery_email,
    full_name: bot.full_name,
    api_key: bot.api_key,
    avatar_url: avatarUrl(bot),
    default_sending_stream: channels.defaultSendingStream,
    default_events_register_stream: channels.defaultEventsRegisterStream,
    default_all_public_streams: bot.default_all_public_streams === 1,
  };
}

import type { AppCtx } from '../context.js';
import { realmOf } from '../realm-row-cache.js';
import { realmSettings } from '../rules/realm-settings.js';
import { isAdminRole } from '../rules/users.js';
import { channelById, type ChannelRow } from '../../store/channels.js';
import type { UserRow } from '../../store/users.js';
import { channelLink, internalSendChannelMessage, internalSendDirectMessage, removeSingleNewlines, silentMention } from './internal-send.js';
import { systemBot } from './system-bots.js';

/**
 * What Notification Bot and Welcome Bot say, worded as Zulip words it
 * (zerver/views/streams.py send_messages_for_new_subscribers and
 * you_were_just_subscribed_message; zerver/lib/onboarding.py
 * send_initial_direct_message). Zulip does not tell users that they were
 * added to a user group, so neither does Parley.
 *
 * All of these run after the triggering action committed (tx.afterPublish).
 */

/** Realm.STREAM_EVENTS_NOTIFICATION_TOPIC_NAME */
export const CHANNEL_EVENTS_TOPIC = 'channel events';
/** The announcement topic of new channels. */
export const NEW_CHANNELS_TOPIC = 'new channels';

/** Zulip's you_were_just_subscribed_message. */
export function subscribedYouMessage(actor: { id: number; full_name: string }, channelNames: readonly string[]): string {
  const sorted = [...channelNames].sort();
  if (sorted.length === 1) return `${silentMention(actor)} subscribed you to ${channelLink(sorted[0]!)}.`;
  let msg = `${silentMention(actor)} subscribed you to the following channels:\n\n`;
  for (const name of sorted) msg += `* ${channelLink(name)}\n`;
  return msg;
}

/** Zulip's get_stream_permission_policy_key + the "channel created" text; null for public channels with protected history (Zulip sends none). */
export function channelCreatedMessage(actor: { id: number; full_name: string }, ch: Pick<ChannelRow, 'invite_only' | 'is_web_public' | 'history_public_to_subscribers' | 'description'>): string | null {
  let policy: string;
  if (ch.is_web_public) policy = 'Web-public';
  else if (!ch.invite_only) {
    if (!ch.history_public_to_subscribers) return null;
    policy = 'Public';
  } else policy = ch.history_public_to_subscribers ? 'Private, shared history' : 'Private, protected history';
  const description = ch.description === '' ? '*No description.*' : ch.description;
  return `**${policy}** channel created by ${silentMention(actor)}. **Description:**\n\`\`\`\` quote\n${description}\n\`\`\`\``;
}

/**
 * Zulip's send_messages_for_new_subscribers: a direct message to each
 * human other than the actor newly subscribed to channels that were not
 * just created; the announcement of created channels (announce, in the
 * realm's new_stream_announcements_stream_id); and a "channel events"
 * message in each created channel. All start read for the actor.
 */
export async function sendNewSubscriptionMessages(
  app: AppCtx,
  actor: UserRow,
  opts: {
    readonly subscribed: readonly { readonly user: UserRow; readonly channel: ChannelRow }[];
    readonly created: readonly ChannelRow[];
    readonly announce: boolean;
    readonly notifySubscribers: boolean;
  },
): Promise<void> {
  const realmId = actor.realm_id;
  const readBy = [actor.id];
  const actingUser = actor;
  const createdIds = new Set(opts.created.map((c) => c.id));
  if (opts.notifySubscribers) {
    const byUser = new Map<number, { user: UserRow; names: string[] }>();
    for (const s of opts.subscribed) {
      if (s.user.id === actor.id || s.user.is_bot || createdIds.has(s.channel.id)) continue;
      let entry = byUser.get(s.user.id);
      if (!entry) byUser.set(s.user.id, (entry = { user: s.user, names: [] }));
      entry.names.push(s.channel.name);
    }
    for (const { user, names } of byUser.values()) {
      await internalSendDirectMessage(app, { realmId, bot: 'notification', recipientId: user.id, content: subscribedYouMessage(actor, names), readBy, actingUser });
    }
  }
  if (opts.created.length === 0) return;
  if (opts.announce) {
    const realm = await realmOf(app, realmId);
    const id = Number(realmSettings(realm.settings).new_stream_announcements_stream_id);
    const target = id > 0 ? await channelById(app.db, realmId, id) : undefined;
    if (target && !target.deactivated) {
      const links = opts.created.map((c) => channelLink(c.name)).join(', ');
      const content =
        opts.created.length > 1
          ? `${silentMention(actor)} created the following channels: ${links}.`
          : `${silentMention(actor)} created a new channel ${links}.`;
      await internalSendChannelMessage(app, { realmId, bot: 'notification', channelId: target.id, topic: NEW_CHANNELS_TOPIC, content, readBy, actingUser });
    }
  }
  for (const ch of opts.created) {
    const content = channelCreatedMessage(actor, ch);
    if (content) await internalSendChannelMessage(app, { realmId, bot: 'notification', channelId: ch.id, topic: CHANNEL_EVENTS_TOPIC, content, readBy, actingUser });
  }
}

/** Help links point at Zulip's help center: Parley speaks Zulip's API and its clients. */
const HELP = 'https://zulip.com/help';

/**
 * The Welcome Bot direct message to a new user (Zulip's
 * send_initial_direct_message, "Zulip" read as Parley; the
 * navigation-tour video line is left out, Parley has no such video).
 */
export async function welcomeMessageContent(app: AppCtx, user: UserRow): Promise<string> {
  const welcome = await systemBot(app, 'welcome');
  const kickedOff = await app.db
    .selectFrom('messages')
    .select('id')
    .where('realm_id', '=', user.realm_id)
    .where('sender_id', '=', welcome.id)
    .where('stream_id', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  const inform = kickedOff ? "\nI've kicked off some conversations to help you get started. You can find\nthem in your [Inbox](/#inbox).\n" : '';
  const gettingStarted = `\nTo learn more, check out our [getting started guide](${HELP}/getting-started-with-zulip)!\n`;
  const setup = isAdminRole(user.role) ? `\nWe also have a guide for [moving your organization to Parley](${HELP}/moving-to-zulip).\n` : '';
  const content = `\nHello, and welcome to Parley!👋 ${inform}\n\n${gettingStarted} ${setup}\n\n`;
  return removeSingleNewlines(content);
}

export async function sendWelcomeMessage(app: AppCtx, user: UserRow): Promise<number | undefined> {
  if (user.is_bot) return undefined;
  return internalSendDirectMessage(app, { realmId: user.realm_id, bot: 'welcome', recipientId: user.id, content: await welcomeMessageContent(app, user) });
}

import { transact, type AppCtx, type Tx } from '../context.js';
import { realmOf } from '../realm-row-cache.js';
import { realmSettings } from '../rules/realm-settings.js';
import { channelById, channelsByIds, defaultChannelIds, type ChannelRow } from '../../store/channels.js';
import { userById, type UserRow } from '../../store/users.js';
import { internalSendChannelMessage, internalSendDirectMessage, silentMention } from './internal-send.js';
import { sendWelcomeMessage } from './notifications.js';
import { doSubscribe } from './subscriptions.js';
import { FLAG_STARRED } from '../rules/message-flags.js';

/**
 * Zulip's process_new_human_user (zerver/actions/create_user.py) for a
 * person who joined through sign-up or an invitation: subscribed to the
 * organization's default channels (unless the invitation says otherwise)
 * and the invitation's channels, then, after the commit, the referrer is
 * told "{user} accepted your invitation to join Zulip!" (if asked), the
 * signup announcement "{user} joined this organization." goes to the
 * realm's signup_announcements_stream_id (topic "signups"), and Welcome
 * Bot's direct message arrives, starred.
 */

export interface JoinGrant {
  readonly channelIds: readonly number[];
  readonly includeDefaults: boolean;
  readonly referrerId: number | null;
  readonly notifyReferrer: boolean;
}

/** In the sign-up transaction: the channels a new user starts in. */
export async function subscribeNewHumanUser(app: AppCtx, tx: Tx, user: UserRow, grant: JoinGrant): Promise<ChannelRow[]> {
  const ids = new Set<number>(grant.channelIds);
  if (grant.includeDefaults) for (const id of await defaultChannelIds(tx.db, user.realm_id)) ids.add(id);
  // Channels archived since the invitation was made are skipped.
  const channels = (await channelsByIds(tx.db, user.realm_id, [...ids])).filter((c) => !c.deactivated);
  if (channels.length) await doSubscribe(tx, user.realm_id, channels, [user], new Map(), app);
  return channels;
}

/** After the commit: the messages a new human user's arrival sets off. */
export async function announceNewHumanUser(app: AppCtx, user: UserRow, grant: JoinGrant, opts: { firstUser?: boolean } = {}): Promise<void> {
  if (grant.referrerId !== null && grant.notifyReferrer) {
    const referrer = await userById(app.db, user.realm_id, grant.referrerId);
    if (referrer?.is_active) {
      await internalSendDirectMessage(app, {
        realmId: user.realm_id,
        bot: 'notification',
        recipientId: referrer.id,
        content: `${silentMention(user)} accepted your invitation to join Parley!`,
      });
    }
  }
  const realm = await realmOf(app, user.realm_id);
  const signups = Number(realmSettings(realm.settings).signup_announcements_stream_id);
  // Zulip's notify_new_user says nothing about an organization's first user.
  const target = signups > 0 && !opts.firstUser ? await channelById(app.db, user.realm_id, signups) : undefined;
  if (target && !target.deactivated) {
    await internalSendChannelMessage(app, { realmId: user.realm_id, bot: 'notification', channelId: target.id, topic: 'signups', content: `${silentMention(user)} joined this organization.` });
  }
  const welcomeId = await sendWelcomeMessage(app, user);
  // Zulip stars the welcome message for its recipient; clients hear it as a flag change.
  if (welcomeId !== undefined) await starForUser(app, user, welcomeId);
}

async function starForUser(app: AppCtx, user: UserRow, messageId: number): Promise<void> {
  await transact(app, async (tx) => {
    const um = await tx.db.selectFrom('user_messages').select('flags').where('user_id', '=', user.id).where('message_id', '=', messageId).executeTakeFirst();
    if (!um) return;
    await tx.db.updateTable('user_messages').set({ flags: um.flags | FLAG_STARRED }).where('user_id', '=', user.id).where('message_id', '=', messageId).execute();
    tx.emit(user.realm_id, { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [messageId], all: false }, [user.id]);
  });
}

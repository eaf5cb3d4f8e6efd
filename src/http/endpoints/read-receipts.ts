import { sql } from 'kysely';
import { accessMessage } from '../../domain/access/messages.js';
import { badRequest } from '../../domain/errors.js';
import { realmOf } from '../../domain/realm-row-cache.js';
import { FLAG_READ } from '../../domain/rules/message-flags.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { userSettings } from '../../domain/rules/user-settings.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/**
 * GET /messages/{message_id}/read_receipts (Zulip's views/read_receipts.py):
 * after the message access check, refused while the realm's
 * enable_read_receipts is off; otherwise the active users who have the
 * message marked read and whose send_read_receipts setting is on, never the
 * sender, nor users who muted the caller or whom the caller muted (the
 * caller could otherwise infer being muted). Bots are included, as in Zulip.
 */
export const getReadReceipts = endpoint({
  method: 'GET',
  path: '/messages/:message_id/read_receipts',
  auth: 'user',
  params: { message_id: p.pathId() },
  handler: async (ctx, { message_id }) => {
    const db = ctx.app.db;
    const { message } = await accessMessage(db, ctx.user, message_id, { forModify: false });
    const realm = await realmOf(ctx.app, ctx.user.realmId);
    if (!realmSettings(realm.settings).enable_read_receipts) throw badRequest('Read receipts are disabled in this organization.');
    const readers = await db
      .selectFrom('user_messages')
      .innerJoin('users', 'users.id', 'user_messages.user_id')
      .select(['users.id', 'users.settings'])
      .where('user_messages.message_id', '=', message.id)
      .where('users.is_active', '=', 1)
      .where('users.id', '!=', message.sender_id)
      .where(sql<boolean>`(user_messages.flags & ${FLAG_READ}) != 0`)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('muted_users').select('muted_users.user_id').whereRef('muted_users.user_id', '=', 'users.id').where('muted_users.muted_user_id', '=', ctx.user.id))))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('muted_users').select('muted_users.user_id').where('muted_users.user_id', '=', ctx.user.id).whereRef('muted_users.muted_user_id', '=', 'users.id'))))
      .orderBy('users.id')
      .execute();
    return { user_ids: readers.filter((u) => userSettings(u.settings).send_read_receipts !== false).map((u) => u.id) };
  },
});

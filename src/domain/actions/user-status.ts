import type { AppCtx, Tx } from '../context.js';
import { doChangeUserSetting } from './user-settings.js';
import { nowSeconds } from '../../store/db.js';
import { upsertStatus } from '../../store/user-status.js';
import { activeUserIds, type UserRow } from '../../store/users.js';

export interface StatusChange {
  /** Deprecated mirror of presence_enabled (away = !presence_enabled). */
  readonly away?: boolean;
  readonly statusText?: string;
  /** '' clears the emoji (with emojiCode '' and reactionType 'unicode_emoji'). */
  readonly emojiName?: string;
  readonly emojiCode?: string;
  readonly reactionType?: string;
}

/**
 * Zulip's do_update_user_status. `away` changes the presence_enabled setting
 * (with the settings events, as do_change_user_setting sends them);
 * the status row is created or updated; one user_status event carrying the
 * parts that were given goes to every active user.
 */
export async function doUpdateUserStatus(app: AppCtx, tx: Tx, user: UserRow, change: StatusChange, client: string): Promise<void> {
  // Through the settings action, so presence_enabled changes exactly as PATCH /settings changes it.
  if (change.away !== undefined) await doChangeUserSetting(app, tx, user, 'presence_enabled', !change.away, true);
  const columns: { status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string } = {};
  if (change.statusText !== undefined) columns.status_text = change.statusText;
  if (change.emojiName !== undefined) {
    columns.emoji_name = change.emojiName;
    if (change.emojiCode !== undefined) columns.emoji_code = change.emojiCode;
    if (change.reactionType !== undefined) columns.reaction_type = change.reactionType;
  }
  await upsertStatus(tx.db, { user_id: user.id, realm_id: user.realm_id, client, timestamp: nowSeconds() }, columns);
  const event: Record<string, unknown> = { type: 'user_status', user_id: user.id };
  if (change.away !== undefined) event.away = change.away;
  if (change.statusText !== undefined) event.status_text = change.statusText;
  if (change.emojiName !== undefined) {
    event.emoji_name = change.emojiName;
    event.emoji_code = change.emojiCode;
    event.reaction_type = change.reactionType;
  }
  tx.emit(user.realm_id, event as { type: string }, await activeUserIds(tx.db, user.realm_id));
}

import { humanAdminIds } from '../../store/bots.js';
import { createHash, randomBytes } from 'node:crypto';
import { fakeEmailDomain, realmUrl } from '../../config.js';
import type { AppCtx, Tx } from '../context.js';
import { badRequest } from '../errors.js';
import { languageName } from '../rules/languages.js';
import {
  DISPLAY_SETTINGS_LEGACY,
  NOTIFICATION_SETTINGS_LEGACY,
  storedSettings,
  userSettings,
  type SettingValue,
} from '../rules/user-settings.js';
import { EMAIL_VISIBLE_EVERYONE } from '../rules/users.js';
import { sendMail } from '../../mail/send.js';
import { apiEmail, canSeeDeliveryEmail, emailVisibility } from '../../presenters/user.js';
import * as users from '../../store/users.js';
import type { UserRow } from '../../store/users.js';
import { insertEmailChange, markSelfEdited } from '../../store/user-settings.js';
import { presenceEnabledChanged } from './presence.js';
import { doChangeEmailAddressVisibility, notifyAvatarChange } from './users.js';
import { emitInheritedNotificationUpdates } from './subscriptions.js';

/**
 * Changing user settings (PATCH /settings and its bulk form). Each changed
 * setting sends, to the user's own clients, a user_settings update event
 * (with language_name for default_language) and, for settings older than
 * feature level 89, the legacy update_display_settings /
 * update_global_notifications event, which queues registered with the
 * user_settings_object capability never receive. Some settings have more
 * effects: timezone also updates the user for everyone, email address
 * visibility changes who sees the address, presence_enabled sends a presence
 * update, and turning draft synchronization off deletes the server's drafts silently.
 */

async function activeUserIds(tx: Tx, realmId: number): Promise<number[]> {
  return users.activeUserIds(tx.db, realmId);
}

function emitSettingEvents(app: AppCtx, tx: Tx, user: UserRow, name: string, value: SettingValue): void {
  const event: Record<string, unknown> = { type: 'user_settings', op: 'update', property: name, value };
  if (name === 'default_language') event.language_name = languageName(String(value));
  tx.emit(user.realm_id, event as { type: string }, [user.id]);
  const email = apiEmail(user, fakeEmailDomain(app.config));
  if (NOTIFICATION_SETTINGS_LEGACY.includes(name)) {
    tx.emit(user.realm_id, { type: 'update_global_notifications', user: email, notification_name: name, setting: value }, [user.id]);
  }
  if (DISPLAY_SETTINGS_LEGACY.includes(name) || name === 'timezone') {
    const legacy: Record<string, unknown> = { type: 'update_display_settings', user: email, setting_name: name, setting: value };
    if (name === 'default_language') legacy.language_name = languageName(String(value));
    tx.emit(user.realm_id, legacy as { type: string }, [user.id]);
  }
}

/**
 * Sets one setting of a user (no-op when unchanged) and returns the updated
 * row. `selfEdit` marks it as changed by the user themselves, which
 * skip_if_already_edited bulk changes respect.
 */
export async function doChangeUserSetting(app: AppCtx, tx: Tx, user: UserRow, name: string, value: SettingValue, selfEdit: boolean): Promise<UserRow> {
  if (name === 'timezone') {
    if (user.timezone === value) return user;
    await users.updateUser(tx.db, user.id, { timezone: String(value) });
    const updated = { ...user, timezone: String(value) };
    emitSettingEvents(app, tx, updated, name, value);
    tx.emit(
      user.realm_id,
      { type: 'realm_user', op: 'update', person: { email: apiEmail(user, fakeEmailDomain(app.config)), user_id: user.id, timezone: value } },
      await activeUserIds(tx, user.realm_id),
    );
    if (selfEdit) await markSelfEdited(tx.db, user.id, [name]);
    return updated;
  }
  if (userSettings(user.settings)[name] === value) return user;
  let updated: UserRow;
  if (name === 'email_address_visibility') {
    // The users resource owns who-sees-which-address; its events follow the user_settings one.
    const stored = storedSettings(user.settings);
    stored[name] = value;
    updated = { ...user, settings: JSON.stringify(stored) };
    emitSettingEvents(app, tx, user, name, value);
    await doChangeEmailAddressVisibility(app, tx, user, Number(value));
  } else {
    const stored = storedSettings(user.settings);
    stored[name] = value;
    updated = { ...user, settings: JSON.stringify(stored) };
    await users.updateUser(tx.db, user.id, { settings: updated.settings });
    emitSettingEvents(app, tx, user, name, value);
  }
  if (name === 'enable_drafts_synchronization' && value === false) {
    // Only syncing stops: local copies stay, so no drafts events.
    await tx.db.deleteFrom('drafts').where('user_id', '=', user.id).execute();
  }
  if (name === 'allow_private_data_export') {
    // Zulip sends administrators {type: 'realm_export_consent', user_id, consented} (feeds GET /export/realm/consents).
    tx.emit(user.realm_id, { type: 'realm_export_consent', user_id: user.id, consented: value === true }, await humanAdminIds(tx.db, user.realm_id));
  }
  if (name === 'presence_enabled') {
    // Everyone sees the new presence state at once (the presence resource sends it after commit).
    tx.afterPublish(() => presenceEnabledChanged(app, user, value === true));
  }
  // Older clients show inheriting channel notification settings with the default's value.
  await emitInheritedNotificationUpdates(tx, user, name, value);
  if (selfEdit) await markSelfEdited(tx.db, user.id, [name]);
  return updated;
}

/** realm require_unique_names: another user with the same name (NFKC, case-folded). */
export async function nameTakenInRealm(app: AppCtx, realmId: number, userId: number, name: string): Promise<boolean> {
  const norm = (s: string) => s.normalize('NFKC').toLowerCase();
  const rows = await app.db.selectFrom('users').select(['id', 'full_name']).where('realm_id', '=', realmId).where('id', '!=', userId).execute();
  const want = norm(name);
  return rows.some((r) => norm(r.full_name) === want);
}

// ---- email address changes ----

/** Confirmation links are valid for a day (Zulip's default confirmation validity). */
export const EMAIL_CHANGE_VALIDITY_SECS = 24 * 3600;

export const hashConfirmationKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/**
 * Starts an email change: records a pending request (revoking earlier ones)
 * and, after commit, mails a confirmation link to the new address. The
 * address changes only when the link is confirmed.
 */
export async function doStartEmailChange(app: AppCtx, tx: Tx, user: UserRow, newEmail: string): Promise<void> {
  const key = randomBytes(24).toString('base64url');
  await insertEmailChange(tx.db, {
    realm_id: user.realm_id,
    user_id: user.id,
    old_email: user.delivery_email,
    new_email: newEmail,
    key_hash: hashConfirmationKey(key),
    created_at: Math.floor(Date.now() / 1000),
  });
  const link = `${realmUrl(app.config)}/accounts/confirm_new_email/${key}`;
  tx.afterPublish(() =>
    sendMail(app, {
      to: [newEmail],
      subject: 'Verify your new email address',
      text:
        `We received a request to change the email address for the account ${user.delivery_email} to ${newEmail}.\n\n` +
        `To confirm this change, open this link within 24 hours:\n\n${link}\n\n` +
        'If you did not request this change, you can ignore this email.\n',
    }),
  );
}

/**
 * Changes the delivery email (a confirmed request): the address to everyone
 * who may see it, the new API email to everyone when the address is public,
 * and the new gravatar for gravatar users.
 */
export async function doChangeDeliveryEmail(app: AppCtx, tx: Tx, user: UserRow, newEmail: string): Promise<UserRow> {
  await users.updateUser(tx.db, user.id, { delivery_email: newEmail, email_lower: newEmail.toLowerCase() });
  const updated: UserRow = { ...user, delivery_email: newEmail, email_lower: newEmail.toLowerCase() };
  const viewers = await tx.db.selectFrom('users').select(['id', 'role']).where('realm_id', '=', user.realm_id).where('is_active', '=', 1).execute();
  const seeing = viewers.filter((v) => canSeeDeliveryEmail(updated, v.id, v.role)).map((v) => v.id);
  tx.emit(user.realm_id, { type: 'realm_user', op: 'update', person: { user_id: user.id, delivery_email: newEmail } }, seeing);
  // The API email before the avatar: clients null a gravatar URL they can compute from the API email.
  if (emailVisibility(updated) === EMAIL_VISIBLE_EVERYONE) {
    tx.emit(
      user.realm_id,
      { type: 'realm_user', op: 'update', person: { user_id: user.id, new_email: apiEmail(updated, fakeEmailDomain(app.config)) } },
      viewers.map((v) => v.id),
    );
  }
  if (user.avatar_source === 'G') await notifyAvatarChange(tx, updated);
  tx.afterPublish(() =>
    sendMail(app, {
      to: [user.delivery_email],
      subject: 'Email address changed',
      text: `The email address of your account was changed from ${user.delivery_email} to ${newEmail}.\n`,
    }),
  );
  return updated;
}

export const emailChangesDisabled = (): Error => badRequest('Email address changes are disabled in this organization.');

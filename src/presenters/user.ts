import { createHash } from 'node:crypto';
import type { UserRow } from '../store/users.js';
import { userSettings } from '../domain/rules/user-settings.js';
import { INACCESSIBLE_USER_AVATAR, INACCESSIBLE_USER_NAME } from '../domain/access/user-access.js';
import { EMAIL_VISIBLE_EVERYONE, ROLE_ADMIN, ROLE_GUEST, ROLE_OWNER, visibilitiesSeenBy } from '../domain/rules/users.js';

/** Who is looking, and what the client asked for. */
export interface UserView {
  readonly viewerId: number;
  readonly viewerRole: number;
  readonly fakeEmailDomain: string;
  readonly clientGravatar: boolean;
  readonly includeCustomProfileFields?: boolean;
  /** custom profile field values by user id, when requested */
  readonly profileData?: ReadonlyMap<number, Record<string, unknown>>;
}

export const dummyEmail = (userId: number, domain: string): string => `user${userId}@${domain}`;

// Parsing the settings JSON is the costliest part of presenting a user; the
// same settings string recurs across requests, so remember the last few.
const visibilityBySettings = new Map<string, number>();

export function emailVisibility(u: Pick<UserRow, 'settings' | 'is_bot'>): number {
  if (u.is_bot) return EMAIL_VISIBLE_EVERYONE;
  if (u.settings === '{}') return Number(userSettings('{}').email_address_visibility);
  let v = visibilityBySettings.get(u.settings);
  if (v === undefined) {
    v = Number(userSettings(u.settings).email_address_visibility);
    if (visibilityBySettings.size > 5000) visibilityBySettings.clear();
    visibilityBySettings.set(u.settings, v);
  }
  return v;
}

/** The API email: the real address when everyone may see it (and for bots), else user{id}@domain. */
export function apiEmail(u: Pick<UserRow, 'id' | 'settings' | 'is_bot' | 'delivery_email'>, fakeEmailDomain: string): string {
  return emailVisibility(u) === EMAIL_VISIBLE_EVERYONE ? u.delivery_email : dummyEmail(u.id, fakeEmailDomain);
}

/** Whether this viewer may see the user's real (delivery) email. */
export function canSeeDeliveryEmail(u: Pick<UserRow, 'id' | 'settings' | 'is_bot'>, viewerId: number, viewerRole: number): boolean {
  if (u.is_bot || u.id === viewerId) return true;
  return visibilitiesSeenBy(viewerRole).includes(emailVisibility(u));
}

const gravatarHashes = new Map<string, string>();

export function gravatarUrl(deliveryEmail: string, version: number, medium = false): string {
  const email = deliveryEmail.toLowerCase();
  let hash = gravatarHashes.get(email);
  if (hash === undefined) {
    hash = createHash('md5').update(email).digest('hex');
    if (gravatarHashes.size > 20000) gravatarHashes.clear();
    gravatarHashes.set(email, hash);
  }
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? '&s=500' : ''}&version=${version}`;
}

/** Uploaded avatars live under /user_avatars/{realm}/{stem}.png (and -medium.png); the stem is random. */
export function avatarUrl(
  u: Pick<UserRow, 'avatar_source' | 'delivery_email' | 'avatar_version' | 'realm_id' | 'id'> & { readonly avatar_file?: string | null },
  medium = false,
): string {
  if (u.avatar_source === 'U' && u.avatar_file) {
    return `/user_avatars/${u.realm_id}/${u.avatar_file}${medium ? '-medium' : ''}.png?version=${u.avatar_version}`;
  }
  return gravatarUrl(u.delivery_email, u.avatar_version, medium);
}

/**
 * Zulip's client_gravatar rule: the URL is left out (null) only for gravatar
 * avatars of users whose email everyone may see, since the client computes the
 * URL from the API email.
 */
export function avatarUrlForClient(u: UserRow, clientGravatar: boolean, medium = false): string | null {
  if (clientGravatar && u.avatar_source === 'G' && emailVisibility(u) === EMAIL_VISIBLE_EVERYONE) return null;
  return avatarUrl(u, medium);
}

/** ISO 8601 with minute precision and an explicit UTC offset, as Zulip formats date_joined. */
export function isoMinutes(unixSeconds: number): string {
  let text = isoMinutesSeen.get(unixSeconds);
  if (text === undefined) {
    text = new Date(unixSeconds * 1000).toISOString().slice(0, 16) + '+00:00';
    if (isoMinutesSeen.size >= 20_000) isoMinutesSeen.clear();
    isoMinutesSeen.set(unixSeconds, text);
  }
  return text;
}
/** date_joined of every presented user (realm_users of each /register): formatted once per value. */
const isoMinutesSeen = new Map<number, string>();

/** A user as GET /users, /register (realm_users) and realm_user events present it. */
export function presentUser(u: UserRow, view: UserView): Record<string, unknown> {
  const seesEmail = canSeeDeliveryEmail(u, view.viewerId, view.viewerRole);
  const out: Record<string, unknown> = {
    email: apiEmail(u, view.fakeEmailDomain),
    user_id: u.id,
    avatar_version: u.avatar_version,
    is_admin: u.role <= ROLE_ADMIN,
    is_owner: u.role === ROLE_OWNER,
    is_guest: u.role === ROLE_GUEST,
    role: u.role,
    is_bot: u.is_bot === 1,
    full_name: u.full_name,
    timezone: u.timezone,
    is_active: u.is_active === 1,
    date_joined: isoMinutes(u.date_joined),
    is_imported_stub: u.is_imported_stub === 1,
    delivery_email: seesEmail ? u.delivery_email : null,
  };
  out.avatar_url = avatarUrlForClient(u, view.clientGravatar);
  if (u.is_bot) {
    out.bot_type = u.bot_type;
    out.bot_owner_id = u.bot_owner_id;
  } else if (view.includeCustomProfileFields) {
    out.profile_data = view.profileData?.get(u.id) ?? {};
  }
  return out;
}

/**
 * The placeholder for a user the viewer cannot access (Zulip's
 * get_data_for_inaccessible_user): "Unknown user", the dummy email, a member
 * role, the epoch as date_joined and the unknown-user avatar; no real data.
 */
export function presentInaccessibleUser(userId: number, fakeEmailDomain: string): Record<string, unknown> {
  return {
    email: dummyEmail(userId, fakeEmailDomain),
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    role: 400,
    is_bot: false,
    full_name: INACCESSIBLE_USER_NAME,
    timezone: '',
    is_active: true,
    date_joined: '1970-01-01T00:00:00+00:00',
    delivery_email: null,
    avatar_url: INACCESSIBLE_USER_AVATAR,
    profile_data: {},
  };
}

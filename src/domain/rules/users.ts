import { badRequest } from '../errors.js';

export const ROLE_OWNER = 100;
export const ROLE_ADMIN = 200;
export const ROLE_MODERATOR = 300;
export const ROLE_MEMBER = 400;
export const ROLE_GUEST = 600;
export const ROLES = [ROLE_OWNER, ROLE_ADMIN, ROLE_MODERATOR, ROLE_MEMBER, ROLE_GUEST] as const;

export const BOT_GENERIC = 1;
export const BOT_INCOMING_WEBHOOK = 2;
export const BOT_OUTGOING_WEBHOOK = 3;
export const BOT_EMBEDDED = 4;

/** email_address_visibility values (a per-user setting). */
export const EMAIL_VISIBLE_EVERYONE = 1;
export const EMAIL_VISIBLE_MEMBERS = 2;
export const EMAIL_VISIBLE_ADMINS = 3;
export const EMAIL_VISIBLE_NOBODY = 4;
export const EMAIL_VISIBLE_MODERATORS = 5;

export const isAdminRole = (role: number): boolean => role <= ROLE_ADMIN;

/** Which email_address_visibility values a viewer of this role may see through. */
export function visibilitiesSeenBy(role: number): readonly number[] {
  if (role <= ROLE_ADMIN) return [1, 2, 3, 5];
  if (role === ROLE_MODERATOR) return [1, 2, 5];
  if (role === ROLE_MEMBER) return [1, 2];
  return [1];
}

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;

/**
 * Zulip's check_full_name: strip, length bounds, no control/format characters
 * (Unicode category C) and none of * ` \ > " @, and no trailing "|<digits>"
 * (that form is reserved for disambiguating mentions).
 */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name.length > MAX_NAME_LENGTH) throw badRequest('Name too long!');
  if (name.length < MIN_NAME_LENGTH) throw badRequest('Name too short!');
  if (/[\p{C}*`\\>"@]/u.test(name)) throw badRequest('Invalid characters in name!');
  if (/\|\d+$/.test(raw)) throw badRequest('Invalid format!');
  return name;
}

/**
 * A practical form check for email addresses (Django's EmailValidator is the
 * reference): one @, a non-empty local part of permitted characters, a domain
 * with a dot-separated label structure, and no whitespace.
 */
export function isValidEmail(email: string): boolean {
  if (email.length > 254 || /\s/.test(email)) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return false;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  return isValidEmailDomain(domain);
}

/** The domain part of isValidEmail: `localhost`, dotted labels ending in a letter TLD, or a bracketed IP literal. */
export function isValidEmailDomain(domain: string): boolean {
  if (domain === 'localhost') return true;
  return /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/.test(domain) || /^\[[0-9a-fA-F:.]+\]$/.test(domain);
}

export const emailDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** Well-known disposable-address providers, refused when the realm disallows them. */
const DISPOSABLE = new Set(['mailinator.com', 'guerrillamail.com', 'sharklasers.com', '10minutemail.com', 'yopmail.com', 'trashmail.com', 'tempmail.com', 'temp-mail.org', 'dispostable.com', 'maildrop.cc', 'getnada.com', 'throwawaymail.com']);
export const isDisposableEmailDomain = (domain: string): boolean => DISPOSABLE.has(domain);

/** Zulip's check_short_name for bots. */
export function checkBotShortName(raw: string): string {
  const short = raw.trim();
  if (short.length === 0) throw badRequest('Bad name or username');
  return short;
}

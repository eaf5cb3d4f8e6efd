import { badRequest } from '../errors.js';

/**
 * Custom profile field types and their validation, with Zulip's wording
 * (zerver/models/custom_profile_fields.py, zerver/views/custom_profile_fields.py,
 * zerver/lib/validator.py, zerver/lib/external_accounts.py).
 */
export const FIELD_SHORT_TEXT = 1;
export const FIELD_LONG_TEXT = 2;
export const FIELD_SELECT = 3;
export const FIELD_DATE = 4;
export const FIELD_URL = 5;
export const FIELD_USER = 6;
export const FIELD_EXTERNAL_ACCOUNT = 7;
export const FIELD_PRONOUNS = 8;

export const FIELD_NAME_MAX_LENGTH = 40;
export const FIELD_HINT_MAX_LENGTH = 80;
export const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2;

/** custom_profile_field_types of /register: keyword -> {id, name}, in Zulip's order (sorted by display name). */
export const FIELD_TYPES: readonly { keyword: string; id: number; name: string }[] = [
  { keyword: 'DATE', id: FIELD_DATE, name: 'Date' },
  { keyword: 'EXTERNAL_ACCOUNT', id: FIELD_EXTERNAL_ACCOUNT, name: 'External account' },
  { keyword: 'URL', id: FIELD_URL, name: 'Link' },
  { keyword: 'SELECT', id: FIELD_SELECT, name: 'List of options' },
  { keyword: 'PRONOUNS', id: FIELD_PRONOUNS, name: 'Pronouns' },
  { keyword: 'LONG_TEXT', id: FIELD_LONG_TEXT, name: 'Text (long)' },
  { keyword: 'SHORT_TEXT', id: FIELD_SHORT_TEXT, name: 'Text (short)' },
  { keyword: 'USER', id: FIELD_USER, name: 'Users' },
];
const TYPE_IDS = new Set(FIELD_TYPES.map((t) => t.id));

/** Zulip renders both text types as Markdown (CustomProfileField.is_renderable). */
export const isRenderable = (fieldType: number): boolean => fieldType === FIELD_SHORT_TEXT || fieldType === FIELD_LONG_TEXT;

/** The built-in external account subtypes: name (the field label), hint and URL pattern. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, { text: string; name: string; hint: string; url_pattern: string }>> = {
  behance: { text: 'Behance', name: 'Behance username', hint: '', url_pattern: 'https://www.behance.net/%(username)s' },
  bitbucket: { text: 'Bitbucket', name: 'Bitbucket username', hint: '', url_pattern: 'https://bitbucket.org/%(username)s' },
  bluesky: { text: 'Bluesky', name: 'Bluesky handle', hint: '', url_pattern: 'https://bsky.app/profile/%(username)s' },
  codeberg: { text: 'Codeberg', name: 'Codeberg username', hint: '', url_pattern: 'https://codeberg.org/%(username)s' },
  discord: { text: 'Discord', name: 'Discord tag', hint: '', url_pattern: '' },
  dribbble: { text: 'Dribbble', name: 'Dribbble username', hint: '', url_pattern: 'https://dribbble.com/%(username)s' },
  facebook: { text: 'Facebook', name: 'Facebook username', hint: '', url_pattern: 'https://www.facebook.com/%(username)s' },
  github: { text: 'GitHub', name: 'GitHub username', hint: '', url_pattern: 'https://github.com/%(username)s' },
  gitlab: { text: 'GitLab', name: 'GitLab username', hint: '', url_pattern: 'https://gitlab.com/%(username)s' },
  instagram: { text: 'Instagram', name: 'Instagram username', hint: '', url_pattern: 'https://www.instagram.com/%(username)s' },
  linkedin: { text: 'LinkedIn', name: 'LinkedIn profile name', hint: '', url_pattern: 'https://www.linkedin.com/in/%(username)s' },
  mastodon: { text: 'Mastodon', name: 'Mastodon profile', hint: 'The full URL to your profile', url_pattern: '%(username)s' },
  medium: { text: 'Medium', name: 'Medium username', hint: '', url_pattern: 'https://%(username)s.medium.com' },
  pinterest: { text: 'Pinterest', name: 'Pinterest username', hint: '', url_pattern: 'https://www.pinterest.com/%(username)s' },
  reddit: { text: 'Reddit', name: 'Reddit username', hint: '', url_pattern: 'https://www.reddit.com/user/%(username)s' },
  snapchat: { text: 'Snapchat', name: 'Snapchat username', hint: '', url_pattern: 'https://www.snapchat.com/@%(username)s' },
  threads: { text: 'Threads', name: 'Threads username', hint: '', url_pattern: 'https://www.threads.com/@%(username)s' },
  tiktok: { text: 'TikTok', name: 'TikTok username', hint: '', url_pattern: 'https://www.tiktok.com/@%(username)s' },
  twitch: { text: 'Twitch', name: 'Twitch username', hint: '', url_pattern: 'https://www.twitch.tv/%(username)s' },
  x: { text: 'X', name: 'X username', hint: '', url_pattern: 'https://x.com/%(username)s' },
  youtube: { text: 'YouTube', name: 'YouTube handle', hint: '', url_pattern: 'https://www.youtube.com/%(username)s' },
};

/** field_data as the API takes it: a dict whose values are strings or dicts of strings. */
export type FieldData = Record<string, string | Record<string, string>>;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A practical equivalent of Django's URLValidator: http(s)/ftp(s) scheme, a
 * host that is a dotted domain, localhost or an IP literal, no whitespace.
 */
export function isValidUrl(s: string): boolean {
  if (s.length > 2048 || /\s/.test(s)) return false;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(u.protocol)) return false;
  const host = u.hostname;
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]/i.test(s)) return false;
  if (host === 'localhost' || /^\[[0-9a-f:.]+\]$/i.test(host) || /^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return true;
  return /^(?:[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?\.)+(?:[a-z\u00a1-\uffff-]{2,63}|xn--[a-z0-9]{1,59})\.?$/i.test(host);
}

function checkRequiredString(varName: string, v: unknown): string {
  if (typeof v !== 'string') throw badRequest(`${varName} is not a string`);
  if (!v.trim()) throw badRequest(`${varName} cannot be blank.`);
  return v;
}

/** check_dict_only on one value: required keys, optional keys, nothing else. */
function checkDictOnly(varName: string, v: unknown, required: Record<string, (n: string, x: unknown) => void>, optional: Record<string, (n: string, x: unknown) => void> = {}): void {
  if (!isPlainObject(v)) throw badRequest(`${varName} is not a dict`);
  for (const [k, check] of Object.entries(required)) {
    if (!(k in v)) throw badRequest(`${k} key is missing from ${varName}`);
    check(`${varName}["${k}"]`, v[k]);
  }
  for (const [k, check] of Object.entries(optional)) if (k in v) check(`${varName}["${k}"]`, v[k]);
  const extra = Object.keys(v).filter((k) => !(k in required) && !(k in optional));
  if (extra.length) throw badRequest(`Unexpected arguments: ${extra.join(', ')}`);
}

function checkUrlPattern(varName: string, v: unknown): void {
  if (typeof v !== 'string') throw badRequest(`${varName} is not a string`);
  if (v.split('%(username)s').length !== 2) throw badRequest("URL pattern must contain '%(username)s'.");
  if (!isValidUrl(v.replace('%(username)s', 'username'))) throw badRequest(`${varName} is not a URL`);
}

/** validate_custom_field_data: choices for SELECT, the subtype for EXTERNAL_ACCOUNT. */
export function validateFieldData(fieldType: number, fieldData: FieldData): void {
  if (fieldType === FIELD_SELECT) {
    if (Object.keys(fieldData).length < 1) throw badRequest('Field must have at least one choice.');
    const texts = new Set<string>();
    for (const [key, value] of Object.entries(fieldData)) {
      if (!key.trim()) throw badRequest("'value' cannot be blank.");
      checkDictOnly('field_data', value, { text: checkRequiredString, order: checkRequiredString });
      texts.add((value as Record<string, string>).text!);
    }
    if (texts.size !== Object.keys(fieldData).length) throw badRequest('Field must not have duplicate choices.');
  } else if (fieldType === FIELD_EXTERNAL_ACCOUNT) {
    checkDictOnly('field_data', fieldData, { subtype: checkRequiredString }, { url_pattern: checkUrlPattern });
    const subtype = fieldData.subtype as string;
    if (!Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNTS, subtype) && subtype !== 'custom') throw badRequest('Invalid external account type');
  }
}

/** A built-in external account field takes its label and hint from DEFAULT_EXTERNAL_ACCOUNTS. */
export function isDefaultExternalField(fieldType: number, fieldData: FieldData): boolean {
  return fieldType === FIELD_EXTERNAL_ACCOUNT && fieldData.subtype !== 'custom';
}

/** validate_custom_profile_field: data, then label and hint, then type, then summary display. */
export function validateField(name: string, hint: string, fieldType: number, fieldData: FieldData, displayInProfileSummary: boolean): void {
  validateFieldData(fieldType, fieldData);
  if (!isDefaultExternalField(fieldType, fieldData)) {
    if (!name.trim()) throw badRequest('Label cannot be blank.');
    if (hint.length > FIELD_HINT_MAX_LENGTH) throw badRequest(`hint is too long (limit: ${FIELD_HINT_MAX_LENGTH} characters)`);
    if (name.length > FIELD_NAME_MAX_LENGTH) throw badRequest(`name is too long (limit: ${FIELD_NAME_MAX_LENGTH} characters)`);
  }
  if (!TYPE_IDS.has(fieldType)) throw badRequest('Invalid field type.');
  if (displayInProfileSummary && (fieldType === FIELD_LONG_TEXT || fieldType === FIELD_USER)) {
    throw badRequest('Field type not supported for display in profile summary.');
  }
}

/** The stored field_data text: JSON for choice and external account fields, '' for the others. */
export function storedFieldData(fieldType: number, fieldData: FieldData): string {
  return fieldType === FIELD_SELECT || fieldType === FIELD_EXTERNAL_ACCOUNT ? JSON.stringify(fieldData) : '';
}

export function parseFieldData(stored: string): FieldData {
  if (!stored) return {};
  try {
    const v: unknown = JSON.parse(stored);
    return isPlainObject(v) ? (v as FieldData) : {};
  } catch {
    return {};
  }
}

function checkCappedString(varName: string, v: unknown, max: number): string {
  if (typeof v !== 'string') throw badRequest(`${varName} is not a string`);
  if (v.length > max) throw badRequest(`${varName} is too long (limit: ${max} characters)`);
  return v;
}

/** A field as the value validators see it. */
export interface FieldForValue {
  readonly name: string;
  readonly field_type: number;
  readonly field_data: string;
}

/** Users a user-list value may name: found in the realm, active, not bots. */
export interface UserLookup {
  (ids: readonly number[]): Promise<Map<number, { is_active: number; is_bot: number }>>;
}

/**
 * Validates one value for a field (validate_user_custom_profile_field) and
 * returns the stored text: the string itself, or the JSON list of user ids.
 */
export async function validateFieldValue(field: FieldForValue, value: unknown, lookupUsers: UserLookup): Promise<string> {
  const varName = field.name;
  switch (field.field_type) {
    case FIELD_SHORT_TEXT:
    case FIELD_EXTERNAL_ACCOUNT:
    case FIELD_PRONOUNS:
      return checkCappedString(varName, value, 50);
    case FIELD_LONG_TEXT:
      return checkCappedString(varName, value, 500);
    case FIELD_DATE: {
      if (typeof value !== 'string') throw badRequest(`${varName} is not a string`);
      if (!isIsoDate(value)) throw badRequest(`${varName} is not a date`);
      return value;
    }
    case FIELD_URL: {
      if (typeof value !== 'string') throw badRequest(`${varName} is not a string`);
      if (!isValidUrl(value)) throw badRequest(`${varName} is not a URL`);
      return value;
    }
    case FIELD_SELECT: {
      if (typeof value !== 'string') throw badRequest(`${varName} is not a string`);
      if (!Object.hasOwn(parseFieldData(field.field_data), value)) {
        throw badRequest(`'${value}' is not a valid choice for '${varName}'.`);
      }
      return value;
    }
    case FIELD_USER: {
      if (!Array.isArray(value)) throw badRequest('User IDs is not a list');
      value.forEach((v, i) => {
        if (!Number.isInteger(v)) throw badRequest(`User IDs[${i}] is not an integer`);
      });
      const ids = value as number[];
      const found = await lookupUsers(ids);
      const invalid = ids.filter((id) => !found.has(id));
      if (invalid.length) throw badRequest(`Invalid user IDs: ${invalid.join(', ')}`);
      for (const id of ids) {
        const u = found.get(id)!;
        if (!u.is_active) throw badRequest(`User with ID ${id} is deactivated`);
        if (u.is_bot) throw badRequest(`User with ID ${id} is a bot`);
      }
      return JSON.stringify(ids);
    }
    default:
      throw badRequest('Invalid field type.');
  }
}

/** Python's date.fromisoformat(v).isoformat() == v: exactly YYYY-MM-DD and a real date. */
export function isIsoDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
  return d <= days;
}

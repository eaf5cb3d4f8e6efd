// URL handling shared by Markdown links, autolinks, linkifiers and channel links:
// Zulip's scheme allow-list, realm-relative rewriting, the narrow-hash encoding and the
// autolink ("web link") regular expression.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// IANA's TLD list, shipped as data in the `tlds` package (nothing is fetched at run time).
const IANA_TLDS: string[] = require('tlds') as string[];

/** Schemes Zulip lets through; anything else leaves `[label](url)` as literal text. */
const ALLOWED_SCHEMES = new Set([
  'http', 'https', 'ftp', 'file', 'bitcoin', 'geo', 'im', 'irc', 'ircs', 'magnet', 'mailto',
  'matrix', 'mms', 'news', 'nntp', 'openpgp4fpr', 'sip', 'sms', 'smsto', 'ssh', 'tel', 'urn',
  'webcal', 'wtai', 'xmpp',
]);

interface UrlParts { scheme: string; netloc: string; path: string; query: string; fragment: string }

/** Splits like Python's urllib.parse.urlsplit, which Zulip's sanitiser relies on. */
function splitUrl(url: string): UrlParts {
  let rest = url;
  let scheme = '';
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1]!.toLowerCase();
    rest = rest.slice(m[0].length);
  }
  let netloc = '';
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?#]/);
    netloc = end < 0 ? rest.slice(2) : rest.slice(2, end + 2);
    rest = end < 0 ? '' : rest.slice(end + 2);
  }
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  return { scheme, netloc, path: rest, query, fragment };
}

function joinUrl(p: UrlParts): string {
  let url = p.path;
  if (p.netloc || (p.scheme && NETLOC_SCHEMES.has(p.scheme) && !url.startsWith('//'))) {
    if (url && !url.startsWith('/')) url = '/' + url;
    url = '//' + p.netloc + url;
  }
  if (p.scheme) url = p.scheme + ':' + url;
  if (p.query) url += '?' + p.query;
  if (p.fragment) url += '#' + p.fragment;
  return url;
}
// Python's uses_netloc list, restricted to schemes we allow.
const NETLOC_SCHEMES = new Set(['http', 'https', 'ftp', 'file', 'nntp', 'sip', 'ssh', 'wais', 'telnet', 'imap', 'mms']);

/**
 * Zulip's sanitize_url: returns the href to use, or null when the link must stay text
 * (disallowed scheme such as javascript:). Schemeless URLs get "http://"; "/path" and
 * "#frag" stay relative; "user@host" becomes mailto:.
 */
export function sanitizeUrl(url: string, depth = 0): string | null {
  const p = splitUrl(url.replace(/ /g, '%20'));
  if (!p.scheme && !p.netloc && p.path.includes('@')) {
    return joinUrl({ ...p, scheme: 'mailto' });
  }
  if (!p.scheme && !p.netloc && p.path.startsWith('/')) return joinUrl(p);
  if (!p.scheme && !p.netloc && !p.path && !p.query && p.fragment) return '#' + p.fragment;
  if (!p.scheme) return depth > 0 ? null : sanitizeUrl('http://' + url, depth + 1);
  if (!ALLOWED_SCHEMES.has(p.scheme)) return null;
  return joinUrl(p);
}

/** Links into the realm itself (#narrow, uploads) become relative so they open in place. */
export function rewriteLocalLink(realmUrl: string, href: string): string {
  const prefix = realmUrl + '/';
  if (href.startsWith(prefix + '#') || href.startsWith(prefix + 'user_uploads/')) {
    return href.slice(prefix.length);
  }
  return href;
}

/**
 * Zulip's narrow-hash component encoding: percent-encode (keeping A-Za-z0-9_.-~*),
 * then "." -> ".2E" and "%" -> ".", so "R&D" -> "R.26D", "a.b c" -> "a.2Eb.20c".
 */
export function encodeHashComponent(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    if (/[A-Za-z0-9_\-~*]/.test(ch)) out += ch;
    else out += '.' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** "9-ops" style channel slug used in narrow URLs. */
export function channelSlug(id: number, name: string): string {
  return `${id}-${encodeHashComponent(name.replace(/ /g, '-'))}`;
}

// Zulip leaves out TLDs that are far more common as file extensions.
const EXCLUDED_TLDS = new Set(['java', 'md', 'mov', 'py', 'zip']);
const TLD_SET = new Set(IANA_TLDS.map((t) => t.toLowerCase()).filter((t) => !EXCLUDED_TLDS.has(t)));

/** True when `label` is a TLD that schemeless autolinks accept. */
export function isAutolinkTld(label: string): boolean {
  return TLD_SET.has(label);
}

// The web-link regex. A URL must start after start/whitespace or one of '"(,:<, may
// contain up to six levels of balanced parentheses in its path, and must be followed by
// optional trailing punctuation and then whitespace or the end of the text. Instead of
// a 1,400-way TLD alternation, the last domain label is captured (group "tld") and the
// caller checks it against the IANA list; the result is the same because a TLD must be
// followed by "/", punctuation or the end, which a longer label never is.
function buildWebLinkSource(): string {
  const W = '[\\p{L}\\p{N}\\p{M}_]';
  const inner = '[^\\s()"]*';
  const group = '[^\\s()"]*?(?:\\(%s\\)[^\\s()"]*?)*';
  let chunk = group;
  for (let i = 0; i < 6; i++) chunk = chunk.replace('%s', group);
  chunk = chunk.replace('%s', inner);
  const domain = `(?:https?://(?:${W}|[.:@-])+?|(?:(?:${W}|-)+\\.)+(?<tld>(?:${W}|-)+))`;
  const email = `(?:(?:${W}|[.-])+@(?:${W}|[.-])+\\.${W}+)`;
  const bitcoin = '(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34})';
  return `(?<![^\\s'"(,:<])(?<url>${domain}(?:/${chunk})?|${email}|${bitcoin})(?=[!:;?),.'">]*(?:$|\\s))`;
}
export const WEB_LINK_SOURCE = buildWebLinkSource();

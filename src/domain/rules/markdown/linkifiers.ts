// Realm linkifiers: RE2-style patterns with named groups plus RFC 6570 URL templates.
// The same compiled patterns drive inline links and a message's topic_links.
import { element, escapeText } from './html.js';
import type { InlinePattern } from './inline-engine.js';
import { noteLink } from './inline-format.js';
import { rewriteLocalLink, sanitizeUrl, WEB_LINK_SOURCE } from './links.js';
import type { Linkifier } from './types.js';

interface Compiled { re: RegExp; template: string }
const cache = new Map<string, Compiled | null>();

/**
 * Wraps the realm's pattern so that it only matches after start, whitespace or one of
 * '"(,:< and is not followed by a letter or digit. Python's "(?P<name>" becomes JS
 * "(?<name>". Patterns JS cannot compile are skipped (null).
 */
function compile(l: Linkifier): Compiled | null {
  const key = `${l.pattern}\u0000${l.urlTemplate}`;
  if (cache.has(key)) return cache.get(key)!;
  let compiled: Compiled | null = null;
  try {
    const source = l.pattern.replace(/\(\?P</g, '(?<');
    const re = new RegExp(`(?<=^|[\\s'"(,:<\\p{Zs}])(?<__outer>${source})(?![\\p{L}\\p{N}])`, 'gu');
    compiled = { re, template: l.urlTemplate };
  } catch {
    compiled = null;
  }
  if (cache.size > 1000) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]/;
function pct(value: string, allowReserved: boolean): string {
  let out = '';
  for (const ch of value) {
    if ((allowReserved ? RESERVED : UNRESERVED).test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** RFC 6570 level-3 expansion of simple string variables ({x} {+x} {#x} {/x} {?x,y} ...). */
export function expandUrlTemplate(template: string, vars: Record<string, string | undefined>): string {
  return template.replace(/\{([+#./;?&]?)([^}]*)\}/g, (_all, op: string, list: string) => {
    const names = list.split(',').map((n) => n.trim()).filter(Boolean);
    const defined = names.filter((n) => vars[n] !== undefined);
    if (!defined.length) return '';
    const reserved = op === '+' || op === '#';
    const enc = (n: string) => pct(vars[n]!, reserved);
    switch (op) {
      case '': case '+': return defined.map(enc).join(',');
      case '#': return '#' + defined.map(enc).join(',');
      case '.': return '.' + defined.map(enc).join('.');
      case '/': return '/' + defined.map(enc).join('/');
      case ';': return defined.map((n) => `;${n}${vars[n] ? '=' + enc(n) : ''}`).join('');
      case '?': return '?' + defined.map((n) => `${n}=${enc(n)}`).join('&');
      case '&': return defined.map((n) => `&${n}=${enc(n)}`).join('');
      default: return '';
    }
  });
}

function varsOf(m: RegExpExecArray): Record<string, string | undefined> {
  const vars: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(m.groups ?? {})) if (k !== '__outer') vars[k] = v;
  return vars;
}

/** One inline pattern per linkifier, in the realm's order. */
export function linkifierPatterns(linkifiers: readonly Linkifier[]): InlinePattern[] {
  const out: InlinePattern[] = [];
  for (const l of linkifiers) {
    const c = compile(l);
    if (!c) continue;
    let last: RegExpExecArray | null = null;
    out.push({
      name: `linkifier-${l.id}`,
      find: (text, from) => {
        c.re.lastIndex = from;
        const m = c.re.exec(text);
        last = m;
        if (!m) return null;
        return { index: m.index, end: m.index + m[0].length, groups: [...m], named: m.groups ?? {} };
      },
      handle: (m, _data, run) => {
        if (!last || m.groups[0] === '') return null;
        let href = sanitizeUrl(expandUrlTemplate(c.template, varsOf(last)));
        if (href === null) return null;
        href = rewriteLocalLink(run.state.ctx.realmUrl, href);
        noteLink(run, href);
        return { node: { kind: 'html', html: element('a', { href }, escapeText(m.groups[0]!)) } };
      },
    });
  }
  return out;
}

const topicUrlRe = new RegExp(WEB_LINK_SOURCE, 'gu');

/**
 * A topic's links: linkifier matches and raw URLs, ordered by position; where matches
 * overlap the earlier one (or, at the same spot, the higher-priority linkifier) wins.
 * Schemeless raw URLs get "https://".
 */
export function topicLinks(topic: string, linkifiers: readonly Linkifier[]): { text: string; url: string }[] {
  const found: { text: string; url: string; index: number; precedence: number }[] = [];
  linkifiers.forEach((l, precedence) => {
    const c = compile(l);
    if (!c) return;
    c.re.lastIndex = 0;
    for (let m = c.re.exec(topic); m; m = c.re.exec(topic)) {
      if (m[0] === '') { c.re.lastIndex++; continue; }
      found.push({ text: m[0], url: expandUrlTemplate(c.template, varsOf(m)), index: m.index, precedence });
    }
  });
  topicUrlRe.lastIndex = 0;
  for (let m = topicUrlRe.exec(topic); m; m = topicUrlRe.exec(topic)) {
    const url = m.groups!['url']!;
    const full = /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `https://${url}`;
    found.push({ text: url, url: full, index: m.index, precedence: Number.MAX_SAFE_INTEGER });
  }
  found.sort((a, b) => a.index - b.index || a.precedence - b.precedence);
  const out: { text: string; url: string }[] = [];
  let end = -1;
  for (const f of found) {
    if (f.index < end) continue;
    out.push({ text: f.text, url: f.url });
    end = f.index + f.text.length;
  }
  return out;
}

// Narrows: what the feed shows. Kept in the URL hash in Zulip's form
// (#narrow/channel/<id>-<name>/topic/<topic>, #narrow/dm/<ids>-<name>, ...), parsed
// from the search box's operators, sent to GET /messages as the narrow array, and
// matched against live messages to decide whether a new message belongs in the view.
import type { Message, NarrowTerm } from './types';

export type Route =
  | { view: 'inbox' }
  | { view: 'recent' }
  | { view: 'drafts' }
  | { view: 'feed'; narrow: NarrowTerm[]; near?: number };

/** Zulip's hash component encoding: percent-encoding with '.' in place of '%'. */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/\./g, '%2E').replace(/%/g, '.');
}

export function decodeHashComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\./g, '%'));
  } catch {
    return s;
  }
}

export interface NameLookup {
  channelName(id: number): string | undefined;
  userName(id: number): string | undefined;
  userEmail(id: number): string | undefined;
  channelId(name: string): number | undefined;
  /** A user id for an email or full name (case-insensitive). */
  userId(emailOrName: string): number | undefined;
  myId: number;
}

function slug(s: string | undefined): string {
  return s ? '-' + encodeHashComponent(s.replace(/\s+/g, '-')) : '';
}

export function routeToHash(r: Route, names: NameLookup): string {
  if (r.view !== 'feed') return '#' + r.view;
  if (r.narrow.length === 0 && r.near === undefined) return '#feed';
  const parts: string[] = ['#narrow'];
  for (const t of r.narrow) {
    const op = (t.negated ? '-' : '') + t.operator;
    if (t.operator === 'channel' && typeof t.operand === 'number')
      parts.push(op, t.operand + slug(names.channelName(t.operand)));
    else if (t.operator === 'dm' && Array.isArray(t.operand))
      parts.push(op, t.operand.join(',') + (t.operand.length === 1 ? slug(names.userName(t.operand[0]!)) : '-group'));
    else if (t.operator === 'sender' && typeof t.operand === 'number')
      parts.push(op, t.operand + slug(names.userName(t.operand)));
    else parts.push(op, encodeHashComponent(String(t.operand)));
  }
  if (r.near !== undefined) parts.push('near', String(r.near));
  return parts.join('/');
}

export function hashToRoute(hash: string): Route | undefined {
  const h = hash.replace(/^#/, '');
  if (h === 'inbox' || h === 'recent' || h === 'drafts') return { view: h };
  if (h === 'feed' || h === 'all_messages') return { view: 'feed', narrow: [] };
  const parts = h.split('/');
  if (parts[0] !== 'narrow') return undefined;
  const narrow: NarrowTerm[] = [];
  let near: number | undefined;
  for (let i = 1; i + 1 < parts.length; i += 2) {
    let op = parts[i]!;
    const raw = parts[i + 1]!;
    const negated = op.startsWith('-');
    if (negated) op = op.slice(1);
    if (op === 'stream') op = 'channel';
    if (op === 'pm-with') op = 'dm';
    if (op === 'subject') op = 'topic';
    let operand: NarrowTerm['operand'];
    if (op === 'near' || op === 'with') {
      near = Number.parseInt(raw, 10);
      continue;
    }
    if (op === 'channel' || op === 'sender') {
      const id = Number.parseInt(raw, 10);
      operand = Number.isFinite(id) ? id : decodeHashComponent(raw);
    } else if (op === 'dm') {
      operand = raw.split('-')[0]!.split(',').map((x) => Number.parseInt(x, 10)).filter(Number.isFinite);
    } else operand = decodeHashComponent(raw);
    narrow.push(negated ? { operator: op, operand, negated } : { operator: op, operand });
  }
  return near === undefined ? { view: 'feed', narrow } : { view: 'feed', narrow, near };
}

/** Splits a search box query into words, keeping "quoted phrases" whole. */
function tokens(q: string): string[] {
  const out: string[] = [];
  const re = /(-?[a-z-]+:)?"([^"]*)"|\S+/gi;
  for (let m = re.exec(q); m; m = re.exec(q)) out.push(m[2] !== undefined ? (m[1] ?? '') + m[2] : m[0]);
  return out;
}

const KNOWN = new Set(['channel', 'stream', 'topic', 'dm', 'pm-with', 'sender', 'from', 'is', 'has', 'search', 'dm-including', 'channels', 'id']);

/**
 * Parses Zulip's search syntax: `channel:general topic:"lunch plans" sender:me is:starred
 * dm:iago@example.com free text`. Returns an error sentence for a name that matches nothing.
 */
export function parseSearch(q: string, names: NameLookup): { narrow: NarrowTerm[] } | { error: string } {
  const narrow: NarrowTerm[] = [];
  const free: string[] = [];
  for (const tok of tokens(q.trim())) {
    const m = /^(-?)([a-z-]+):(.*)$/i.exec(tok);
    if (!m || !KNOWN.has(m[2]!.toLowerCase())) {
      free.push(tok);
      continue;
    }
    const negated = m[1] === '-';
    let op = m[2]!.toLowerCase();
    const val = m[3]!;
    if (op === 'stream') op = 'channel';
    if (op === 'pm-with') op = 'dm';
    if (op === 'from') op = 'sender';
    let operand: NarrowTerm['operand'] = val;
    if (op === 'channel') {
      const id = names.channelId(val.replace(/^#/, ''));
      if (id === undefined) return { error: `No channel named "${val}".` };
      operand = id;
    } else if (op === 'sender' || op === 'dm-including') {
      const id = val === 'me' ? names.myId : names.userId(val);
      if (id === undefined) return { error: `No user "${val}".` };
      operand = id;
    } else if (op === 'dm') {
      const ids: number[] = [];
      for (const part of val.split(',').filter(Boolean)) {
        const id = part === 'me' ? names.myId : names.userId(part.trim());
        if (id === undefined) return { error: `No user "${part}".` };
        ids.push(id);
      }
      operand = ids;
    } else if (op === 'id') {
      operand = Number.parseInt(val, 10);
    } else if (op === 'is' || op === 'has') operand = val.toLowerCase();
    narrow.push(negated ? { operator: op, operand, negated } : { operator: op, operand });
  }
  if (free.length) narrow.push({ operator: 'search', operand: free.join(' ') });
  return { narrow };
}

/** The search box text for a narrow (the inverse of parseSearch). */
export function narrowToSearch(narrow: NarrowTerm[], names: NameLookup): string {
  const quote = (s: string) => (/\s/.test(s) ? `"${s}"` : s);
  return narrow
    .map((t) => {
      const neg = t.negated ? '-' : '';
      if (t.operator === 'search') return String(t.operand);
      if (t.operator === 'channel') return `${neg}channel:${quote(names.channelName(Number(t.operand)) ?? String(t.operand))}`;
      if (t.operator === 'sender') return `${neg}sender:${names.userEmail(Number(t.operand)) ?? String(t.operand)}`;
      if (t.operator === 'dm' && Array.isArray(t.operand))
        return `${neg}dm:${t.operand.map((id) => names.userEmail(id) ?? id).join(',')}`;
      return `${neg}${t.operator}:${quote(String(t.operand))}`;
    })
    .join(' ');
}

export function dmIds(m: Message): number[] {
  return Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => r.id) : [];
}

/** The other participants of a DM (all ids without me; [me] for a DM with oneself). */
export function dmPeers(m: Message, me: number): number[] {
  const ids = dmIds(m).filter((id) => id !== me);
  return ids.length ? ids.sort((a, b) => a - b) : [me];
}

function termMatches(t: NarrowTerm, m: Message, me: number): boolean | undefined {
  switch (t.operator) {
    case 'channel':
      return m.type === 'stream' && m.stream_id === t.operand;
    case 'topic':
      return m.type === 'stream' && m.subject.toLowerCase() === String(t.operand).toLowerCase();
    case 'sender':
      return m.sender_id === t.operand;
    case 'dm': {
      if (m.type !== 'private' || !Array.isArray(t.operand)) return false;
      const want = new Set([...t.operand, me]);
      const have = new Set(dmIds(m));
      return want.size === have.size && [...want].every((id) => have.has(id));
    }
    case 'dm-including':
      return m.type === 'private' && dmIds(m).includes(Number(t.operand));
    case 'is':
      if (t.operand === 'starred') return m.flags.includes('starred');
      if (t.operand === 'mentioned')
        return m.flags.some((f) => f === 'mentioned' || f === 'wildcard_mentioned' || f === 'stream_wildcard_mentioned' || f === 'topic_wildcard_mentioned' || f === 'has_alert_word');
      if (t.operand === 'dm' || t.operand === 'private') return m.type === 'private';
      if (t.operand === 'unread') return !m.flags.includes('read');
      return undefined;
    default:
      return undefined; // search, has:... : only the server knows
  }
}

/** true/false when the client can tell whether a message is in the narrow; undefined when it cannot. */
export function narrowMatches(narrow: NarrowTerm[], m: Message, me: number): boolean | undefined {
  let unknown = false;
  for (const t of narrow) {
    const r = termMatches(t, m, me);
    if (r === undefined) unknown = true;
    else if (r === !!t.negated) return false;
  }
  return unknown ? undefined : true;
}

export function narrowKey(narrow: NarrowTerm[]): string {
  return JSON.stringify(narrow);
}

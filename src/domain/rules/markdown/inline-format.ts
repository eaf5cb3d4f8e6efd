// Inline patterns for formatting and links: code spans, emphasis, TeX, Markdown links,
// autolinks, entities and line breaks. Regexes follow Zulip's (spec §1, §3, §4, §9).
import { element, escapeCode, escapeText, openTag } from './html.js';
import { regexFinder, type HandleResult, type InlinePattern, type InlineRun, type PatternMatch } from './inline-engine.js';
import { isAutolinkTld, rewriteLocalLink, sanitizeUrl, WEB_LINK_SOURCE } from './links.js';
import { renderInlineTex } from './math.js';

const el = (tag: string, inner: string, attrs?: Record<string, string>): HandleResult['node'] =>
  ({ kind: 'element', open: openTag(tag, attrs), inner, close: `</${tag}>` });

/**
 * Finds code spans with the semantics of Zulip's regex (?<!\\)(`+)(.+?)(?<!`)\1(?!`):
 * the leftmost opening (not after a backslash, longest run first) that is closed by a
 * later, separate run of exactly as many backticks, with at least one character between.
 * A scanner over backtick runs replaces the regex, whose backtracking is cubic on long
 * runs of backticks (a 5,000-backtick line took over a minute).
 */
function findCodeSpan(text: string, from: number): PatternMatch | null {
  const first = text.indexOf('`', from);
  if (first < 0) return null;
  const runsByLength = new Map<number, number[]>(); // run length -> run starts, ascending
  for (let i = first; i < text.length; ) {
    if (text[i] !== '`') { i++; continue; }
    let j = i;
    while (j < text.length && text[j] === '`') j++;
    const list = runsByLength.get(j - i) ?? [];
    list.push(i);
    runsByLength.set(j - i, list);
    i = j;
  }
  const lengths = [...runsByLength.keys()].sort((a, b) => b - a);
  for (let i = first; i < text.length; i++) {
    if (text[i] !== '`' || text[i - 1] === '\\') continue;
    let avail = 0;
    while (text[i + avail] === '`') avail++;
    for (const n of lengths) {
      if (n > avail) continue;
      const starts = runsByLength.get(n)!;
      // First run of length n starting at or after i + n + 1 (binary search).
      let lo = 0;
      let hi = starts.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid]! < i + n + 1) lo = mid + 1;
        else hi = mid;
      }
      if (lo < starts.length) {
        const close = starts[lo]!;
        return { index: i, end: close + n, groups: [text.slice(i, close + n), text.slice(i, i + n), text.slice(i + n, close)], named: {} };
      }
    }
  }
  return null;
}

/** `code`: a run of N backticks closes on the next run of exactly N; content verbatim. */
export const backtick: InlinePattern = {
  name: 'backtick',
  find: findCodeSpan,
  handle: (m) => ({ node: { kind: 'html', html: `<code>${escapeCode(m.groups[2]!)}</code>` } }),
};

/** ***x*** -> <strong><em>x</em></strong>. ("^" is excluded too, as in Zulip's regex.) */
export const strongEm: InlinePattern = {
  name: 'strong_em',
  find: regexFinder(/(\*\*\*)(?!\s+)([^*^\n]+)(?<!\s)\*\*\*/gu, /\*\*\*/),
  handle: (m) => ({ node: { kind: 'element', open: '<strong><em>', inner: m.groups[2]!, close: '</em></strong>' } }),
};

/** $$tex$$ inline math, not touching word characters or other "$". */
export const tex: InlinePattern = {
  name: 'tex',
  find: regexFinder(/(?<![\p{L}\p{N}_])(?<!\$)\$\$(?<body>[^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)(?![\p{L}\p{N}_])/gu, /\$\$/),
  handle: (m) => ({ node: { kind: 'html', html: renderInlineTex(m.named['body']!) } }),
};

/** Records a link target for RenderResult.links. */
export function noteLink(run: InlineRun, href: string): void {
  if (!run.state.linkSet.has(href)) {
    run.state.linkSet.add(href);
    run.state.result.links.push(href);
  }
}

/** Parses "(href "title")" after a link label, with balanced parentheses. */
function parseLinkTarget(data: string, index: number): { href: string; title?: string; end: number } | null {
  if (data[index] !== '(') return null;
  let depth = 1;
  let pos = index + 1;
  for (; pos < data.length; pos++) {
    const c = data[pos];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) break;
  }
  if (depth !== 0) return null;
  let inside = data.slice(index + 1, pos).trim();
  let title: string | undefined;
  const t = /^(.*?)\s+(?:"([^"]*)"|'([^']*)')$/su.exec(inside);
  if (t) {
    inside = t[1]!;
    title = t[2] ?? t[3];
  }
  if (inside.startsWith('<') && inside.endsWith('>')) inside = inside.slice(1, -1);
  return { href: inside.trim(), title, end: pos + 1 };
}

/** [label](url "title"); the label is atomic text; bad schemes leave everything literal. */
export const link: InlinePattern = {
  name: 'link',
  find: regexFinder(/(?<!!)\[/g, /\[/),
  handle: (m, data, run) => {
    let depth = 1;
    let pos = m.end;
    for (; pos < data.length; pos++) {
      const c = data[pos];
      if (c === '[') depth++;
      else if (c === ']' && --depth === 0) break;
    }
    if (depth !== 0) return null;
    const label = data.slice(m.end, pos);
    const target = parseLinkTarget(data, pos + 1);
    // A target that swallowed an earlier match (e.g. a code span) is not a usable URL.
    if (!target || target.href.includes('\u0002')) return null;
    let href = sanitizeUrl(target.href);
    if (href === null) return null;
    href = rewriteLocalLink(run.state.ctx.realmUrl, href);
    noteLink(run, href);
    const text = label.trim() === '' ? href : label;
    run.state.previewLinks?.push({ href, label: text });
    const attrs: Record<string, string> = { href };
    if (target.title !== undefined) attrs['title'] = target.title;
    return {
      // The label may hold earlier matches (code, mentions); they render inside the link.
      node: { kind: 'html', html: element('a', attrs, run.expand(text)) },
      end: target.end,
    };
  },
};

/** Builds <a href>text</a> for a bare URL (a preview candidate), or atomic text when the scheme is refused. */
function urlToLink(run: InlineRun, url: string): HandleResult['node'] {
  let href = sanitizeUrl(url);
  if (href === null) return { kind: 'text', text: url };
  href = rewriteLocalLink(run.state.ctx.realmUrl, href);
  noteLink(run, href);
  run.state.previewLinks?.push({ href });
  return { kind: 'html', html: element('a', { href }, escapeText(url)) };
}

const webLinkRe = new RegExp(WEB_LINK_SOURCE, 'gu');
/** Bare URLs, schemeless domains with a real TLD, e-mail addresses, bitcoin: addresses. */
export const autolink: InlinePattern = {
  name: 'autolink',
  find: regexFinder(webLinkRe, /[.@:]/),
  handle: (m, _data, run) => {
    const url = m.named['url']!;
    if (url.includes('\u0002')) return null; // ran into an earlier match: not a URL
    const tld = m.named['tld'];
    if (tld !== undefined && !url.includes('://') && !isAutolinkTld(tld)) return null;
    return { node: urlToLink(run, url) };
  },
};

/** HTML entities (&copy; &#39;) pass through untouched. */
export const entity: InlinePattern = {
  name: 'entity',
  find: regexFinder(/&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);/g, /&/),
  handle: (m) => ({ node: { kind: 'html', html: m.groups[0]! } }),
};

/** **x**, single line only. */
export const strong: InlinePattern = {
  name: 'strong',
  find: regexFinder(/(\*\*)([^\n]+?)\*\*/gu, /\*\*/),
  handle: (m) => ({ node: el('strong', m.groups[2]!) }),
};

/** *x*: no surrounding whitespace inside, no "*", "^" or newline; works mid-word. */
export const emphasis: InlinePattern = {
  name: 'emphasis',
  find: regexFinder(/(\*)(?!\s+)([^*^\n]+)(?<!\s)\*/gu, /\*/),
  handle: (m) => ({ node: el('em', m.groups[2]!) }),
};

/** ~~x~~, not touching a third "~". */
export const strikethrough: InlinePattern = {
  name: 'del',
  find: regexFinder(/(?<!~)(~~)([^~\n]+?)(~~)(?!~)/gu, /~~/),
  handle: (m) => ({ node: el('del', m.groups[2]!) }),
};

/**
 * Newline -> <br> followed by "\n". Like Python-Markdown's prettifier, a whitespace-only
 * run between the break and the next element (or the end) is replaced by that "\n".
 */
export const newline: InlinePattern = {
  name: 'nl2br',
  find: regexFinder(/\n(?:[ \t]+(?=\u0002|$))?/g, /\n/),
  handle: () => ({ node: { kind: 'html', html: '<br>\n' } }),
};

// Block structure: markdown-it's block parser, reconfigured to behave like Zulip's
// Python-Markdown setup (spec §1, §2, §5-§8, §15): no setext headings, no reference
// definitions, no raw HTML; Zulip's fences (code, quote, math, spoiler, nesting); lists
// that nest with 2-space indents; the "hanging list" fix; bare ">" is not a quote.
import MarkdownIt from 'markdown-it';
import type StateBlock from 'markdown-it/lib/rules_block/state_block.mjs';

type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean;
interface BlockEnv { listDepth?: number }

/** A Zulip fence line: ``` or ~~~ (3+), optional language word and header. */
export const FENCE_RE = /^(?<fence>~{3,}|`{3,})[ ]*(?:\{?\.?(?<lang>[a-zA-Z0-9_+,\-./#]+)[ ]*(?<header>[^ ~`][^~`]*)?\}?)?$/;

const lineText = (s: StateBlock, line: number) => s.src.slice(s.bMarks[line]! + s.tShift[line]!, s.eMarks[line]);

/** The kind of block a fence opens, from its (lower-cased) language word. */
function fenceKind(lang: string): 'quote' | 'math' | 'spoiler' | 'code' {
  if (lang === 'quote' || lang === 'quoted') return 'quote';
  if (lang === 'math') return 'math';
  if (lang === 'spoiler') return 'spoiler';
  return 'code';
}

/**
 * Finds where a fence opened at `start` closes. Inside quote and spoiler fences other
 * fences nest (each closes on its own fence string first); code and math fences only
 * close on their exact fence string. Returns endLine when the fence is never closed.
 */
function findFenceClose(s: StateBlock, start: number, endLine: number, fence: string, nests: boolean): number {
  const stack: { fence: string; nests: boolean }[] = [{ fence, nests }];
  for (let line = start + 1; line < endLine; line++) {
    if (s.sCount[line]! < s.blkIndent && !s.isEmpty(line)) return line;
    const text = lineText(s, line).trimEnd();
    const top = stack[stack.length - 1]!;
    if (text === top.fence) {
      stack.pop();
      if (stack.length === 0) return line;
      continue;
    }
    if (!top.nests) continue;
    const m = FENCE_RE.exec(text);
    if (m) {
      const kind = fenceKind((m.groups!['lang'] ?? '').toLowerCase());
      stack.push({ fence: m.groups!['fence']!, nests: kind === 'quote' || kind === 'spoiler' });
    }
  }
  return endLine;
}

/** Tokenizes lines [from, to) as nested blocks of the current container. */
function tokenizeRange(s: StateBlock, from: number, to: number): void {
  const oldLineMax = s.lineMax;
  const oldParent = s.parentType;
  s.lineMax = to;
  s.parentType = 'blockquote' as StateBlock['parentType'];
  s.md.block.tokenize(s, from, to);
  s.lineMax = oldLineMax;
  s.parentType = oldParent;
}

function makeFenceRule(defaultLanguage: () => string | null | undefined): BlockRule {
  return (s, startLine, endLine, silent) => {
    if (s.sCount[startLine]! - s.blkIndent >= 4) return false;
    const m = FENCE_RE.exec(lineText(s, startLine).trimEnd());
    if (!m) return false;
    if (silent) return true;
    const fence = m.groups!['fence']!;
    let lang = (m.groups!['lang'] ?? '').toLowerCase();
    if (!lang) lang = (defaultLanguage() ?? '').toLowerCase();
    const kind = fenceKind(lang);
    const close = findFenceClose(s, startLine, endLine, fence, kind === 'quote' || kind === 'spoiler');
    const next = close < endLine && lineText(s, close).trimEnd() === fence ? close + 1 : close;
    if (kind === 'quote' || kind === 'spoiler') {
      const open = s.push(kind === 'quote' ? 'blockquote_open' : 'zspoiler_open', kind === 'quote' ? 'blockquote' : 'div', 1);
      open.info = (m.groups!['header'] ?? '').trim();
      open.map = [startLine, next];
      tokenizeRange(s, startLine + 1, close);
      s.push(kind === 'quote' ? 'blockquote_close' : 'zspoiler_close', kind === 'quote' ? 'blockquote' : 'div', -1);
    } else {
      // Code lines are right-trimmed; the container's indentation is removed.
      const lines: string[] = [];
      for (let line = startLine + 1; line < close; line++) {
        lines.push(s.getLines(line, line + 1, s.blkIndent, false).trimEnd());
      }
      const token = s.push(kind === 'math' ? 'zmath' : 'fence', 'code', 0);
      token.info = kind === 'math' ? '' : lang;
      token.content = lines.join('\n');
      token.map = [startLine, next];
    }
    s.line = next;
    return true;
  };
}

interface Marker { ordered: boolean; start: string; contentStart: number }

function parseMarker(s: StateBlock, line: number): Marker | null {
  let pos = s.bMarks[line]! + s.tShift[line]!;
  const max = s.eMarks[line]!;
  const src = s.src;
  const ch = src[pos];
  let ordered = false;
  let start = '';
  if (ch === '*' || ch === '+' || ch === '-') {
    pos++;
  } else {
    const begin = pos;
    while (pos < max && src.charCodeAt(pos) >= 0x30 && src.charCodeAt(pos) <= 0x39) pos++;
    if (pos === begin || pos - begin > 9 || src[pos] !== '.') return null;
    start = src.slice(begin, pos);
    ordered = true;
    pos++;
  }
  if (pos < max && src[pos] !== ' ') return null;
  while (pos < max && src[pos] === ' ') pos++;
  if (pos >= max) return null; // a bare marker is text, as in Python-Markdown
  return { ordered, start, contentStart: pos };
}

/**
 * Lists. A list starts at indent 0-1 of its container; an item's content is indented
 * 2 columns past its marker (Zulip's 2-space nesting, for bullets and numbers alike).
 * At top level a list never interrupts a paragraph (the hanging-list preprocessor adds
 * the blank lines Zulip adds); inside an item a marker line does, so sub-lists nest.
 */
const listRule: BlockRule = (s, startLine, endLine, silent) => {
  const env = s.env as BlockEnv;
  const depth = env.listDepth ?? 0;
  const rel = s.sCount[startLine]! - s.blkIndent;
  // A marker line left of the current item ends that item's paragraph (a sibling item).
  if (rel < 0) return silent && depth > 0 && parseMarker(s, startLine) !== null;
  if (rel > (depth > 0 ? 3 : 1)) return false;
  const first = parseMarker(s, startLine);
  if (!first) return false;
  if (silent) return s.parentType !== 'paragraph' || depth > 0;
  const markerIndent = s.sCount[startLine]!;
  const openIdx = s.tokens.length;
  const open = s.push(first.ordered ? 'ordered_list_open' : 'bullet_list_open', first.ordered ? 'ol' : 'ul', 1);
  if (first.ordered && first.start !== '1') open.attrSet('start', first.start);
  open.map = [startLine, 0];
  const oldParent = s.parentType;
  const oldBlkIndent = s.blkIndent;
  let tight = true;
  let prevEmptyEnd = false;
  let line = startLine;
  env.listDepth = (env.listDepth ?? 0) + 1;
  while (line < endLine) {
    const marker = parseMarker(s, line);
    if (!marker || marker.ordered !== first.ordered || s.sCount[line] !== markerIndent) break;
    const item = s.push('list_item_open', 'li', 1);
    item.map = [line, 0];
    const saved = [s.bMarks[line]!, s.tShift[line]!, s.sCount[line]!] as const;
    s.bMarks[line] = marker.contentStart;
    s.tShift[line] = 0;
    s.sCount[line] = markerIndent + 2;
    s.blkIndent = markerIndent + 2;
    s.tight = true;
    s.parentType = 'list';
    s.md.block.tokenize(s, line, endLine);
    if (!s.tight || prevEmptyEnd) tight = false;
    prevEmptyEnd = s.line - line > 1 && s.isEmpty(s.line - 1);
    [s.bMarks[line], s.tShift[line], s.sCount[line]] = saved;
    s.blkIndent = oldBlkIndent;
    s.parentType = oldParent;
    s.push('list_item_close', 'li', -1);
    line = s.line;
    if (line >= endLine || s.sCount[line]! < s.blkIndent) break;
  }
  env.listDepth -= 1;
  s.push(first.ordered ? 'ordered_list_close' : 'bullet_list_close', first.ordered ? 'ol' : 'ul', -1);
  open.map[1] = line;
  s.line = line;
  if (tight) {
    const level = open.level + 2;
    for (let i = openIdx + 1; i < s.tokens.length; i++) {
      const t = s.tokens[i]!;
      if (t.level === level && (t.type === 'paragraph_open' || t.type === 'paragraph_close')) t.hidden = true;
    }
  }
  return true;
};

/** A block of nothing but ">" markers is plain text, not an empty quote. */
function guardBlockquote(original: BlockRule): BlockRule {
  return (s, startLine, endLine, silent) => {
    let line = startLine;
    let allBare = true;
    for (; line < endLine && /^>/.test(lineText(s, line)); line++) {
      if (!/^(?:>\s*)+$/.test(lineText(s, line))) { allBare = false; break; }
    }
    if (allBare && line > startLine) return false;
    return original(s, startLine, endLine, silent);
  };
}

/** "#" alone (no whitespace after the hashes) is a paragraph in Zulip. */
function guardHeading(original: BlockRule): BlockRule {
  return (s, startLine, endLine, silent) =>
    /^#+$/.test(lineText(s, startLine).trimEnd()) ? false : original(s, startLine, endLine, silent);
}

type RuleFn = Parameters<MarkdownIt['block']['ruler']['at']>[1];

/** One shared, configured parser; realm data reaches it only through `env`. */
export function createBlockParser(defaultLanguage: () => string | null | undefined): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.block.ruler.disable(['lheading', 'reference', 'html_block']);
  const rules = (md.block.ruler as unknown as { __rules__: { name: string; fn: BlockRule }[] }).__rules__;
  const fnOf = (name: string) => rules.find((r) => r.name === name)!.fn;
  md.block.ruler.at('fence', makeFenceRule(defaultLanguage) as RuleFn, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });
  md.block.ruler.at('list', listRule as RuleFn, { alt: ['paragraph', 'reference', 'blockquote'] });
  md.block.ruler.at('blockquote', guardBlockquote(fnOf('blockquote')) as RuleFn, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });
  md.block.ruler.at('heading', guardHeading(fnOf('heading')) as RuleFn, { alt: ['paragraph', 'reference', 'blockquote'] });
  // Inline content is rendered by our own engine (inline-engine.ts), not markdown-it's.
  md.core.ruler.disable(['inline', 'linkify', 'replacements', 'smartquotes', 'text_join']);
  return md;
}

const LIST_LINE = /^[ ]*([*+-]|\d\.)[ ]+(.*)/;
const ANY_FENCE = /^[ ]*(?<fence>~{3,}|`{3,})[ ]*(?:\{?\.?(?<lang>[a-zA-Z0-9_+,\-./#]+))?/;

/**
 * Zulip's source preprocessing: tabs expanded to 4-column stops, and a blank line
 * inserted before a list line that hangs directly off a non-list line (or a list of the
 * other kind), except inside code fences.
 */
export function preprocessSource(src: string): string {
  const lines = src.replace(/\r\n?/g, '\n').split('\n').map(expandTabs);
  const out: string[] = [];
  const fences: { fence: string; code: boolean }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    out.push(line);
    const f = FENCE_RE.exec(line.trim()) ? ANY_FENCE.exec(line) : null;
    if (f) {
      const lang = (f.groups!['lang'] ?? '').toLowerCase();
      const top = fences[fences.length - 1];
      if (!lang && top && top.fence === f.groups!['fence']) fences.pop();
      else if (!top || !top.code) fences.push({ fence: f.groups!['fence']!, code: lang !== 'quote' && lang !== 'quoted' && lang !== 'spoiler' });
    }
    if (i + 1 >= lines.length || fences.some((x) => x.code) || line === '') continue;
    const li1 = LIST_LINE.exec(line);
    const li2 = LIST_LINE.exec(lines[i + 1]!);
    if (li2 && (!li1 || (li1[1]!.length === 1) !== (li2[1]!.length === 1))) out.push('');
  }
  return out.join('\n');
}

function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let out = '';
  for (const ch of line) out += ch === '\t' ? ' '.repeat(4 - (out.length % 4)) : ch;
  return out;
}

import { createRequire } from 'node:module';
import { LANGS, type Lang, type Rule, type Tok } from './highlight-langs.js';
import './highlight-langs-more.js';
import './highlight-yaml.js';

/**
 * Token spans for fenced code blocks, with Pygments' short CSS classes (what
 * Zulip's server emits and every Zulip client styles).
 *
 * highlight.js (loaded lazily, only the grammars of the languages below, on
 * the first block that needs one) finds the parts of the code that need a
 * real parser: strings, template literals with their substitutions,
 * comments, regular expressions. Everything between them, and the
 * classification of those parts, follows the token rules of Pygments' own
 * lexers (pygments/lexers/*.py, ported as rule tables in highlight-langs.ts),
 * so that the class sequence equals what Pygments produces for ordinary code:
 * keywords split as Pygments splits them (k, kd, kn, kc, kt, kr), names (n,
 * nx, nf, nc, nn, nb, bp), numbers (mi, mf, mh), operators and punctuation
 * (o, p), whitespace (w where Pygments emits Token.Text.Whitespace, plain
 * where it emits Token.Text). Adjacent tokens of one class share a span, as
 * Pygments' HtmlFormatter writes them.
 */

interface HljsApi {
  registerLanguage(name: string, fn: unknown): void;
  highlight(code: string, opts: { language: string; ignoreIllegals: boolean }): { value: string };
  getLanguage(name: string): unknown;
}

const require = createRequire(import.meta.url);
let hljs: HljsApi | undefined;

function grammar(name: string): HljsApi {
  if (!hljs) hljs = (require('highlight.js/lib/core') as { default?: HljsApi } & HljsApi).default ?? (require('highlight.js/lib/core') as HljsApi);
  if (!hljs.getLanguage(name)) {
    const mod = require(`highlight.js/lib/languages/${name}`) as { default?: unknown };
    hljs.registerLanguage(name, mod.default ?? mod);
    // highlight.js compiles a grammar on first use: do it now, outside any block's budget.
    hljs.highlight('', { language: name, ignoreIllegals: true });
  }
  return hljs;
}

/** A piece of hljs output: plain text, or a scope with children. */
interface Node {
  readonly scope: string | null;
  readonly text?: string;
  readonly children?: readonly Node[];
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };
const decode = (s: string): string => s.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (e) => ENTITIES[e]!);

function parseHljs(html: string): Node[] {
  const root: Node[] = [];
  const stack: { scope: string | null; children: Node[] }[] = [{ scope: null, children: root }];
  const re = /<span class="([^"]*)">|<\/span>|[^<]+/g;
  for (const m of html.matchAll(re)) {
    const top = stack[stack.length - 1]!;
    if (m[1] !== undefined) {
      const node = { scope: m[1].replace(/^hljs-/, '').split(' ')[0]!, children: [] as Node[] };
      top.children.push(node);
      stack.push(node);
    } else if (m[0] === '</span>') stack.pop();
    else top.children.push({ scope: null, text: decode(m[0]) });
  }
  return root;
}

const textOf = (n: Node): string => n.text ?? (n.children ?? []).map(textOf).join('');

/** The Pygments-rule tokenizer over text between protected parts; the state stack persists. */
class Lexer {
  stack: string[];
  readonly out: Tok[] = [];
  readonly ctx: Record<string, unknown> = {};
  constructor(
    private readonly lang: Lang,
    private readonly whole: string,
    state = 'root',
  ) {
    this.stack = [state];
  }

  private get rules(): Rule[] {
    return this.lang.states[this.stack[this.stack.length - 1]!] ?? this.lang.states.root!;
  }

  /** Tokenizes `text`, which starts at `offset` of the whole block. */
  gap(text: string, offset: number): void {
    let i = 0;
    outer: while (i < text.length) {
      if ((++steps & 63) === 0 && performance.now() > deadline) throw OVER_BUDGET;
      for (const r of this.rules) {
        r.re.lastIndex = i;
        const m = r.re.exec(text);
        if (!m || (m[0].length === 0 && !r.pop && !r.next && !r.cb)) continue;
        if (r.start && offset + i !== 0) continue;
        if (r.lineStart && !(offset + i === 0 || this.whole[offset + i - 1] === '\n')) continue;
        if (r.cb) {
          const used = r.cb(m, this);
          for (let n = r.pop === true ? 1 : r.pop || 0; n > 0 && this.stack.length > 1; n--) this.stack.pop();
          if (r.next) this.stack.push(r.next);
          if (r.then) this.stack.push(r.then);
          i += used;
          continue outer;
        }
        const by = r.by;
        if (typeof by === 'string') {
          if (by.startsWith('@@')) this.out.push(...(highlightTokens(m[0], by.slice(2)) ?? [['', m[0]]]));
          else if (m[0]) this.out.push([by, m[0]]);
        } else if (typeof by === 'function') this.out.push([by(m[0]), m[0]]);
        else
          by.forEach((c, g) => {
            const t = m[g + 1];
            if (!t) return;
            if (c.startsWith('@')) {
              // Pygments' using(this, state=...): the group lexed again from that state.
              const sub = new Lexer(this.lang, this.whole, c.slice(1));
              sub.gap(t, offset + i + m[0].indexOf(t));
              this.out.push(...sub.out);
            } else this.out.push([c, t]);
          });
        for (let n = r.pop === true ? 1 : r.pop || 0; n > 0; n--) this.stack.pop();
        if (r.next) this.stack.push(r.next);
        if (r.then) this.stack.push(r.then);
        if (this.stack.length === 0) this.stack.push('root');
        i += m[0].length;
        continue outer;
      }
      // Nothing matched (Pygments' RegexLexer): at a newline the state goes back to root
      // and the newline is Whitespace; otherwise the character is an Error token.
      if (text[i] === '\n') {
        this.stack = ['root'];
        this.out.push(['w', '\n']);
      } else this.out.push(['err', text[i]!]);
      i++;
    }
  }

  protected_(node: Node, offset: number): void {
    this.stack = ['root'];
    const toks = this.lang.protect(node, offset, this.whole, (n, o) => {
      const inner = new Lexer(this.lang, this.whole);
      inner.run(n.children ?? [], o);
      return inner.out;
    });
    // Python's docstring rule takes the indentation before it as Whitespace.
    const last = this.out[this.out.length - 1];
    if (toks.some((t) => t[0] === 'sd') && last && last[0] === '' && /^[^\S\n]+$/.test(last[1])) last[0] = 'w';
    this.out.push(...toks);
  }

  /**
   * Lexes hljs nodes: protected scopes go to the language's protect(); the
   * text of everything else, joined across hljs' spans, is re-lexed by the rules.
   */
  run(nodes: readonly Node[], offset: number): void {
    let text = '';
    let start = offset;
    const flush = (): void => {
      if (text) this.gap(text, start);
      text = '';
    };
    const visit = (node: Node): void => {
      if (node.text !== undefined) {
        if (!text) start = offset;
        text += node.text;
        offset += node.text.length;
      } else if (node.scope && this.lang.protectedScopes.has(node.scope)) {
        flush();
        this.protected_(node, offset);
        offset += textOf(node).length;
      } else for (const c of node.children ?? []) visit(c);
    };
    for (const n of nodes) visit(n);
    flush();
  }
}

/**
 * Pygments' regular expressions are backtracking ones; on hostile input (a
 * 10,000-character line of identifiers, say) some (Java's and C's function
 * signature rules) take quadratic time. Blocks over 5,000 characters are
 * shown plain, as an unknown language is, and a block whose lexing runs past
 * 250 ms (far above the ~1 ms of ordinary code; only hostile input gets
 * there) falls back to plain too, so that no message can pin the renderer.
 */
export const HIGHLIGHT_BUDGET_MS = 250;
export const HIGHLIGHT_MAX_CHARS = 5_000;
const OVER_BUDGET = new Error('highlight budget exceeded');
let deadline = 0;
let steps = 0;

const escapeCode = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Tokens to HTML as Pygments' HtmlFormatter writes them: newlines always
 * outside spans, and within a line, adjacent tokens of one class in one span.
 */
export function tokensToHtml(toks: readonly Tok[]): string {
  let out = '';
  let open: string | null = null;
  const close = (): void => {
    if (open) out += '</span>';
    open = null;
  };
  for (const [c, t] of toks) {
    const parts = t.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) {
        close();
        out += '\n';
      }
      if (!part) return;
      if (c !== (open ?? '')) {
        close();
        if (c) {
          out += `<span class="${c}">`;
          open = c;
        }
      }
      out += escapeCode(part);
    });
  }
  close();
  return out;
}

/** Pygments' tokens for `code` (ending in "\n") in the language of this alias, or null when we have no lexer for it. */
export function highlightTokens(code: string, alias: string): Tok[] | null {
  // Own properties only: LANGS is a plain object ("constructor" is no lexer).
  const lang = Object.hasOwn(LANGS, alias) ? LANGS[alias] : undefined;
  if (!lang || code.length > HIGHLIGHT_MAX_CHARS) return null;
  // Loading a grammar (once) is not the block's work: the budget starts after it.
  if (lang.hljs) grammar(lang.hljs);
  const outer = deadline === 0;
  if (outer) deadline = performance.now() + HIGHLIGHT_BUDGET_MS;
  try {
    return lexAll(lang, code);
  } catch (err) {
    if (err === OVER_BUDGET && outer) return null;
    throw err;
  } finally {
    if (outer) deadline = 0;
  }
}

function lexAll(lang: Lang, code: string): Tok[] {
  const lexer = new Lexer(lang, code);
  if (lang.hljs) {
    const nodes = parseHljs(grammar(lang.hljs).highlight(code, { language: lang.hljs, ignoreIllegals: true }).value);
    lexer.run(nodes, 0);
  } else lexer.gap(code, 0);
  return lexer.out;
}

/** The highlighted inner HTML of a code block, or null for a language we do not highlight. */
export function highlightCode(code: string, alias: string): string | null {
  const toks = highlightTokens(code, alias);
  return toks ? tokensToHtml(toks) : null;
}

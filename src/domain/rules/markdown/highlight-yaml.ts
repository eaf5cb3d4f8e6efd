/**
 * YAML as pygments/lexers/data.py YamlLexer tokenizes it: an
 * ExtendedRegexLexer whose callbacks track indentation (save_indent,
 * set_indent, reset_indent, the block- and plain-scalar indent parsers),
 * ported as rule callbacks. Classes of token types without a short name are
 * written the way Pygments' HtmlFormatter writes them ("p p-Indicator",
 * "l l-Scalar l-Scalar-Plain").
 */
import { alias, rulesOnly, type LexApi, type Rule } from './highlight-langs.js';

interface Ctx {
  indent: number;
  nextIndent: number;
  stackOfIndents: number[];
  blockScalarIndent: number | null;
}
const ctxOf = (lx: LexApi): Ctx => {
  const c = lx.ctx as Partial<Ctx>;
  if (c.indent === undefined) Object.assign(c, { indent: -1, nextIndent: 0, stackOfIndents: [], blockScalarIndent: null });
  return c as Ctx;
};

const IND = 'p p-Indicator';
const PLAIN = 'l l-Scalar l-Scalar-Plain';
const re = (s: string): RegExp => new RegExp(s, 'ym');
const cb = (s: string, f: NonNullable<Rule['cb']>, opts: Partial<Rule> = {}): Rule => ({ re: re(s), by: '', cb: f, ...opts });
const tok = (s: string, by: Rule['by'], opts: Partial<Rule> = {}): Rule => ({ re: re(s), by, ...opts });

const something = (cls: string): NonNullable<Rule['cb']> => (m, lx) => {
  if (!m[0]) return 0;
  lx.out.push([cls, m[0]]);
  return m[0].length;
};
const resetIndent = (cls: string): NonNullable<Rule['cb']> => (m, lx) => {
  Object.assign(ctxOf(lx), { indent: -1, nextIndent: 0, stackOfIndents: [], blockScalarIndent: null });
  lx.out.push([cls, m[0]]);
  return m[0].length;
};
const saveIndent = (cls: string, start = false): NonNullable<Rule['cb']> => (m, lx) => {
  const c = ctxOf(lx);
  let text = m[0];
  let extra = '';
  if (start) {
    c.nextIndent = text.length;
    if (c.nextIndent < c.indent) {
      while (c.nextIndent < c.indent) c.indent = c.stackOfIndents.pop()!;
      if (c.nextIndent > c.indent) {
        extra = text.slice(c.indent);
        text = text.slice(0, c.indent);
      }
    }
  } else c.nextIndent += text.length;
  if (text) lx.out.push([cls, text]);
  if (extra) lx.out.push(['err', extra]);
  return m[0].length;
};
const setIndent = (cls: string, implicit = false): NonNullable<Rule['cb']> => (m, lx) => {
  const c = ctxOf(lx);
  if (c.indent < c.nextIndent) {
    c.stackOfIndents.push(c.indent);
    c.indent = c.nextIndent;
  }
  if (!implicit) c.nextIndent += m[0].length;
  lx.out.push([cls, m[0]]);
  return m[0].length;
};
/** bygroups(Name.Tag, set_indent(Punctuation, implicit=True)) */
const keyColon: NonNullable<Rule['cb']> = (m, lx) => {
  lx.out.push(['nt', m[1]!]);
  const c = ctxOf(lx);
  if (c.indent < c.nextIndent) {
    c.stackOfIndents.push(c.indent);
    c.indent = c.nextIndent;
  }
  lx.out.push(['p', m[2]!]);
  return m[0].length;
};
const setBlockScalarIndent: NonNullable<Rule['cb']> = (m, lx) => {
  const c = ctxOf(lx);
  c.blockScalarIndent = null;
  if (!m[0]) return 0;
  if (m[1]) c.blockScalarIndent = Math.max(c.indent, 0) + Number(m[1]);
  lx.out.push([IND, m[0]]);
  return m[0].length;
};
const blockScalarEmptyLine: NonNullable<Rule['cb']> = (m, lx) => {
  const c = ctxOf(lx);
  const text = m[0];
  if (c.blockScalarIndent === null || text.length <= c.blockScalarIndent) {
    if (text) lx.out.push(['w', text]);
  } else lx.out.push(['w', text.slice(0, c.blockScalarIndent)], ['no', text.slice(c.blockScalarIndent)]);
  return text.length;
};
const popTwo = (lx: LexApi): void => {
  lx.stack.pop();
  lx.stack.pop();
};
const blockScalarIndent: NonNullable<Rule['cb']> = (m, lx) => {
  const c = ctxOf(lx);
  const text = m[0];
  if (c.blockScalarIndent === null) {
    if (text.length <= Math.max(c.indent, 0)) return popTwo(lx), 0;
    c.blockScalarIndent = text.length;
  } else if (text.length < c.blockScalarIndent) return popTwo(lx), 0;
  if (text) lx.out.push(['w', text]);
  return text.length;
};
const plainScalarIndent: NonNullable<Rule['cb']> = (m, lx) => {
  const text = m[0];
  if (text.length <= ctxOf(lx).indent) return popTwo(lx), 0;
  if (text) lx.out.push(['w', text]);
  return text.length;
};

const DESCRIPTORS: Rule[] = [
  tok("!<[\\w#;/?:@&=+$,.!~*'()\\[\\]%-]+>", 'kt'),
  tok("!(?:[\\w-]+!)?[\\w#;/?:@&=+$,.!~*'()\\[\\]%-]*", 'kt'),
  tok('&[\\w-]+', 'nl'),
  tok('\\*[\\w-]+', 'nv'),
];
const FLOW_NODES: Rule[] = [
  tok('\\[', IND, { next: 'flow-sequence' }),
  tok('\\{', IND, { next: 'flow-mapping' }),
  tok("'", 's', { next: 'single-quoted-scalar' }),
  tok('"', 's', { next: 'double-quoted-scalar' }),
];
const FLOW_COLLECTION: Rule[] = [
  tok('[ ]+', 'w'),
  tok('\\n+', 'w'),
  tok('#[^\\n]*', 'c1'),
  tok('[?:,]', IND),
  ...DESCRIPTORS,
  ...FLOW_NODES,
  cb('(?=[^\\s?:,\\[\\]{}#&*!|>\'"%@`])', something('nv'), { next: 'plain-scalar-in-flow-context' }),
];
const QUOTED_WS: Rule[] = [tok('^[ ]+', 'w'), tok('[ ]+$', 'w'), tok('\\n+', 'w'), tok('[ \\xa0]+', 'nv')];

const yaml = rulesOnly({
  root: [
    tok('[ ]+(?=#|$)', 'w'),
    tok('\\n+', 'w'),
    tok('#[^\\n]*', 'c1'),
    cb('^%YAML(?=[ ]|$)', resetIndent('nt'), { next: 'yaml-directive' }),
    cb('^%TAG(?=[ ]|$)', resetIndent('nt'), { next: 'tag-directive' }),
    cb('^(?:---|\\.\\.\\.)(?=[ ]|$)', resetIndent('nn'), { next: 'block-line' }),
    cb('[ ]*(?!\\s|$)', saveIndent('w', true), { next: 'block-line', then: 'indentation' }),
  ],
  'ignored-line': [tok('[ ]+(?=#|$)', 'w'), tok('#[^\\n]*', 'c1'), tok('\\n', 'w', { pop: 2 })],
  'yaml-directive': [tok('([ ]+)([0-9]+\\.[0-9]+)', ['w', 'm'], { next: 'ignored-line' })],
  'tag-directive': [tok("([ ]+)(!|![\\w-]*!)([ ]+)(!|!?[\\w;/?:@&=+$,.!~*'()\\[\\]%-]+)", ['w', 'kt', 'w', 'kt'], { next: 'ignored-line' })],
  indentation: [
    cb('[ ]*$', something('w'), { pop: 2 }),
    cb('[ ]+(?=[?:-](?:[ ]|$))', saveIndent('w')),
    cb('[?:-](?=[ ]|$)', setIndent(IND)),
    cb('[ ]*', saveIndent('w'), { pop: true }),
  ],
  'block-line': [
    cb('[ ]*(?=#|$)', something('w'), { pop: true }),
    tok('[ ]+', 'w'),
    cb('([^#,?\\[\\]{}"\'\\n]+)(:)(?=[ ]|$)', keyColon),
    ...DESCRIPTORS,
    cb(':(?=[ ]|$)', setIndent(IND, true)),
    tok('[|>]', IND, { next: 'block-scalar-content', then: 'block-scalar-header' }),
    ...FLOW_NODES,
    cb('(?=[^\\s?:,\\[\\]{}#&*!|>\'"%@`-]|[?:-]\\S)', something('nv'), { next: 'plain-scalar-in-block-context' }),
  ],
  'flow-sequence': [...FLOW_COLLECTION, tok('\\]', IND, { pop: true })],
  'flow-mapping': [tok('([^,:?\\[\\]{}"\'\\n]+)(:)(?=[ ]|$)', ['nt', 'p']), ...FLOW_COLLECTION, tok('\\}', IND, { pop: true })],
  'block-scalar-content': [tok('\\n', 'w'), cb('^[ ]+$', blockScalarEmptyLine), cb('^[ ]*', blockScalarIndent), tok('[\\S\\t ]+', 'no')],
  'block-scalar-header': [
    cb('([1-9])?[+-]?(?=[ ]|$)', setBlockScalarIndent, { next: 'ignored-line' }),
    cb('[+-]?([1-9])?(?=[ ]|$)', setBlockScalarIndent, { next: 'ignored-line' }),
  ],
  'single-quoted-scalar': [...QUOTED_WS, tok("''", 'se'), tok("[^\\s']+", 's'), tok("'", 's', { pop: true })],
  'double-quoted-scalar': [
    ...QUOTED_WS,
    tok('\\\\[0abt\\tn\\nvfre "\\\\N_LP]', 's'),
    tok('\\\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})', 'se'),
    tok('[^\\s"\\\\]+', 's'),
    tok('"', 's', { pop: true }),
  ],
  'plain-scalar-in-block-context-new-line': [
    tok('^[ ]+$', 'w'),
    tok('\\n+', 'w'),
    cb('^(?=---|\\.\\.\\.)', something('nn'), { pop: 3 }),
    cb('^[ ]*', plainScalarIndent, { pop: true }),
  ],
  'plain-scalar-in-block-context': [
    cb('[ ]*(?=:[ ]|:$)', something('w'), { pop: true }),
    tok('[ ]+(?=#)', 'w', { pop: true }),
    tok('[ ]+$', 'w'),
    tok('\\n+', 'w', { next: 'plain-scalar-in-block-context-new-line' }),
    tok('[ \\xa0]+', PLAIN),
    tok('(?::(?!\\s)|[^\\s:])+', PLAIN),
  ],
  'plain-scalar-in-flow-context': [
    cb('[ ]*(?=[,:?\\[\\]{}])', something('w'), { pop: true }),
    tok('[ ]+(?=#)', 'w', { pop: true }),
    tok('^[ ]+', 'w'),
    tok('[ ]+$', 'w'),
    tok('\\n+', 'w'),
    tok('[ \\xa0]+', 'nv'),
    tok('[^\\s,:?\\[\\]{}]+', 'nv'),
  ],
});
alias(yaml, 'yaml');

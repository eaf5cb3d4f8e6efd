/**
 * Token rules of Pygments' lexers (pygments/lexers/python.py, javascript.py,
 * go.py, shell.py, data.py JsonLexer, diff.py), ported as tables: each state
 * is an ordered list of regular expressions with the token class Pygments
 * gives the match (short CSS names of pygments/token.py STANDARD_TYPES), or
 * one class per group (Pygments' bygroups). Only facts are carried over; the
 * engine is highlight.ts. Strings and comments are found by highlight.js and
 * classified by `protect`.
 */
export type Tok = [cls: string, text: string];

export interface Rule {
  readonly re: RegExp;
  /** A class, one class per group, or a function of the text; "@state" lexes again from a state, "@@alias" with another language. */
  readonly by: string | readonly string[] | ((s: string) => string);
  readonly next?: string;
  /** A second state pushed after `next` (Pygments' tuple of new states). */
  readonly then?: string;
  /** Pop one state (true) or n states (Pygments' '#pop:n'). */
  readonly pop?: boolean | number;
  /** Only at offset 0 of the block (Python's \A). */
  readonly start?: boolean;
  readonly lineStart?: boolean;
  /**
   * Pygments' callbacks (ExtendedRegexLexer): emit tokens into `lx.out`, may
   * change `lx.stack` and `lx.ctx`; returns how many characters it consumed.
   */
  readonly cb?: (m: RegExpExecArray, lx: LexApi) => number;
}

export interface LexApi {
  readonly out: Tok[];
  stack: string[];
  readonly ctx: Record<string, unknown>;
}

interface NodeLike {
  readonly scope: string | null;
  readonly text?: string;
  readonly children?: readonly NodeLike[];
}

export interface Lang {
  /** The highlight.js grammar that finds strings and comments, or null when the rules do it all. */
  readonly hljs: string | null;
  readonly states: Record<string, Rule[]>;
  readonly protectedScopes: ReadonlySet<string>;
  /** Pygments' tokens for a string/comment node at `offset`; `inner` lexes a node's children with the rules. */
  readonly protect: (node: NodeLike, offset: number, whole: string, inner: (n: NodeLike, offset: number) => Tok[]) => Tok[];
}

const rx = (s: string, flags = ''): RegExp => new RegExp(s, 'ym' + flags);
export const rule = (re: string, by: Rule['by'], opts: Partial<Omit<Rule, 're' | 'by'>> & { flags?: string } = {}): Rule => {
  const { flags, ...rest } = opts;
  return { re: rx(re, flags), by, ...rest };
};
/** Pygments' words(): its optimised regex prefers the longest word, so longer alternatives go first. */
export const words = (list: string, suffix = '\\b', prefix = ''): string =>
  `${prefix}(?:${list
    .trim()
    .split(/\s+/)
    .sort((a, b) => b.length - a.length)
    .join('|')})${suffix}`;
const textOf = (n: NodeLike): string => n.text ?? (n.children ?? []).map(textOf).join('');
/**
 * words(list, suffix=r'\b') for lists of plain words, as a set lookup: the
 * word must be the whole \w run at the position (that is what the trailing
 * \b demands), which is much cheaper than a long alternation tried at every
 * token. `notAfterDot` is Python's (?<!\.) prefix.
 */
class WordSet extends RegExp {
  constructor(
    private readonly set: ReadonlySet<string>,
    private readonly fold: boolean,
    private readonly notAfterDot: boolean,
  ) {
    super('\\w+', 'y');
  }
  override exec(s: string): RegExpExecArray | null {
    const at = this.lastIndex;
    const m = super.exec(s);
    if (!m) return null;
    if (this.notAfterDot && s[at - 1] === '.') return null;
    return this.set.has(this.fold ? m[0].toUpperCase() : m[0]) ? m : null;
  }
}
export const wordRule = (list: string, by: string, opts: { fold?: boolean; notAfterDot?: boolean } = {}): Rule => ({
  re: new WordSet(new Set(list.trim().split(/\s+/).map((w) => (opts.fold ? w.toUpperCase() : w))), opts.fold ?? false, opts.notAfterDot ?? false),
  by,
});
export const noProtect = (n: NodeLike): Tok[] => [['', textOf(n)]];
/** Pygments' default('#pop'): leave the state without consuming anything. */
export const popDefault = (): Rule => ({ re: /(?:)/y, by: '', pop: true });
/** A lexer made of Pygments rules only (no highlight.js pass). */
export const rulesOnly = (states: Record<string, Rule[]>): Lang => ({ hljs: null, protectedScopes: new Set(), protect: noProtect, states });

// ---------------------------------------------------------------- Python (python.py PythonLexer)
const PY_NAME = '[A-Za-z_\\u00C0-\\uFFFF][\\w\\u00C0-\\uFFFF]*';
const PY_BUILTINS = `__import__ abs aiter all any bin bool bytearray breakpoint bytes callable chr classmethod compile complex delattr dict dir
  divmod enumerate eval filter float format frozendict frozenset getattr globals hasattr hash hex id input int isinstance issubclass iter len list
  locals map max memoryview min next object oct open ord pow print property range repr reversed round sentinel set setattr slice sorted
  staticmethod str sum super tuple type vars zip`;
const PY_EXCEPTIONS = `ArithmeticError AssertionError AttributeError BaseException BufferError BytesWarning DeprecationWarning EOFError
  EnvironmentError Exception FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError KeyError
  KeyboardInterrupt LookupError MemoryError NameError NotImplementedError OSError OverflowError PendingDeprecationWarning ReferenceError
  ResourceWarning RuntimeError RuntimeWarning StopIteration SyntaxError SyntaxWarning SystemError SystemExit TabError TypeError UnboundLocalError
  UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning ValueError VMSError Warning WindowsError
  ZeroDivisionError BlockingIOError ChildProcessError ConnectionError BrokenPipeError ConnectionAbortedError ConnectionRefusedError
  ConnectionResetError FileExistsError FileNotFoundError InterruptedError IsADirectoryError NotADirectoryError PermissionError
  ProcessLookupError TimeoutError StopAsyncIteration ModuleNotFoundError RecursionError EncodingWarning`;
const PY_MAGIC_FUNCS = `__abs__ __add__ __aenter__ __aexit__ __aiter__ __and__ __anext__ __await__ __bool__ __bytes__ __call__ __complex__
  __contains__ __del__ __delattr__ __delete__ __delitem__ __dir__ __divmod__ __enter__ __eq__ __exit__ __float__ __floordiv__ __format__ __ge__
  __get__ __getattr__ __getattribute__ __getitem__ __gt__ __hash__ __iadd__ __iand__ __ifloordiv__ __ilshift__ __imatmul__ __imod__ __imul__
  __index__ __init__ __instancecheck__ __int__ __invert__ __ior__ __ipow__ __irshift__ __isub__ __iter__ __itruediv__ __ixor__ __le__ __len__
  __length_hint__ __lshift__ __lt__ __matmul__ __missing__ __mod__ __mul__ __ne__ __neg__ __new__ __next__ __or__ __pos__ __pow__ __prepare__
  __radd__ __rand__ __rdivmod__ __repr__ __reversed__ __rfloordiv__ __rlshift__ __rmatmul__ __rmod__ __rmul__ __ror__ __round__ __rpow__
  __rrshift__ __rshift__ __rsub__ __rtruediv__ __rxor__ __set__ __setattr__ __setitem__ __str__ __sub__ __subclasscheck__ __truediv__ __xor__`;
const PY_MAGIC_VARS = `__annotations__ __bases__ __class__ __closure__ __code__ __defaults__ __dict__ __doc__ __file__ __func__ __globals__
  __kwdefaults__ __module__ __mro__ __name__ __objclass__ __qualname__ __self__ __slots__ __weakref__`;
const PY_NUMBERS: Rule[] = [
  rule('(\\d(?:_?\\d)*\\.(?:\\d(?:_?\\d)*)?|(?:\\d(?:_?\\d)*)?\\.\\d(?:_?\\d)*)([eE][+-]?\\d(?:_?\\d)*)?', 'mf'),
  rule('\\d(?:_?\\d)*[eE][+-]?\\d(?:_?\\d)*j?', 'mf'),
  rule('0[oO](?:_?[0-7])+', 'mo'),
  rule('0[bB](?:_?[01])+', 'mb'),
  rule('0[xX](?:_?[a-fA-F0-9])+', 'mh'),
  rule('\\d(?:_?\\d)*', 'mi'),
];
const PY_EXPR: Rule[] = [
  rule('[^\\S\\n]+', ''),
  ...PY_NUMBERS,
  rule('!=|==|<<|>>|:=|[-~+/*%=<>&^|.]', 'o'),
  rule('[\\]{}:(),;[]', 'p'),
  rule('(?:in|is|and|or|not)\\b', 'ow'),
  rule(words('async\\s+for await else for if lambda yield\\s+from yield'), 'k'),
  rule(words('True False None'), 'kc'),
  wordRule(PY_BUILTINS, 'nb', { notAfterDot: true }),
  rule('(?<!\\.)(?:self|Ellipsis|NotImplemented|cls)\\b', 'bp'),
  wordRule(PY_EXCEPTIONS, 'ne', { notAfterDot: true }),
  wordRule(PY_MAGIC_FUNCS, 'fm'),
  wordRule(PY_MAGIC_VARS, 'vm'),
  rule('@' + PY_NAME, 'nd'),
  rule('@', 'o'),
  rule(PY_NAME, 'n'),
];
const python: Lang = {
  hljs: 'python',
  protectedScopes: new Set(['string', 'comment']),
  states: {
    root: [
      rule('\\n', 'w'),
      rule('\\\\\\n', ''),
      rule('\\\\', ''),
      rule(words('assert async await break continue del elif else except finally for global if lambda pass raise nonlocal return try while yield\\s+from yield as with'), 'k'),
      rule(words('True False None'), 'kc'),
      rule('(def)((?:\\s|\\\\\\s)+)', ['k', 'w'], { next: 'funcname' }),
      rule('(class)((?:\\s|\\\\\\s)+)', ['k', 'w'], { next: 'classname' }),
      rule('(from)((?:\\s|\\\\\\s)+)', ['kn', 'w'], { next: 'fromimport' }),
      rule('(import)((?:\\s|\\\\\\s)+)', ['kn', 'w'], { next: 'import' }),
      ...PY_EXPR,
    ],
    funcname: [{ ...wordRule(PY_MAGIC_FUNCS, 'fm'), pop: true }, rule(PY_NAME, 'nf', { pop: true }), popDefault()],
    classname: [rule(PY_NAME, 'nc', { pop: true })],
    import: [
      rule('(\\s+)(as)(\\s+)', ['w', 'k', 'w']),
      rule('\\.', 'nn'),
      rule(PY_NAME, 'nn'),
      rule('(\\s*)(,)(\\s*)', ['w', 'o', 'w']),
      popDefault(),
    ],
    fromimport: [rule('(\\s+)(import)\\b', ['w', 'kn'], { pop: true }), rule('\\.', 'nn'), rule('None\\b', 'kc', { pop: true }), rule(PY_NAME, 'nn'), popDefault()],
  },
  protect(node, offset, whole, inner) {
    const text = textOf(node);
    if (node.scope === 'comment') return [[offset === 0 && text.startsWith('#!') ? 'ch' : 'c1', text]];
    const m = /^([A-Za-z]{0,2})("""|'''|"|')/.exec(text);
    if (!m) return [['', text]];
    const prefix = m[1]!.toLowerCase();
    const quote = m[2]!;
    const body = text.slice(m[0].length, text.endsWith(quote) && text.length >= m[0].length + quote.length ? text.length - quote.length : text.length);
    const closed = text.length - m[0].length - body.length === quote.length;
    const lineBefore = whole.slice(whole.lastIndexOf('\n', offset - 1) + 1, offset);
    // A triple-quoted string first on its line is a docstring (String.Doc), whole.
    if (quote.length === 3 && /^\s*$/.test(lineBefore) && !/[ft]/.test(prefix)) return [['sa', m[1]!], ['sd', text.slice(m[1]!.length)]];
    const cls = quote[0] === '"' ? 's2' : 's1';
    const out: Tok[] = [['sa', m[1]!], [cls, quote]];
    const raw = prefix.includes('r');
    if (/[ft]/.test(prefix)) {
      // f-strings: {{ }} escapes, {expr[!conv][:spec]} interpolations (String.Interpol around the expression).
      const re = /\{\{|\}\}|\{([^{}]*?)(![sraf])?(?::([^{}]*))?\}|\\(?:[\\abfnrtv"'\n]|N\{.*?\}|u[a-fA-F0-9]{4}|U[a-fA-F0-9]{8}|x[a-fA-F0-9]{2}|[0-7]{1,3})|[^{}\\]+|./gs;
      for (const p of body.matchAll(re)) {
        const s = p[0];
        if (s === '{{' || s === '}}') out.push(['se', s]);
        else if (s.startsWith('{') && s.length > 1) {
          out.push(['si', '{']);
          out.push(...inner({ scope: null, children: [{ scope: null, text: p[1] ?? '' }] }, offset));
          if (p[2]) out.push(['si', p[2]]);
          if (p[3] !== undefined) out.push(['si', ':'], [cls, p[3]]);
          out.push(['si', '}']);
        } else if (s.startsWith('\\') && !raw) out.push(['se', s]);
        else out.push([cls, s]);
      }
    } else {
      const re = raw
        ? /%(\(\w+\))?[-#0 +]*([0-9]+|[*])?(\.([0-9]+|[*]))?[hlL]?[E-GXc-giorsaux%]|\{((\w+)((\.\w+)|(\[[^\]]+\]))*)?(![sra])?(:(.?[<>=^])?[-+ ]?#?0?(\d+)?,?(\.\d+)?[E-GXb-gnosx%]?)?\}|[^%{\\]+|./gs
        : /\\(?:[\\abfnrtv"'\n]|N\{.*?\}|u[a-fA-F0-9]{4}|U[a-fA-F0-9]{8}|x[a-fA-F0-9]{2}|[0-7]{1,3})|%(\(\w+\))?[-#0 +]*([0-9]+|[*])?(\.([0-9]+|[*]))?[hlL]?[E-GXc-giorsaux%]|\{((\w+)((\.\w+)|(\[[^\]]+\]))*)?(![sra])?(:(.?[<>=^])?[-+ ]?#?0?(\d+)?,?(\.\d+)?[E-GXb-gnosx%]?)?\}|[^%{\\]+|./gs;
      for (const p of body.matchAll(re)) {
        const s = p[0];
        if (s.length > 1 && s.startsWith('\\')) out.push(['se', s]);
        else if ((s.startsWith('%') && s.length > 1) || (s.startsWith('{') && s.endsWith('}'))) out.push(['si', s]);
        else out.push([cls, s]);
      }
    }
    if (closed) out.push([cls, quote]);
    return out;
  },
};

// ---------------------------------------------------------------- JavaScript / TypeScript (javascript.py)
const JS_IDENT = '(?:[$_\\p{ID_Start}]|\\\\u[a-fA-F0-9]{4})(?:[$\\u200c\\u200d\\p{ID_Continue}]|\\\\u[a-fA-F0-9]{4})*';
const jsRoot = (ts: boolean): Rule[] => [
  ...(ts
    ? [
        rule('(?:abstract|implements|private|protected|public|readonly)\\b', 'k'),
        rule('(?:enum|interface|override)\\b', 'kd'),
        rule('\\b(?:declare|type)\\b', 'kr'),
        rule('\\b(?:string|boolean|number)\\b', 'kt'),
        rule('\\b(module)(\\s+)([\\w?.$]+)(\\s*)', ['kr', 'w', 'nx', 'w']),
        rule('([\\w?.$]+)(\\s*)(:)(\\s*)([\\w?.$]+)', ['nx', 'w', 'o', 'w', 'kt']),
        { re: new RegExp('@' + JS_IDENT, 'yu'), by: 'kd' },
      ]
    : []),
  rule('\\s+', 'w'),
  rule('0[bB][01]+n?', 'mb'),
  rule('0[oO]?[0-7]+n?', 'mo'),
  rule('0[xX][0-9a-fA-F]+n?', 'mh'),
  rule('[0-9]+n', 'mi'),
  rule('(\\.[0-9]+|[0-9]+\\.[0-9]*|[0-9]+)([eE][-+]?[0-9]+)?', 'mf'),
  rule('\\.\\.\\.|=>', 'p'),
  rule('\\+\\+|--|~|\\?\\?=?|\\?|:|\\\\(?=\\n)|(<<|>>>?|==?|!=?|(?:\\*\\*|\\|\\||&&|[-<>+*%&|^/]))=?', 'o'),
  rule('[{(\\[;,]', 'p'),
  rule('[})\\].]', 'p'),
  rule('(?:typeof|instanceof|in|void|delete|new)\\b', 'ow'),
  rule('\\b(?:constructor|from|as)\\b', 'kr'),
  rule('(?:for|in|while|do|break|return|continue|switch|case|default|if|else|throw|try|catch|finally|yield|await|async|this|of|static|export|import|debugger|extends|super)\\b', 'k'),
  rule('(?:var|let|const|with|function|class)\\b', 'kd'),
  rule('(?:abstract|boolean|byte|char|double|enum|final|float|goto|implements|int|interface|long|native|package|private|protected|public|short|synchronized|throws|transient|volatile)\\b', 'kr'),
  rule('(?:true|false|null|NaN|Infinity|undefined)\\b', 'kc'),
  rule(
    '(?:Array|Boolean|Date|BigInt|Function|Math|ArrayBuffer|Number|Object|RegExp|String|Promise|Proxy|decodeURI|decodeURIComponent|encodeURI|encodeURIComponent|eval|isFinite|isNaN|parseFloat|parseInt|DataView|document|window|globalThis|global|arguments|Symbol|Intl|WeakSet|WeakMap|Set|Map|Reflect|JSON|Atomics|Int(?:8|16|32)Array|BigInt64Array|Float32Array|Float64Array|Uint8ClampedArray|Uint(?:8|16|32)Array|BigUint64Array)\\b',
    'nb',
  ),
  rule('(?:(?:Eval|Internal|Range|Reference|Syntax|Type|URI)?Error)\\b', 'ne'),
  rule('(super)(\\s*)(?=\\([\\w,?.$\\s]+\\s*\\))', ['k', 'w']),
  rule('[a-zA-Z_?.$][\\w?.$]*(?=\\(\\) \\{)', 'nx'),
  { re: new RegExp(JS_IDENT, 'yu'), by: 'nx' },
  rule('#[a-zA-Z_]\\w*', 'n'),
];
const jsProtect: Lang['protect'] = (node, offset, _whole, inner) => {
  const text = textOf(node);
  if (node.scope === 'comment') return [[text.startsWith('/*') ? 'cm' : text.startsWith('<!--') ? 'c' : 'c1', text]];
  if (node.scope === 'regexp') return [['sr', text]];
  if (text.startsWith('`')) {
    const out: Tok[] = [];
    let o = offset;
    for (const c of node.children ?? []) {
      const t = textOf(c);
      if (c.scope === 'subst') {
        out.push(['si', '${'], ...inner({ scope: null, children: [{ scope: null, text: t.slice(2, t.endsWith('}') ? -1 : undefined) }] }, o + 2));
        if (t.endsWith('}')) out.push(['si', '}']);
      } else out.push(['sb', t]);
      o += t.length;
    }
    return out;
  }
  if (text.startsWith('"')) return [['s2', text]];
  if (text.startsWith("'")) return [['s1', text]];
  return [['', text]];
};
const javascript: Lang = { hljs: 'javascript', protectedScopes: new Set(['string', 'comment', 'regexp']), states: { root: jsRoot(false) }, protect: jsProtect };
const typescript: Lang = { hljs: 'typescript', protectedScopes: new Set(['string', 'comment', 'regexp']), states: { root: jsRoot(true) }, protect: jsProtect };

// ---------------------------------------------------------------- JSON (data.py JsonLexer)
const json: Lang = {
  hljs: null,
  protectedScopes: new Set(),
  protect: noProtect,
  states: {
    root: [
      rule('\\s+', 'w'),
      rule('"(?:\\\\.|[^"\\\\])*"(?=\\s*:)', 'nt'),
      rule('"(?:\\\\.|[^"\\\\])*"', 's2'),
      rule('-?(?:0|[1-9]\\d*)(?:\\.\\d+(?:[eE][-+]?\\d+)?|[eE][-+]?\\d+)', 'mf'),
      rule('-?(?:0|[1-9]\\d*)', 'mi'),
      rule('(?:true|false|null)\\b', 'kc'),
      rule('[{}\\[\\],:]', 'p'),
      rule('//.*$', 'c1'),
      rule('/\\*[\\s\\S]*?\\*/', 'cm'),
    ],
  },
};

// ---------------------------------------------------------------- Go (go.py GoLexer)
const go: Lang = {
  hljs: 'go',
  protectedScopes: new Set(['string', 'comment']),
  protect(node) {
    const text = textOf(node);
    if (node.scope === 'comment') return [[text.startsWith('/*') ? 'cm' : 'c1', text]];
    return [[text.startsWith("'") ? 'sc' : 's', text]];
  },
  states: {
    root: [
      rule('\\s+', 'w'),
      rule('(\\\\)(\\n)', ['', 'w']),
      rule('(?:import|package)\\b', 'kn'),
      rule('(?:var|func|struct|type|interface|const)\\b', 'kd'),
      rule(words('break default select case defer go else goto switch fallthrough if range continue for return'), 'k'),
      rule('(?:true|false|iota|nil)\\b', 'kc'),
      rule('(' + words('print println panic recover close complex real imag len cap append copy delete new make min max clear', '\\b') + ')(\\()', ['nb', 'p']),
      rule(words('uint uint8 uint16 uint32 uint64 int int8 int16 int32 int64 float32 float64 map chan complex64 complex128 byte rune string bool error uintptr any comparable'), 'kt'),
      rule('\\d+i|\\d+\\.\\d*([Ee][-+]\\d+)?i|\\.\\d+([Ee][-+]\\d+)?i|\\d+[Ee][-+]\\d+i', 'm'),
      rule('\\d+(\\.\\d+[eE][+\\-]?\\d+|\\.\\d*|[eE][+\\-]?\\d+)', 'mf'),
      rule('\\.\\d+([eE][+\\-]?\\d+)?', 'mf'),
      rule('0[bB](_?[01])+', 'mb'),
      rule('0[oO]?(_?[0-7])+', 'mo'),
      rule('0[xX](_?[0-9a-fA-F])+', 'mh'),
      rule('(0|[1-9](_?[0-9])*)', 'mi'),
      rule('(<<=|>>=|<<|>>|<=|>=|&\\^=|&\\^|\\+=|-=|\\*=|/=|%=|&=|\\|=|\\^=|&&|\\|\\||<-|\\+\\+|--|==|!=|:=|[+\\-*/%&!=<>|^])', 'o'),
      rule('(\\.\\.\\.|[()\\[\\]{}.,;:~])', 'p'),
      { re: /[^\W\d]\w*/uy, by: 'nx' },
    ],
  },
};

// ---------------------------------------------------------------- Bash (shell.py BashLexer)
const BASH_BASIC: Rule[] = [
  rule('\\b(if|fi|else|while|in|do|done|for|then|return|function|case|select|break|continue|until|esac|elif)(?![\\w#$?!*@-])(\\s*)', ['k', 'w']),
  rule(
    '\\b(?:alias|bg|bind|builtin|caller|cd|command|compgen|complete|declare|dirs|disown|echo|enable|eval|exec|exit|export|false|fc|fg|getopts|hash|help|history|jobs|kill|let|local|logout|popd|printf|pushd|pwd|read|readonly|set|shift|shopt|source|suspend|test|time|times|trap|true|type|typeset|ulimit|umask|unalias|unset|wait)(?=[\\s)`])',
    'nb',
  ),
  rule('#!.+\\n', 'ch', { start: true }),
  rule('#.*\\n', 'c1'),
  rule('\\\\[\\w\\W]', 'se'),
  rule('(\\b\\w+)(\\s*)(\\+?=)', ['nv', 'w', 'o']),
  rule('[\\[\\]{}()=]', 'o'),
  rule('<<<', 'o'),
  rule('&&|\\|\\|', 'o'),
];
const BASH_INTERP: Rule[] = [
  rule('\\$\\(\\(', 'k', { next: 'math' }),
  rule('\\$\\(', 'k', { next: 'paren' }),
  rule('\\$\\{#?', 'si', { next: 'curly' }),
  rule('\\$[a-zA-Z_]\\w*', 'nv'),
  rule('\\$(?:\\d+|[#$?!_*@-])', 'nv'),
  rule('\\$', ''),
];
const BASH_DATA: Rule[] = [
  rule('\\$?"(?:\\\\.|[^"\\\\$])*"', 's2'),
  rule('"', 's2', { next: 'string' }),
  rule("\\$'(?:\\\\\\\\|\\\\[0-7]+|\\\\.|[^'\\\\])*'", 's1'),
  rule("'[\\s\\S]*?'", 's1'),
  rule(';', 'p'),
  rule('&', 'p'),
  rule('\\|', 'p'),
  rule('\\s+', 'w'),
  rule('\\d+\\b', 'm'),
  rule('[^=\\s\\[\\]{}()$"\'`\\\\<&|;]+', ''),
  rule('<', ''),
];
const BASH_ROOT: Rule[] = [...BASH_BASIC, rule('`', 'sb', { next: 'backticks' }), ...BASH_DATA, ...BASH_INTERP];
const bash: Lang = {
  hljs: null,
  protectedScopes: new Set(),
  protect: noProtect,
  states: {
    root: BASH_ROOT,
    string: [rule('"', 's2', { pop: true }), rule('(?:\\\\\\\\|\\\\[0-7]+|\\\\.|[^"\\\\$])+', 's2'), ...BASH_INTERP],
    curly: [rule('\\}', 'si', { pop: true }), rule(':-', 'k'), rule('\\w+', 'nv'), rule('[^}:"\'`$\\\\]+', 'p'), rule(':', 'p'), ...BASH_ROOT],
    paren: [rule('\\)', 'k', { pop: true }), ...BASH_ROOT],
    math: [
      rule('\\)\\)', 'k', { pop: true }),
      rule('\\*\\*|\\|\\||<<|>>|[-+*/%^|&<>]', 'o'),
      rule('\\d+#[\\da-zA-Z]+', 'm'),
      rule('\\d+#(?! )', 'm'),
      rule('0[xX][\\da-fA-F]+', 'm'),
      rule('\\d+', 'm'),
      rule('[a-zA-Z_]\\w*', 'nv'),
      ...BASH_ROOT,
    ],
    backticks: [rule('`', 'sb', { pop: true }), ...BASH_ROOT],
  },
};

// ---------------------------------------------------------------- Diff (diff.py DiffLexer)
const diff: Lang = {
  hljs: null,
  protectedScopes: new Set(),
  protect: noProtect,
  states: {
    root: [
      rule('( )(.*)(\\n)', ['w', '', 'w']),
      rule('(!.*|---)(\\n)', ['gs', 'w']),
      rule('((?:< |-).*)(\\n)', ['gd', 'w']),
      rule('((?:> |\\+).*)(\\n)', ['gi', 'w']),
      rule('(@.*|\\d(?:,\\d+)?(?:a|c|d)\\d+(?:,\\d+)?)(\\n)', ['gu', 'w']),
      rule('((?:[Ii]ndex|diff).*)(\\n)', ['gh', 'w']),
      rule('(=.*)(\\n)', ['gh', 'w']),
      rule('(.*)(\\n)', ['', 'w']),
    ],
  },
};

/** Lexers by the lower-cased fence word (Pygments' aliases, as code.ts names them). */
export const LANGS: Record<string, Lang> = {};
export const alias = (lang: Lang, names: string): void => {
  for (const n of names.split(' ')) LANGS[n] = lang;
};
alias(python, 'python py sage python3 py3 bazel starlark');
alias(javascript, 'javascript js');
alias(typescript, 'typescript ts');
alias(json, 'json json-object');
alias(go, 'go golang');
alias(bash, 'bash sh ksh zsh shell openrc');
alias(diff, 'diff udiff');

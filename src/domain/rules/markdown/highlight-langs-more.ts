/**
 * More of Pygments' lexers as rule tables (see highlight-langs.ts): SQL
 * (sql.py SqlLexer), Rust (rust.py), Java (jvm.py JavaLexer), C and C++
 * (c_cpp.py CFamilyLexer, CLexer, CppLexer, the common rules). A class
 * starting with "@" is Pygments' using(this[, state]): the group is lexed again
 * from that state.
 */
import { alias, popDefault, rule, rulesOnly, wordRule, words, type Rule } from './highlight-langs.js';
import { SQL_DATATYPES, SQL_KEYWORDS } from './highlight-sql-words.js';
import {
  CSS_ALL_UNITS,
  CSS_COLOR_KEYWORDS,
  CSS_CSS_PROPERTIES,
  CSS_FUNCTIONAL_NOTATION_KEYWORD_VALUES,
  CSS_KEYWORD_VALUES,
  CSS_OTHER_KEYWORD_VALUES,
  CSS_VENDOR_PREFIXES,
} from './highlight-css-words.js';

// ---------------------------------------------------------------- SQL (flags: IGNORECASE)
const sql = rulesOnly({
  root: [
    rule('\\s+', 'w'),
    rule('--.*\\n?', 'c1'),
    rule('/\\*', 'cm', { next: 'comment' }),
    wordRule(SQL_KEYWORDS, 'k', { fold: true }),
    wordRule(SQL_DATATYPES, 'nb', { fold: true }),
    rule('[+*/<>=~!@#%^&|`?-]', 'o'),
    rule('[0-9]+', 'mi'),
    rule("'(?:''|[^'])*'", 's1'),
    rule('"(?:""|[^"])*"', 'ss'),
    rule('[a-z_][\\w$]*', 'n', { flags: 'i' }),
    rule('[;:()\\[\\],.]', 'p'),
  ],
  comment: [rule('/\\*', 'cm', { next: 'comment' }), rule('\\*/', 'cm', { pop: true }), rule('[^/*]+', 'cm'), rule('[/*]', 'cm')],
});

// ---------------------------------------------------------------- Rust
const RUST_TYPES = rule(words('u8 u16 u32 u64 u128 i8 i16 i32 i64 i128 usize isize f32 f64 char str bool'), 'kt');
const RUST_BUILTINS = rule(
  words('Copy Send Sized Sync Unpin Drop Fn FnMut FnOnce drop Box ToOwned Clone PartialEq PartialOrd Eq Ord AsRef AsMut Into From Default Iterator Extend IntoIterator DoubleEndedIterator ExactSizeIterator Option Some None Result Ok Err String ToString Vec'),
  'nb',
);
const RUST_MACROS = rule(
  words(
    'asm assert assert_eq assert_ne cfg column compile_error concat concat_idents dbg debug_assert debug_assert_eq debug_assert_ne env eprint eprintln file format format_args format_args_nl global_asm include include_bytes include_str line llvm_asm log_syntax macro_rules matches module_path option_env panic print println stringify thread_local todo trace_macros unimplemented unreachable vec write writeln',
    '!',
  ),
  'fm',
);
const RUST_BASE: Rule[] = [
  rule('\\n', 'w'),
  rule('\\s+', 'w'),
  rule('//!.*?\\n', 'sd'),
  rule('///(\\n|[^/].*?\\n)', 'sd'),
  rule('//(.*?)\\n', 'c1'),
  rule('/\\*\\*(\\n|[^/*])', 'sd', { next: 'doccomment' }),
  rule('/\\*!', 'sd', { next: 'doccomment' }),
  rule('/\\*', 'cm', { next: 'comment' }),
  rule('\\$([a-zA-Z_]\\w*|\\(,?|\\),?|,?)', 'cp'),
  rule(words('as async await box const crate dyn else extern for if impl in loop match move mut pub ref return static super trait unsafe use where while'), 'k'),
  rule(words('abstract become do final macro override priv typeof try unsized virtual yield'), 'kr'),
  rule('(?:true|false)\\b', 'kc'),
  rule('self\\b', 'bp'),
  rule('mod\\b', 'k', { next: 'modname' }),
  rule('let\\b', 'kd'),
  rule('fn\\b', 'k', { next: 'funcname' }),
  rule('(?:struct|enum|type|union)\\b', 'k', { next: 'typename' }),
  rule('(default)(\\s+)(type|fn)\\b', ['k', 'w', 'k']),
  RUST_TYPES,
  rule('[sS]elf\\b', 'bp'),
  RUST_BUILTINS,
  RUST_MACROS,
  rule('::\\b', 'p'),
  rule('(?::|->)', 'p', { next: 'typename' }),
  rule("(break|continue)(\\b\\s*)('[A-Za-z_]\\w*)?", ['k', 'w', 'nl']),
  rule("'(\\\\['\"\\\\nrt]|\\\\x[0-7][0-9a-fA-F]|\\\\0|\\\\u\\{[0-9a-fA-F]{1,6}\\}|.)'", 'sc'),
  rule("b'(\\\\['\"\\\\nrt]|\\\\x[0-9a-fA-F]{2}|\\\\0|\\\\u\\{[0-9a-fA-F]{1,6}\\}|.)'", 'sc'),
  rule('0b[01_]+', 'mb', { next: 'number_lit' }),
  rule('0o[0-7_]+', 'mo', { next: 'number_lit' }),
  rule('0[xX][0-9a-fA-F_]+', 'mh', { next: 'number_lit' }),
  rule('[0-9][0-9_]*(\\.[0-9_]+[eE][+\\-]?[0-9_]+|\\.[0-9_]*(?!\\.)|[eE][+\\-]?[0-9_]+)', 'mf', { next: 'number_lit' }),
  rule('[0-9][0-9_]*', 'mi', { next: 'number_lit' }),
  rule('b"', 's', { next: 'bytestring' }),
  rule('"', 's', { next: 'string' }),
  rule('b?r(#*)"[\\s\\S]*?"\\1', 's'),
  rule("'", 'o', { next: 'lifetime' }),
  rule('\\.\\.=?', 'o'),
  rule('[{}()\\[\\],.;]', 'p'),
  rule('[+\\-*/%&|<>^!~@=:?]', 'o'),
  rule('[a-zA-Z_]\\w*', 'n'),
  rule('r#[a-zA-Z_]\\w*', 'n'),
  rule('#!?\\[', 'cp', { next: 'attribute' }),
  rule('#', 'p'),
];
const RUST_STRING: Rule[] = [
  rule('"', 's', { pop: true }),
  rule('\\\\[\'"\\\\nrt]|\\\\x[0-7][0-9a-fA-F]|\\\\0|\\\\u\\{[0-9a-fA-F]{1,6}\\}', 'se'),
  rule('[^\\\\"]+', 's'),
  rule('\\\\', 's'),
];
const rust = rulesOnly({
  root: [rule('#![^[\\r\\n].*$', 'cp', { start: true }), ...RUST_BASE],
  comment: [rule('[^*/]+', 'cm'), rule('/\\*', 'cm', { next: 'comment' }), rule('\\*/', 'cm', { pop: true }), rule('[*/]', 'cm')],
  doccomment: [rule('[^*/]+', 'sd'), rule('/\\*', 'sd', { next: 'doccomment' }), rule('\\*/', 'sd', { pop: true }), rule('[*/]', 'sd')],
  modname: [rule('\\s+', 'w'), rule('[a-zA-Z_]\\w*', 'nn', { pop: true }), popDefault()],
  funcname: [rule('\\s+', 'w'), rule('[a-zA-Z_]\\w*', 'nf', { pop: true }), popDefault()],
  typename: [rule('\\s+', 'w'), rule('&', 'kp'), rule("'", 'o', { next: 'lifetime' }), RUST_BUILTINS, RUST_TYPES, rule('[a-zA-Z_]\\w*', 'nc', { pop: true }), popDefault()],
  lifetime: [rule('(?:static|_)', 'nb'), rule('[a-zA-Z_]+\\w*', 'na'), popDefault()],
  number_lit: [rule('[ui](8|16|32|64|size)', 'k', { pop: true }), rule('f(32|64)', 'k', { pop: true }), popDefault()],
  string: RUST_STRING,
  bytestring: [rule('\\\\x[89a-fA-F][0-9a-fA-F]', 'se'), ...RUST_STRING],
  attribute: [rule('"', 's', { next: 'string' }), rule('\\[', 'cp', { next: 'attribute' }), rule('\\]', 'cp', { pop: true }), rule('[^"\\]\\[]+', 'cp')],
});

// ---------------------------------------------------------------- Java (flags: MULTILINE | DOTALL)
const J = (re: string, by: Rule['by'], opts: Partial<Omit<Rule, 're' | 'by'>> = {}): Rule => rule(re, by, { ...opts, flags: 'su' });
const java = rulesOnly({
  root: [
    J('(^\\s*)((?:(?:public|private|protected|static|strictfp)(?:\\s+))*)(record)\\b', ['w', '@root', 'kd'], { next: 'class' }),
    J('[^\\S\\n]+', 'w'),
    J('(//.*?)(\\n)', ['c1', 'w']),
    J('/\\*.*?\\*/', 'cm'),
    J('(?:assert|break|case|catch|continue|default|do|else|finally|for|if|goto|instanceof|new|return|switch|this|throw|try|while)\\b', 'k'),
    J('((?:(?:[^\\W\\d]|\\$)[\\w.\\[\\]$<>?]*\\s+)+?)((?:[^\\W\\d]|\\$)[\\w$]*)(\\s*)(\\()', ['@root', 'nf', 'w', 'p']),
    J('@[^\\W\\d][\\w.]*', 'nd'),
    J(
      '(?:abstract|const|enum|exports|extends|final|implements|native|non-sealed|open|opens|permits|private|protected|provides|public|requires|sealed|static|strictfp|super|synchronized|throws|to|transient|transitive|uses|volatile|with|yield)\\b',
      'kd',
    ),
    J('(?:boolean|byte|char|double|float|int|long|short|void)\\b', 'kt'),
    J('(package)(\\s+)', ['kn', 'w'], { next: 'import' }),
    J('(?:true|false|null)\\b', 'kc'),
    J('(?:class|interface)\\b', 'kd', { next: 'class' }),
    J('(?:module)\\b', 'kd', { next: 'class' }),
    J('(var)(\\s+)', ['kd', 'w'], { next: 'var' }),
    J('(import(?:\\s+(?:static|module))?)(\\s+)', ['kn', 'w'], { next: 'import' }),
    J('"""\\n', 's', { next: 'mstring' }),
    J('"', 's', { next: 'string' }),
    J("'\\\\.'|'[^\\\\]'|'\\\\u[0-9a-fA-F]{4}'", 'sc'),
    J('(\\.)((?:[^\\W\\d]|\\$)[\\w$]*)', ['p', 'na']),
    J('^(\\s*)(default)(:)', ['w', 'k', 'p']),
    J('^(\\s*)((?:[^\\W\\d]|\\$)[\\w$]*)(:)', ['w', 'nl', 'p']),
    J('([^\\W\\d]|\\$)[\\w$]*', 'n'),
    J(
      '([0-9][0-9_]*\\.([0-9][0-9_]*)?|\\.[0-9][0-9_]*)([eE][+\\-]?[0-9][0-9_]*)?[fFdD]?|[0-9][eE][+\\-]?[0-9][0-9_]*[fFdD]?|[0-9]([eE][+\\-]?[0-9][0-9_]*)?[fFdD]|0[xX]([0-9a-fA-F][0-9a-fA-F_]*\\.?|([0-9a-fA-F][0-9a-fA-F_]*)?\\.[0-9a-fA-F][0-9a-fA-F_]*)[pP][+\\-]?[0-9][0-9_]*[fFdD]?',
      'mf',
    ),
    J('0[xX][0-9a-fA-F][0-9a-fA-F_]*[lL]?', 'mh'),
    J('0[bB][01][01_]*[lL]?', 'mb'),
    J('0[0-7_]+[lL]?', 'mo'),
    J('0|[1-9][0-9_]*[lL]?', 'mi'),
    J('[~^*!%&\\[\\]<>|+=/?-]', 'o'),
    J('[{}();:.,]', 'p'),
    J('\\n', 'w'),
  ],
  class: [J('\\s+', ''), J('([^\\W\\d]|\\$)[\\w$]*', 'nc', { pop: true })],
  var: [J('([^\\W\\d]|\\$)[\\w$]*', 'n', { pop: true })],
  import: [J('[\\w.]+\\*?', 'nn', { pop: true })],
  mstring: [J('"""', 's', { pop: true }), J('"', 's'), J('[^\\\\"]+', 's'), J('\\\\\\\\', 's'), J('\\\\"', 's'), J('\\\\', 's')],
  string: [J('[^\\\\"]+', 's'), J('\\\\\\\\', 's'), J('\\\\"', 's'), J('\\\\', 's'), J('"', 's', { pop: true })],
});

// ---------------------------------------------------------------- C and C++ (c_cpp.py)
const WS1 = '\\s*(?:/[*].*?[*]/\\s*)?';
const HEX = "[0-9a-fA-F]('?[0-9a-fA-F])*";
const DEC = "\\d('?\\d)*";
const INTSUFFIX = '(([uU]?[zZ])|([zZ][uU])|([uU][lL]{0,2})|([lL]{1,2}[uU]?))?';
const IDENT = '(?!\\d)(?:[\\w$]|\\\\u[0-9a-fA-F]{4}|\\\\U[0-9a-fA-F]{8})+';
const NS_IDENT = '(?!\\d)(?:[\\w$]|\\\\u[0-9a-fA-F]{4}|\\\\U[0-9a-fA-F]{8}|::)+';
const C_SINGLE = '//(?:.|(?<=\\\\)\\n)*\\n';
const C_MULTI = '/(?:\\\\\\n)?[*](?:[^*]|[*](?!(?:\\\\\\n)?/))*[*](?:\\\\\\n)?/';
const POSSIBLE_COMMENTS = `\\s*(?:(?:(?:${C_SINGLE})|(?:${C_MULTI}))\\s*)*`;
const C_TYPE_NAMES = new Set(
  `size_t ssize_t off_t wchar_t ptrdiff_t sig_atomic_t fpos_t clock_t time_t va_list jmp_buf FILE DIR div_t ldiv_t mbstate_t wctrans_t wint_t
  wctype_t byte int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t int_least8_t int_least16_t int_least32_t int_least64_t
  uint_least8_t uint_least16_t uint_least32_t uint_least64_t int_fast8_t int_fast16_t int_fast32_t int_fast64_t uint_fast8_t uint_fast16_t
  uint_fast32_t uint_fast64_t intptr_t uintptr_t intmax_t uintmax_t clockid_t cpu_set_t cpumask_t dev_t gid_t id_t ino_t key_t mode_t nfds_t
  pid_t rlim_t sig_t sighandler_t siginfo_t sigset_t sigval_t socklen_t timer_t uid_t`.split(/\s+/),
);
/** CLexer.get_tokens_unprocessed: a Name that is a standard, C99 or Linux type name is Keyword.Type. */
const cName = (s: string): string => (C_TYPE_NAMES.has(s) ? 'kt' : 'n');

function cFamily(cpp: boolean): ReturnType<typeof rulesOnly> {
  const whitespace: Rule[] = [
    rule('^#if\\s+0', 'cp', { next: 'if0' }),
    rule('^#', 'cp', { next: 'macro' }),
    rule(`^(${WS1})(#if\\s+0)`, ['@root', 'cp'], { next: 'if0' }),
    rule(`^(${WS1})(#)`, ['@root', 'cp'], { next: 'macro' }),
    rule(`(^[ \\t]*)(?!(?:public|private|protected|default)\\b)(${IDENT})(\\s*)(:)(?!:)`, ['w', 'nl', 'w', 'p']),
    rule('\\n', 'w'),
    rule('[^\\S\\n]+', 'w'),
    rule('\\\\\\n', ''),
    rule(C_SINGLE, 'c1'),
    rule(C_MULTI, 'cm'),
    rule('/(\\\\\\n)?[*][\\w\\W]*', 'cm'),
  ];
  const keywords: Rule[] = [
    ...(cpp
      ? [
          rule('(class|concept|typename)(\\s+)', ['k', 'w'], { next: 'classname' }),
          rule(
            words(
              'catch const_cast delete dynamic_cast explicit export friend mutable new operator private protected public reinterpret_cast class __restrict static_cast template this throw throws try typeid using virtual concept decltype noexcept override final constinit consteval co_await co_return co_yield requires import module typename and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq contract_assert pre post',
            ),
            'k',
          ),
          rule('namespace\\b', 'k', { next: 'namespace' }),
          rule('(enum)(\\s+)', ['k', 'w'], { next: 'classname' }),
        ]
      : []),
    rule('(struct|union)(\\s+)', ['k', 'w'], { next: 'classname' }),
    rule('case\\b', 'k', { next: 'case' }),
    rule(
      words(
        'asm auto break const constexpr continue countof default defer do else enum extern for goto if register restricted return sizeof struct static switch typedef typeof typeof_unqual volatile while union thread_local alignas alignof static_assert _Pragma fortran',
      ),
      'k',
    ),
    rule(words('inline _inline __inline naked restrict thread'), 'kr'),
    rule('(__m(128i|128d|128|64))\\b', 'kr'),
    rule(words('asm based except stdcall cdecl fastcall declspec finally try leave w64 unaligned raise noop identifier forceinline assume null', '\\b', '__'), 'kr'),
  ];
  const types: Rule[] = [
    rule(words('int8 int16 int32 int64 wchar_t', '\\b', '__'), 'kr'),
    rule(words(`bool int long float short double char unsigned signed void _BitInt __int128${cpp ? ' char8_t char16_t char32_t wchar_t' : ''}`), 'kt'),
  ];
  const statements: Rule[] = [
    ...keywords,
    ...types,
    rule('([LuU]|u8)?(")', ['sa', 's'], { next: 'string' }),
    rule("([LuU]|u8)?(')(\\\\.|\\\\[0-7]{1,3}|\\\\x[a-fA-F0-9]{1,2}|[^\\\\'\\n])(')", ['sa', 'sc', 'sc', 'sc']),
    rule(`0[xX](${HEX}\\.${HEX}|\\.${HEX}|${HEX})[pP][+-]?${HEX}[lL]?`, 'mf'),
    rule(`(-)?(${DEC}\\.${DEC}|\\.${DEC}|${DEC})[eE][+-]?${DEC}[fFlL]?`, 'mf'),
    rule(`(-)?((${DEC}\\.(${DEC})?|\\.${DEC})[fFlL]?)|(${DEC}[fFlL])`, 'mf'),
    rule(`(-)?0[xX]${HEX}${INTSUFFIX}`, 'mh'),
    rule(`(-)?0[bB][01]('?[01])*${INTSUFFIX}`, 'mb'),
    rule(`(-)?0('?[0-7])+${INTSUFFIX}`, 'mo'),
    rule(`(-)?${DEC}${INTSUFFIX}`, 'mi'),
    rule('[~!%^&*+=|?:<>/-]', 'o'),
    rule('[()\\[\\],.]', 'p'),
    rule('(?:true|false|NULL|nullptr)\\b', 'nb'),
    rule(IDENT, cName),
  ];
  const signature = `(${NS_IDENT}(?:[&*\\s])+)(${POSSIBLE_COMMENTS})(${NS_IDENT})(${POSSIBLE_COMMENTS})(\\([^;"')]*?\\))(${POSSIBLE_COMMENTS})`;
  return rulesOnly({
    root: [
      ...whitespace,
      ...keywords,
      rule(`${signature}([^;{/"']*)(\\{)`, ['@root', '@whitespace', 'nf', '@whitespace', '@root', '@whitespace', '@root', 'p'], { next: 'function' }),
      rule(`${signature}([^;/"']*)(;)`, ['@root', '@whitespace', 'nf', '@whitespace', '@root', '@whitespace', '@root', 'p']),
      ...types,
      { re: /(?:)/y, by: '', next: 'statement' },
    ],
    whitespace,
    statement: [...whitespace, ...statements, rule('\\}', 'p'), rule('[{;]', 'p', { pop: true })],
    function: [...whitespace, ...statements, rule(';', 'p'), rule('\\{', 'p', { next: 'function' }), rule('\\}', 'p', { pop: true })],
    string: [
      rule('"', 's', { pop: true }),
      rule('\\\\([\\\\abfnrtv"\']|x[a-fA-F0-9]{2,4}|u[a-fA-F0-9]{4}|U[a-fA-F0-9]{8}|[0-7]{1,3})', 'se'),
      rule('[^\\\\"\\n]+', 's'),
      rule('\\\\\\n', 's'),
      rule('\\\\', 's'),
    ],
    macro: [
      rule(`(${WS1})(include)(${WS1})("[^"]+"|<[^>]+>)([^\\S\\n]*)([^/\\n]*/[*][\\s\\S]*?[*]/)`, ['@root', 'cp', '@root', 'cpf', '@root', 'cm']),
      rule(`(${WS1})(include)(${WS1})("[^"]+"|<[^>]+>)([^\\S\\n]*)([^\\n]*)`, ['@root', 'cp', '@root', 'cpf', '@root', 'c1']),
      rule('[^/\\n]+', 'cp'),
      rule('/[*][\\s\\S]*?[*]/', 'cm'),
      rule('//.*?\\n', 'c1', { pop: true }),
      rule('/', 'cp'),
      rule('(?<=\\\\)\\n', 'cp'),
      rule('\\n', 'cp', { pop: true }),
    ],
    if0: [rule('^\\s*#if.*?(?<!\\\\)\\n', 'cp', { next: 'if0' }), rule('^\\s*#el(?:se|if).*\\n', 'cp', { pop: true }), rule('^\\s*#endif.*?(?<!\\\\)\\n', 'cp', { pop: true }), rule('.*?\\n', 'c')],
    classname: [...whitespace, rule(IDENT, 'nc', { pop: true }), rule('\\s*(?=>)', '', { pop: true }), popDefault()],
    namespace: [rule('[;{]', 'p', { pop: true }), rule(IDENT + '(?:::' + IDENT + ')*', 'nn'), ...whitespace],
    case: [rule('(?<!:)(:)(?!:)', 'p', { pop: true }), rule(IDENT, 'no'), ...whitespace, ...statements],
  });
}

alias(sql, 'sql');
alias(rust, 'rust rs');
alias(java, 'java');
alias(cFamily(false), 'c');
alias(cFamily(true), 'cpp c++');

// ---------------------------------------------------------------- CSS (css.py CssLexer)
const esc = (w: string): string => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const list = (ws: string): string => ws.trim().split(/\s+/).map(esc).join(' ');
const inOrder = (ws: string): string => ws.trim().split(/\s+/).map(esc).join('|');
const CSS_URLS: Rule[] = [
  rule('(url)(\\()(".*?")(\\))', ['nb', 'p', 's2', 'p']),
  rule("(url)(\\()('.*?')(\\))", ['nb', 'p', 's1', 'p']),
  rule('(url)(\\()(.*?)(\\))', ['nb', 'p', 'sx', 'p']),
];
const CSS_NUMERIC: Rule[] = [
  rule('\\#[a-zA-Z0-9]{1,6}', 'mh'),
  rule('[+\\-]?[0-9]*[.][0-9]+', 'mf', { next: 'numeric-end' }),
  rule('[+\\-]?[0-9]+', 'mi', { next: 'numeric-end' }),
];
const CSS_STRINGS: Rule[] = [rule('"(\\\\\\\\|\\\\[^\\\\]|[^"\\\\])*"', 's2'), rule("'(\\\\\\\\|\\\\[^\\\\]|[^'\\\\])*'", 's1')];
const CSS_KW_RULES: Rule[] = [
  rule(words(list(CSS_KEYWORD_VALUES)), 'kc'),
  rule(words(list(CSS_OTHER_KEYWORD_VALUES)), 'kc'),
  rule(words(list(CSS_COLOR_KEYWORDS)), 'kc'),
];
const CSS_BASICS: Rule[] = [
  rule('\\s+', 'w'),
  rule('/\\*(?:.|\\n)*?\\*/', 'c'),
  rule('\\{', 'p', { next: 'content' }),
  rule('(\\:{1,2})([\\w-]+)', ['p', 'nd']),
  rule('(\\.)([\\w-]+)', ['p', 'nc']),
  rule('(\\#)([\\w-]+)', ['p', 'nn']),
  rule('(@)([\\w-]+)', ['p', 'k'], { next: 'atrule' }),
  rule('[\\w-]+', 'nt'),
  rule('[~^*!%&$\\[\\]()<>|+=@:;,./?-]', 'o'),
  ...CSS_STRINGS,
];
const css = rulesOnly({
  root: CSS_BASICS,
  atrule: [rule('\\{', 'p', { next: 'atcontent' }), rule(';', 'p', { pop: true }), ...CSS_BASICS],
  atcontent: [...CSS_BASICS, rule('\\}', 'p', { pop: 2 })],
  content: [
    rule('\\s+', 'w'),
    rule('\\}', 'p', { pop: true }),
    rule(';', 'p'),
    rule('^@.*?$', 'cp'),
    rule(words(list(CSS_VENDOR_PREFIXES), ''), 'kp'),
    rule(`(${inOrder(CSS_CSS_PROPERTIES)})(\\s*)(\\:)`, ['k', 'w', 'p'], { next: 'value-start' }),
    rule('([-]+[a-zA-Z_][\\w-]*)(\\s*)(\\:)', ['nv', 'w', 'p'], { next: 'value-start' }),
    rule('([a-zA-Z_][\\w-]*)(\\s*)(\\:)', ['n', 'w', 'p'], { next: 'value-start' }),
    rule('/\\*(?:.|\\n)*?\\*/', 'c'),
  ],
  'value-start': [
    rule('\\s+', 'w'),
    rule(words(list(CSS_VENDOR_PREFIXES), ''), 'bp'),
    ...CSS_URLS,
    rule(`(${inOrder(CSS_FUNCTIONAL_NOTATION_KEYWORD_VALUES)})(\\()`, ['nb', 'p'], { next: 'function-start' }),
    rule('([a-zA-Z_][\\w-]+)(\\()', ['nf', 'p'], { next: 'function-start' }),
    ...CSS_KW_RULES,
    rule(words(list(CSS_CSS_PROPERTIES)), 'k'),
    rule('\\!important', 'cp'),
    rule('/\\*(?:.|\\n)*?\\*/', 'c'),
    ...CSS_NUMERIC,
    rule('[~^*!%&<>|+=@:./?-]+', 'o'),
    rule('[\\[\\](),]+', 'p'),
    ...CSS_STRINGS,
    rule('[a-zA-Z_][\\w-]*', 'n'),
    rule(';', 'p', { pop: true }),
    rule('\\}', 'p', { pop: 2 }),
  ],
  'function-start': [
    rule('\\s+', 'w'),
    rule('[-]+([A-Za-z][\\w+]*[-]*)+', 'nv'),
    ...CSS_URLS,
    rule(words(list(CSS_VENDOR_PREFIXES), ''), 'kp'),
    ...CSS_KW_RULES,
    rule(`(${inOrder(CSS_FUNCTIONAL_NOTATION_KEYWORD_VALUES)})(\\()`, ['nb', 'p'], { next: 'function-start' }),
    rule('([a-zA-Z_][\\w-]+)(\\()', ['nf', 'p'], { next: 'function-start' }),
    rule('/\\*(?:.|\\n)*?\\*/', 'c'),
    ...CSS_NUMERIC,
    rule('[*+/-]', 'o'),
    rule(',', 'p'),
    ...CSS_STRINGS,
    rule('[a-zA-Z_-]\\w*', 'n'),
    rule('\\)', 'p', { pop: true }),
  ],
  'numeric-end': [rule(words(list(CSS_ALL_UNITS)), 'kt'), rule('%', 'kt'), popDefault()],
});
alias(css, 'css');

// ---------------------------------------------------------------- HTML (html.py HtmlLexer; flags: IGNORECASE | DOTALL)
const H = (re: string, by: Rule['by'], opts: Partial<Omit<Rule, 're' | 'by'>> = {}): Rule => rule(re, by, { ...opts, flags: 'is' });
const html = rulesOnly({
  root: [
    H('[^<&]+', ''),
    H('&\\S*?;', 'ni'),
    H('\\<\\!\\[CDATA\\[.*?\\]\\]\\>', 'cp'),
    H('<!--.*?-->', 'cm'),
    H('<\\?.*?\\?>', 'cp'),
    H('<![^>]*>', 'cp'),
    H('(<)(\\s*)(script)(\\s*)', ['p', '', 'nt', ''], { next: 'script-content', then: 'tag' }),
    H('(<)(\\s*)(style)(\\s*)', ['p', '', 'nt', ''], { next: 'style-content', then: 'tag' }),
    H('(<)(\\s*)([\\w:.-]+)', ['p', '', 'nt'], { next: 'tag' }),
    H('(<)(\\s*)(/)(\\s*)([\\w:.-]+)(\\s*)(>)', ['p', '', 'p', '', 'nt', '', 'p']),
  ],
  tag: [
    H('\\s+', ''),
    H('([\\w:-]+\\s*)(=)(\\s*)', ['na', 'o', ''], { next: 'attr' }),
    H('[\\w:-]+', 'na'),
    H('(/?)(\\s*)(>)', ['p', '', 'p'], { pop: true }),
  ],
  'script-content': [
    H('(<)(\\s*)(/)(\\s*)(script)(\\s*)(>)', ['p', '', 'p', '', 'nt', '', 'p'], { pop: true }),
    H('.+?(?=<\\s*/\\s*script\\s*>)', '@@javascript'),
    H('.+?\\n', '@@javascript', { pop: true }),
    H('.+', '@@javascript', { pop: true }),
  ],
  'style-content': [
    H('(<)(\\s*)(/)(\\s*)(style)(\\s*)(>)', ['p', '', 'p', '', 'nt', '', 'p'], { pop: true }),
    H('.+?(?=<\\s*/\\s*style\\s*>)', '@@css'),
    H('.+?\\n', '@@css', { pop: true }),
    H('.+', '@@css', { pop: true }),
  ],
  attr: [H('".*?"', 's', { pop: true }), H("'.*?'", 's', { pop: true }), H('[^\\s>]+', 's', { pop: true })],
});
alias(html, 'html');

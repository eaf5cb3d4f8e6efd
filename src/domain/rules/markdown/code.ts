// Code blocks in Zulip's Pygments/codehilite wrapper (spec §5): the exact wrapper, the
// data-code-language value Pygments would report, Zulip's escaping, and for the languages
// highlight.ts knows, token <span>s with Pygments' classes (other languages stay plain).
import { escapeCode, escapePygments } from './html.js';
import { highlightCode } from './highlight.js';

// Pygments lexer aliases -> lexer display name, for the languages people actually use.
const LEXER_NAMES: Record<string, string> = {};
const define = (name: string, aliases: string) => {
  for (const a of aliases.split(' ')) LEXER_NAMES[a] = name;
};
define('Python', 'python py sage python3 py3 bazel starlark');
define('Python 2.x', 'python2 py2');
define('Python console session', 'pycon python-console');
define('Python Traceback', 'pytb py3tb');
define('JavaScript', 'javascript js');
define('TypeScript', 'typescript ts');
define('JSX', 'jsx react');
define('TSX', 'tsx');
define('JSON', 'json json-object');
define('Java', 'java');
define('C', 'c');
define('C++', 'cpp c++');
define('C#', 'csharp c#');
define('Go', 'go golang');
define('Rust', 'rust rs');
define('Ruby', 'ruby rb duby');
define('Bash', 'bash sh ksh zsh shell openrc');
define('Bash Session', 'console shell-session');
define('PowerShell', 'powershell pwsh posh ps1 psm1');
define('YAML', 'yaml');
define('HTML', 'html');
define('XML', 'xml');
define('CSS', 'css');
define('SCSS', 'scss');
define('Sass', 'sass');
define('SQL', 'sql');
define('PostgreSQL SQL dialect', 'postgresql postgres');
define('MySQL', 'mysql');
define('TeX', 'tex latex');
define('Text only', 'text');
define('Markdown', 'markdown md');
define('reStructuredText', 'restructuredtext rst rest');
define('PHP', 'php php3 php4 php5');
define('Kotlin', 'kotlin');
define('Swift', 'swift');
define('Scala', 'scala');
define('Haskell', 'haskell hs');
define('Perl', 'perl pl');
define('Lua', 'lua');
define('S', 'splus s r');
define('Diff', 'diff udiff');
define('Docker', 'docker dockerfile');
define('INI', 'ini cfg dosini');
define('TOML', 'toml');
define('Makefile', 'make makefile mf bsdmake');
define('CMake', 'cmake');
define('Objective-C', 'objective-c objectivec obj-c objc');
define('Erlang', 'erlang');
define('Elixir', 'elixir ex exs');
define('Clojure', 'clojure clj');
define('Scheme', 'scheme scm');
define('Common Lisp', 'common-lisp cl lisp');
define('Racket', 'racket rkt');
define('OCaml', 'ocaml');
define('F#', 'fsharp f#');
define('Dart', 'dart');
define('Julia', 'julia jl');
define('Matlab', 'matlab');
define('VimL', 'vim');
define('Nginx configuration file', 'nginx');
define('GraphQL', 'graphql');
define('CoffeeScript', 'coffeescript coffee-script coffee');
define('Groovy', 'groovy');
define('HTTP', 'http');
define('Protocol Buffer', 'protobuf proto');
define('Fortran', 'fortran f90');
define('Delphi', 'delphi pas pascal objectpascal');
define('Nim', 'nim nimrod');
define('Zig', 'zig');
define('Elm', 'elm');
define('Prolog', 'prolog');
define('Awk', 'awk gawk mawk nawk');
define('Tcl', 'tcl');
define('D', 'd');
define('NASM', 'nasm');
define('LLVM', 'llvm');
define('Django/Jinja', 'django jinja');
define('Handlebars', 'handlebars');
define('Emacs Lisp', 'emacs-lisp elisp emacs');
define('Verilog', 'verilog v');
define('Batchfile', 'batch bat dosbatch winbatch');
define('Groff', 'groff nroff man');
define('Ada', 'ada ada95 ada2005');
define('Coq', 'coq');
define('Lean', 'lean');
define('Solidity', 'solidity');
define('Terraform', 'terraform tf hcl');
define('Vue', 'vue');
define('Svelte', 'svelte');
define('Zulip-flavored Markdown', 'zulip');

/** The data-code-language value: Pygments' name for known aliases, else the word itself. */
export function codeLanguageName(lang: string): string {
  // Own properties only: a fence word like `constructor` or `__proto__` is no lexer's alias.
  return Object.hasOwn(LEXER_NAMES, lang) ? LEXER_NAMES[lang]! : lang;
}

/**
 * `text` is the block's content without the final newline. Without a language the
 * block is Pygments output (quotes escaped); with one, Zulip re-serialises it to add
 * data-code-language, which leaves quotes literal.
 */
export function renderCodeBlock(text: string, lang: string): string {
  const body = text + '\n';
  if (!lang) {
    return `<div class="codehilite"><pre><span></span><code>${escapePygments(body)}</code></pre></div>`;
  }
  const name = codeLanguageName(lang).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const inner = highlightCode(body, lang) ?? escapeCode(body);
  return `<div class="codehilite" data-code-language="${name}"><pre><span></span><code>${inner}</code></pre></div>`;
}

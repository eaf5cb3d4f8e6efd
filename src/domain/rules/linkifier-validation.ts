/**
 * Linkifier validation as Zulip does it (zerver/models/linkifiers.py): the
 * pattern must be a regular expression RE2 accepts (Python-style named
 * groups, no lookaround or backreferences), the URL template must be an RFC
 * 6570 template, and the template's variables must be exactly the
 * pattern's named groups. Errors come in Django's shape: a message per
 * field ("pattern", "url_template") or for the whole object ("__all__"),
 * and the first one is the response's msg.
 */

export type LinkifierErrors = Record<string, string[]>;

export class PatternError extends Error {}

const REPEAT_CHARS = new Set(['*', '+', '?']);

/** A {n}, {n,} or {n,m} repetition at i: its end index, or -1 when "{" is a literal there. */
function curlyEnd(p: string, i: number): { end: number; ok: boolean } | null {
  const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
  if (!m) return null;
  const min = Number(m[1]);
  const max = m[3] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
  return { end: i + m[0].length, ok: min <= 1000 && (max === Infinity || (max <= 1000 && min <= max)) };
}

/**
 * Checks a pattern the way RE2 parses it and returns its named groups.
 * Throws PatternError with RE2's message ("missing ): (foo",
 * "bad repetition operator: ????", ...).
 */
export function parseLinkifierPattern(p: string): string[] {
  const groups: string[] = [];
  let depth = 0;
  // Whether the last thing parsed can take a repetition operator, and where the last operator started.
  let atom = false;
  let lastRepeat = -1;
  let i = 0;
  const s = p;
  while (i < s.length) {
    const c = s[i]!;
    if (REPEAT_CHARS.has(c) || (c === '{' && curlyEnd(s, i))) {
      let end = c === '{' ? curlyEnd(s, i)!.end : i + 1;
      if (c === '{' && !curlyEnd(s, i)!.ok) throw new PatternError(`bad repetition operator: ${s.slice(i, end)}`);
      if (s[end] === '?') end++;
      if (lastRepeat >= 0) throw new PatternError(`bad repetition operator: ${s.slice(lastRepeat, end)}`);
      if (!atom) throw new PatternError(`missing argument to repetition operator: ${s.slice(i, end)}`);
      lastRepeat = i;
      i = end;
      continue;
    }
    lastRepeat = -1;
    if (c === '\\') {
      if (i + 1 >= s.length) throw new PatternError('trailing \\');
      const n = s[i + 1]!;
      if (/[1-9]/.test(n)) throw new PatternError(`invalid escape sequence: \\${n}`);
      if (n === 'k') throw new PatternError('invalid escape sequence: \\k');
      i += 2;
      atom = true;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (s[j] === '^') j++;
      if (s[j] === ']') j++;
      while (j < s.length && s[j] !== ']') j += s[j] === '\\' ? 2 : 1;
      if (j >= s.length) throw new PatternError(`missing ]: ${s.slice(i)}`);
      i = j + 1;
      atom = true;
      continue;
    }
    if (c === '(') {
      if (s[i + 1] === '?') {
        const rest = s.slice(i);
        const named = /^\(\?P?<([^>]*)>/.exec(rest);
        if (named && !rest.startsWith('(?<=') && !rest.startsWith('(?<!')) {
          const name = named[1]!;
          if (!/^\w+$/.test(name) || groups.includes(name)) throw new PatternError(`invalid named capture group: ${named[0]}`);
          groups.push(name);
          i += named[0].length;
        } else if (/^\(\?P?</.test(rest) && !rest.startsWith('(?<=') && !rest.startsWith('(?<!')) {
          throw new PatternError(`invalid named capture group: ${rest}`);
        } else {
          const flags = /^\(\?[imsU]*(-[imsU]+)?[:)]/.exec(rest);
          if (!flags || flags[0] === '(?)') throw new PatternError(`invalid or unsupported Perl syntax: ${rest.slice(0, rest.startsWith('(?<') ? 4 : 3)}`);
          i += flags[0].length;
          if (flags[0].endsWith(')')) {
            atom = false;
            continue;
          }
        }
      } else i++;
      depth++;
      atom = false;
      continue;
    }
    if (c === ')') {
      if (depth === 0) throw new PatternError(`unexpected ): ${s}`);
      depth--;
      i++;
      atom = true;
      continue;
    }
    if (c === '|') {
      i++;
      atom = false;
      continue;
    }
    i++;
    atom = c !== '^' && c !== '$';
  }
  if (depth > 0) throw new PatternError(`missing ): ${s}`);
  return groups;
}

const OPERATORS = new Set(['+', '#', '.', '/', ';', '?', '&']);
const VARSPEC = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*(?:\*|:[1-9][0-9]{0,3})?$/;

/** The variable names of an RFC 6570 URL template, or null when it is not one. */
export function urlTemplateVariables(t: string): string[] | null {
  const names: string[] = [];
  let i = 0;
  while (i < t.length) {
    const c = t[i]!;
    if (c === '}') return null;
    if (c !== '{') {
      i++;
      continue;
    }
    const close = t.indexOf('}', i + 1);
    if (close < 0) return null;
    let expr = t.slice(i + 1, close);
    if (expr.includes('{')) return null;
    if (expr && OPERATORS.has(expr[0]!)) expr = expr.slice(1);
    if (!expr) return null;
    for (const spec of expr.split(',')) {
      if (!VARSPEC.test(spec)) return null;
      const name = spec.replace(/(\*|:\d+)$/, '');
      if (!names.includes(name)) names.push(name);
    }
    i = close + 1;
  }
  return names;
}

/** Python's repr of a name in Zulip's messages ('id'). */
const repr = (s: string): string => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replaceAll("'", "\\'")}'`);

/**
 * Django's full_clean of a RealmFilter: field errors, then the model's
 * clean(), then uniqueness (`patternTaken` is asked only when the pattern
 * itself is valid). Returns null when valid.
 */
export async function linkifierErrors(pattern: string, urlTemplate: string, patternTaken: () => Promise<boolean>): Promise<LinkifierErrors | null> {
  const errors: LinkifierErrors = {};
  const add = (key: string, msg: string): void => {
    (errors[key] ??= []).push(msg);
  };
  if (!pattern) add('pattern', 'This field cannot be blank.');
  let templateVars: string[] | null = null;
  if (!urlTemplate) add('url_template', 'This field cannot be blank.');
  else {
    templateVars = urlTemplateVariables(urlTemplate);
    if (templateVars === null) add('url_template', 'Invalid URL template.');
  }
  // The model's clean(): one error at most.
  try {
    const groups = parseLinkifierPattern(pattern);
    if (urlTemplate && templateVars !== null) {
      const missingInPattern = templateVars.filter((v) => !groups.includes(v)).sort();
      const missingInUrl = groups.filter((g) => !templateVars!.includes(g)).sort();
      if (missingInPattern.length) add('__all__', `Group ${repr(missingInPattern[0]!)} in URL template is not present in linkifier pattern.`);
      else if (missingInUrl.length) add('__all__', `Group ${repr(missingInUrl[0]!)} in linkifier pattern is not present in URL template.`);
    }
  } catch (err) {
    if (!(err instanceof PatternError)) throw err;
    add('__all__', `Bad regular expression: ${err.message}`);
  }
  if (!errors.pattern && (await patternTaken())) add('__all__', 'Realm filter with this Realm and Pattern already exists.');
  return Object.keys(errors).length ? errors : null;
}

/** The first message, as Zulip's ValidationFailureError reports it. */
export function firstLinkifierError(errors: LinkifierErrors): string {
  for (const key of ['pattern', 'url_template', '__all__']) if (errors[key]?.length) return errors[key]![0]!;
  return Object.values(errors)[0]![0]!;
}

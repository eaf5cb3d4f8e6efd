// Serialisation helpers that reproduce the byte-level conventions of Zulip's
// Python-Markdown output (spec §1): attributes in lexical order, HTML5 void tags,
// and Python-Markdown's particular escaping rules.

/** Text nodes: "&" unless it already starts an entity, "<" and ">"; quotes stay literal. */
export function escapeText(s: string): string {
  if (!/[&<>]/.test(s)) return s;
  return s
    .replace(/&(?!(?:#[0-9]+|#x[0-9a-f]+|[0-9a-z]+);)/gi, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * Attribute values: every "&", "<", ">", '"', and newlines as &#10;. Inline placeholder
 * delimiters (STX/ETX) become U+FFFD so a placeholder can never be expanded into markup
 * inside an attribute.
 */
export function escapeAttr(s: string): string {
  if (!/[&<>"\n\u0002\u0003]/.test(s)) return s;
  return s
    .replace(/[\u0002\u0003]/g, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;');
}

/** Inline code content: Python-Markdown's code_escape (&, <, > only, always). */
export function escapeCode(s: string): string {
  if (!/[&<>]/.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Code block text as Pygments' HTML formatter writes it (quotes escaped too). */
export function escapePygments(s: string): string {
  if (!/[&<>"']/.test(s)) return s;
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export type Attrs = Record<string, string>;

/** An opening tag with attributes sorted by name, as ElementTree serialises them. */
export function openTag(tag: string, attrs?: Attrs): string {
  if (!attrs) return `<${tag}>`;
  const keys = Object.keys(attrs).sort();
  let out = `<${tag}`;
  for (const k of keys) out += ` ${k}="${escapeAttr(attrs[k]!)}"`;
  return out + '>';
}

/** A complete element whose (already serialised) inner HTML is given. */
export function element(tag: string, attrs: Attrs | undefined, innerHtml: string): string {
  return `${openTag(tag, attrs)}${innerHtml}</${tag}>`;
}

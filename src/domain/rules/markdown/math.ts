// TeX via KaTeX, called the way Zulip's katex service calls it: renderToString with
// default options and throwOnError, so errors become Zulip's tex-error markup.
import type Katex from 'katex';
import { lazyRequire } from '../../../lazy.js';

// KaTeX is loaded when a message first contains math.
const katex = lazyRequire<typeof Katex>('katex');
import { escapeText } from './html.js';

function renderTex(tex: string, displayMode: boolean): string | null {
  try {
    return katex().renderToString(tex, { displayMode, throwOnError: true });
  } catch {
    return null;
  }
}

/** Inline $$...$$: the KaTeX HTML, or `<span class="tex-error">$$src$$</span>`. */
export function renderInlineTex(body: string): string {
  const html = renderTex(body, false);
  return html ?? `<span class="tex-error">${escapeText('$$' + body + '$$')}</span>`;
}

/** A ```math block: each blank-line-separated chunk becomes its own display paragraph. */
export function renderDisplayMath(source: string): string[] {
  const chunks = source.split(/\n[ \t]*\n/).map((c) => c.trim()).filter((c) => c !== '');
  return chunks.map((chunk) => {
    const html = renderTex(chunk, true);
    return html === null
      ? `<p><span class="tex-error">${escapeText(chunk)}</span></p>`
      : `<p>${html}</p>`;
  });
}

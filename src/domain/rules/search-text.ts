import { stemmer } from 'stemmer';

/**
 * The words of a `search` narrow operand, as Zulip reads them
 * (zerver/lib/narrow.py, _by_search_tsearch): every word of the operand,
 * quoted or not, must match after English stemming (PostgreSQL's
 * plainto_tsquery with an english configuration), and each "quoted phrase"
 * must also appear verbatim, case-insensitively, in the content or the topic
 * (Zulip's `content ILIKE '%phrase%' OR subject ILIKE '%phrase%'`).
 *
 * Words are runs of letters and digits, which is how both PostgreSQL's default
 * parser (for ordinary words) and SQLite's unicode61 tokenizer split text.
 * English stop words are dropped, as the english configuration does; an
 * operand of stop words only matches nothing (PostgreSQL: "text-search query
 * contains only stop words", and `@@` of an empty query is false).
 */

/** PostgreSQL's english.stop (the Snowball English stop list), 127 words. */
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself ' +
    'it its itself they them their theirs themselves what which who whom this that these those am is are was were be ' +
    'been being have has had having do does did doing a an the and but if or because as until while of at by for with ' +
    'about against between into through during before after above below to from up down in out on off over under again ' +
    'further then once here there when where why how all any both each few more most other some such no nor not only ' +
    'own same so than too very s t can will just don should now'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;

export interface SearchQuery {
  /** The operand(s) as typed, for PostgreSQL's plainto_tsquery. */
  readonly text: string;
  /** Lower-cased words that must all match (stop words removed), for SQLite FTS5. */
  readonly words: readonly string[];
  /** Lower-cased quoted phrases that must appear as they are. */
  readonly phrases: readonly string[];
  /** Stems of the words, for highlighting. */
  readonly stems: ReadonlySet<string>;
}

export function parseSearch(operand: string): SearchQuery {
  const words: string[] = [];
  const phrases: string[] = [];
  for (const m of operand.matchAll(/"[^"]+"|\S+/g)) {
    const term = m[0];
    if (term.length > 1 && term.startsWith('"') && term.endsWith('"')) phrases.push(term.slice(1, -1).toLowerCase());
  }
  for (const m of operand.toLowerCase().matchAll(WORD)) {
    if (!STOP_WORDS.has(m[0]) && !words.includes(m[0])) words.push(m[0]);
  }
  return { text: operand, words, phrases, stems: new Set(words.map((w) => stemmer(w))) };
}

/** The FTS5 MATCH expression: each word a quoted string (implicit AND), stemmed by the table's tokenizer. */
export function fts5Match(words: readonly string[]): string {
  return words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' ');
}

const HL_START = '<span class="highlight">';
const HL_STOP = '</span>';

/**
 * Zulip's highlight_string over the positions PostgreSQL's ts_headline
 * reports: each whole word whose stem is a searched stem is wrapped in
 * <span class="highlight">, so searching `run` marks `running`. Only text
 * between tags is looked at (tags and their attributes are never split) and
 * character references (`&amp;`) are not words.
 */
export function highlightHtml(html: string, stems: ReadonlySet<string>): string {
  if (stems.size === 0) return html;
  let out = '';
  const seen = new Map<string, boolean>();
  const hit = (w: string): boolean => {
    const lower = w.toLowerCase();
    let v = seen.get(lower);
    if (v === undefined) seen.set(lower, (v = stems.has(stemmer(lower))));
    return v;
  };
  // Tags, character references, and the text runs between them.
  for (const m of html.matchAll(/<[^>]*>?|&#?[A-Za-z0-9]+;|[^<&]+|&/g)) {
    const part = m[0];
    if (part[0] === '<' || (part[0] === '&' && part.length > 1)) {
      out += part;
      continue;
    }
    out += part.replace(WORD, (w) => (hit(w) ? HL_START + w + HL_STOP : w));
  }
  return out;
}

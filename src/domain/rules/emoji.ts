// Unicode emoji names and codes as Zulip servers and clients know them.
//
// The table is generated (tools/generate-emoji-data.mjs) from emoji-datasource-google,
// the Unicode CLDR annotations and Zulip's override list, because no npm package carries
// Zulip's names. Reactions validate names/codes here and the Markdown renderer converts
// `:name:` and Unicode characters with the same data, so both always agree.
import data from './markdown/emoji-data.json' with { type: 'json' };

interface EmojiData {
  name_to_codepoint: Record<string, string>;
  codepoint_to_name: Record<string, string>;
  aliases: Record<string, string[]>;
  emoticon_conversions: Record<string, string>;
  sequences: string[];
}

const table = data as EmojiData;

interface Tables {
  readonly nameToCode: ReadonlyMap<string, string>;
  readonly codeToName: ReadonlyMap<string, string>;
  /** Recognisable emoji sequences keyed by their first code point, longest first. */
  readonly sequencesByFirst: ReadonlyMap<number, readonly (readonly number[])[]>;
}

// Built at first use rather than when the module loads: a server starts without any
// (P10: 2% of a cold start). Maps, since plain objects would also answer "constructor" or "__proto__".
let built: Tables | undefined;
function tables(): Tables {
  if (built) return built;
  // Sequences by first code point, longest first, so the text scanner can find the longest
  // sequence at a position without a giant regex.
  const sequencesByFirst = new Map<number, number[][]>();
  for (const hex of table.sequences) {
    const cps = hex.split('-').map((h) => parseInt(h, 16));
    const list = sequencesByFirst.get(cps[0]!) ?? [];
    list.push(cps);
    sequencesByFirst.set(cps[0]!, list);
  }
  for (const list of sequencesByFirst.values()) list.sort((a, b) => b.length - a.length);
  return (built = {
    nameToCode: new Map(Object.entries(table.name_to_codepoint)),
    codeToName: new Map(Object.entries(table.codepoint_to_name)),
    sequencesByFirst,
  });
}

/** The emoji code (lower-case hex, "-"-joined) for a Unicode emoji name or alias. */
export function emojiCodeForName(name: string): string | undefined {
  return tables().nameToCode.get(name);
}

/** The canonical name for a Unicode emoji code. */
export function emojiNameForCode(code: string): string | undefined {
  return tables().codeToName.get(code);
}

/** True when `code` is a Unicode emoji code that has a name (what reactions accept). */
export function isValidEmojiCode(code: string): boolean {
  return tables().codeToName.has(code);
}

/** Every name (canonical and aliases) of the emoji with this code. */
export function emojiNamesForCode(code: string): string[] {
  const canonical = tables().codeToName.get(code);
  if (canonical === undefined) return [];
  return [canonical, ...(table.aliases[code] ?? [])];
}

/** Emoticon -> ":name:" (for senders with translate_emoticons on). */
export const EMOTICON_CONVERSIONS: Readonly<Record<string, string>> = table.emoticon_conversions;

/** The whole name -> code map, e.g. for a server_emoji_data endpoint. */
export function emojiNameToCodepoint(): ReadonlyMap<string, string> {
  return tables().nameToCode;
}

/** The whole code -> canonical name map. */
export function emojiCodepointToName(): ReadonlyMap<string, string> {
  return tables().codeToName;
}

/** Hex code of an emoji string the way Zulip writes it: FE0F dropped, at least 4 digits. */
export function emojiStringToCode(emoji: string): string {
  const parts: string[] = [];
  for (const ch of emoji) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0xfe0f) continue;
    parts.push(cp.toString(16).padStart(4, '0'));
  }
  return parts.join('-');
}

/**
 * Finds the longest known emoji sequence starting at UTF-16 offset `pos` of `text`.
 * Returns the sequence length in UTF-16 units, or 0.
 */
export function matchEmojiSequence(text: string, pos: number): number {
  const first = text.codePointAt(pos)!;
  const candidates = tables().sequencesByFirst.get(first);
  if (!candidates) return 0;
  outer: for (const seq of candidates) {
    let at = pos;
    for (const cp of seq) {
      if (at >= text.length || text.codePointAt(at) !== cp) continue outer;
      at += cp > 0xffff ? 2 : 1;
    }
    return at - pos;
  }
  return 0;
}

/** True if some emoji sequence starts with this code point (a cheap pre-filter). */
export function mayStartEmoji(codePoint: number): boolean {
  return tables().sequencesByFirst.has(codePoint);
}

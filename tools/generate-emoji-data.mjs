#!/usr/bin/env node
// Builds src/domain/rules/markdown/emoji-data.json: the Unicode emoji name table that
// Zulip servers and clients agree on. No npm package ships that table, so we rebuild it
// the way the spec (shared/spec/zulip-markdown.md §13) describes:
//   1. the emoji list and code points come from emoji-datasource-google (iamcal data);
//   2. names come from Zulip's hand-picked overrides (the OVERRIDES table below, which
//      records facts: code point -> canonical name + aliases) and, for every other emoji,
//      from the Unicode CLDR English annotations (tts = canonical, default = aliases);
//   3. collisions are resolved so that every name maps to exactly one emoji.
// Run: node tools/generate-emoji-data.mjs   (needs the devDependencies installed)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const OUT = new URL('../src/domain/rules/markdown/emoji-data.json', import.meta.url);

// Zulip deliberately offers a single clock face (1f557 "time") and no bare skin-tone
// swatches; the rest are left out of the name table entirely.
const SKIPPED = new Set([
  '1f550', '1f551', '1f552', '1f553', '1f554', '1f555', '1f556', '1f558', '1f559',
  '1f55a', '1f55b', '1f55c', '1f55d', '1f55e', '1f55f', '1f560', '1f561', '1f562',
  '1f563', '1f564', '1f565', '1f566', '1f567',
  '1f3fb', '1f3fc', '1f3fd', '1f3fe', '1f3ff',
]);

// Emoticons that a sender with translate_emoticons on gets converted (spec §13).
const EMOTICONS = {
  ':)': ':smile:', '(:': ':smile:', ':(': ':frown:', '<3': ':heart:', ':|': ':neutral:',
  ':/': ':confused:', ';)': ':wink:', ':D': ':grinning:', ':o': ':open_mouth:',
  ':O': ':open_mouth:', ':p': ':stuck_out_tongue:', ':P': ':stuck_out_tongue:',
};

// Zulip's override names: src/domain/rules/markdown/emoji-overrides.txt, one emoji a line,
// "<code> <canonical> [alias,alias...]"; lines starting with "#" are comments.
const OVERRIDES_FILE = new URL('../src/domain/rules/markdown/emoji-overrides.txt', import.meta.url);

/** Names are lower-case words joined by "_"; punctuation that CLDR uses is dropped. */
function cleanName(raw) {
  let s = raw.trim();
  const map = { ' ': '_', '-': '_', '–': '_', '“': '', '”': '', ':': '', '.': '', ',': '',
    '(': '', ')': '', '&': 'and', '‘': '', '’': '', "'": '' };
  s = [...s].map((ch) => (ch in map ? map[ch] : ch)).join('');
  return s.replace(/_{2,}/g, '_').toLowerCase();
}

// Accented letters that occur in CLDR names; each such name also gets an ASCII alias so
// that people can type it.
const ASCII_FOLD = { 'è': 'e', 'ǐ': 'i', 'ó': 'o', 'ā': 'a', 'ō': 'o', 'ñ': 'n', 'ô': 'o',
  'ç': 'c', 'é': 'e', 'ã': 'a', 'í': 'i', 'å': 'a', 'ü': 'u' };
const foldAscii = (name) => [...name].map((ch) => ASCII_FOLD[ch] ?? ch).join('');
// Names written in CJK with no ASCII spelling; they already carry ASCII aliases.
const NO_ASCII_FORM = new Set(['ココ', 'サ', '指', '空']);

/** "1F937-200D-2640-FE0F" -> the emoji string. */
const hexToString = (hex) => String.fromCodePoint(...hex.split('-').map((h) => parseInt(h, 16)));
/** Zulip's code form: lower-case hex, FE0F removed. */
const toCode = (hex) => hex.toLowerCase().split('-').filter((h) => h !== 'fe0f').join('-');

function parseOverrides() {
  const out = new Map();
  for (const line of readFileSync(OVERRIDES_FILE, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [code, canonical, aliases = ''] = line.trim().split(/\s+/);
    out.set(code, { canonical, aliases: aliases ? aliases.split(',') : [], custom: true });
  }
  return out;
}

function main() {
  const emojiData = JSON.parse(readFileSync(require.resolve('emoji-datasource-google/emoji.json'), 'utf8'));
  const cldr = {
    ...JSON.parse(readFileSync(require.resolve('cldr-annotations-modern/annotations/en/annotations.json'), 'utf8'))
      .annotations.annotations,
    ...JSON.parse(readFileSync(require.resolve('cldr-annotations-derived-modern/annotationsDerived/en/annotations.json'), 'utf8'))
      .annotationsDerived.annotations,
  };
  const overrides = parseOverrides();
  const entries = new Map(); // code -> { canonical, aliases, custom }
  const canonicalNames = new Set();
  const sequences = new Set(); // every emoji string the text scanner should recognise
  let skipped = 0;

  for (const e of emojiData) {
    // The recognisable forms: the fully-qualified one always; a form without FE0F only
    // when it is several code points (a lone text-presentation character such as "❤"
    // must stay plain text). Skin-tone variants are recognised so that they are skipped
    // as a whole rather than half-converted.
    const forms = [e.unified, ...Object.values(e.skin_variations ?? {}).map((v) => v.unified)];
    if (e.non_qualified && e.non_qualified.includes('-')) forms.push(e.non_qualified);
    for (const f of forms) sequences.add(f.toLowerCase());

    const code = (e.non_qualified ?? e.unified).toLowerCase();
    if (SKIPPED.has(code)) continue;
    if (overrides.has(code)) {
      const o = overrides.get(code);
      const canonical = cleanName(o.canonical);
      if (canonicalNames.has(canonical)) { console.warn(`duplicate canonical ${canonical} (${code})`); continue; }
      canonicalNames.add(canonical);
      // Custom names are kept as written ("+1", "jack-o-lantern", "e-mail").
      entries.set(code, { canonical: o.canonical, aliases: [...o.aliases], custom: true });
      continue;
    }
    const ch = hexToString(e.unified).replace(/\uFE0F/g, '');
    const ann = cldr[ch];
    if (!ann || !ann.tts) { skipped++; continue; }
    const canonical = cleanName(ann.tts[0]);
    if (canonicalNames.has(canonical)) { console.warn(`duplicate canonical ${canonical} (${code})`); continue; }
    canonicalNames.add(canonical);
    entries.set(code, { canonical, aliases: (ann.default ?? []).map(cleanName), custom: false });
  }

  // An alias may not shadow a canonical name, and an alias claimed by several emoji is
  // dropped from all of them unless an override asked for it explicitly.
  const aliasOwners = new Map();
  for (const [code, e] of entries) {
    e.aliases = [...new Set(e.aliases)].filter((a) => a !== e.canonical && !canonicalNames.has(a));
    for (const a of e.aliases) aliasOwners.set(a, [...(aliasOwners.get(a) ?? []), code]);
  }
  for (const [alias, codes] of aliasOwners) {
    if (codes.length < 2) continue;
    for (const code of codes) {
      const e = entries.get(code);
      if (!e.custom) e.aliases = e.aliases.filter((a) => a !== alias);
    }
  }
  for (const [code, e] of entries) {
    for (const name of [e.canonical, ...e.aliases]) {
      if (/^[\x00-\x7f]*$/.test(name) || NO_ASCII_FORM.has(name)) continue;
      const ascii = foldAscii(name);
      for (const other of aliasOwners.get(ascii) ?? []) {
        const o = entries.get(other);
        o.aliases = o.aliases.filter((a) => a !== ascii);
      }
      if (!e.aliases.includes(ascii)) e.aliases.push(ascii);
    }
  }

  const nameToCodepoint = {};
  const codepointToName = {};
  const aliases = {};
  for (const [code, e] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    codepointToName[code] = e.canonical;
    nameToCodepoint[e.canonical] = code;
    for (const a of e.aliases) if (!(a in nameToCodepoint)) nameToCodepoint[a] = code;
    if (e.aliases.length) aliases[code] = e.aliases;
  }
  const data = {
    comment: 'Generated by tools/generate-emoji-data.mjs; do not edit by hand.',
    name_to_codepoint: nameToCodepoint,
    codepoint_to_name: codepointToName,
    aliases,
    emoticon_conversions: EMOTICONS,
    sequences: [...sequences].sort(),
  };
  writeFileSync(OUT, JSON.stringify(data) + '\n');
  console.log(`${Object.keys(codepointToName).length} emoji, ${Object.keys(nameToCodepoint).length} names, `
    + `${data.sequences.length} sequences, ${skipped} without CLDR names skipped`);
}

main();

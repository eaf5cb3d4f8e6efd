// Emoji: `:name:` syntax, emoticons and Unicode emoji characters (spec §13).
import { EMOTICON_CONVERSIONS, emojiCodeForName, emojiNameForCode, emojiStringToCode, matchEmojiSequence, mayStartEmoji } from '../emoji.js';
import { element, escapeText, openTag } from './html.js';
import { regexFinder, type InlineNode, type InlinePattern } from './inline-engine.js';

const ZULIP_EMOJI_URL = '/static/generated/emoji/images/emoji/unicode/zulip.png';

/** The span Zulip emits for a Unicode emoji; `syntax` is ":name:" as typed. */
export function unicodeEmojiNode(code: string, syntax: string): InlineNode {
  const title = syntax.slice(1, -1).replace(/_/g, ' ');
  const attrs = { 'aria-label': title, class: `emoji emoji-${code}`, role: 'img', title };
  return { kind: 'html', html: element('span', attrs, escapeText(syntax)) };
}

function imageEmojiNode(src: string, syntax: string): InlineNode {
  const attrs = { alt: syntax, class: 'emoji', src, title: syntax.slice(1, -1).replace(/_/g, ' ') };
  return { kind: 'html', html: openTag('img', attrs) };
}

/** :name: -> realm emoji, then :zulip:, then Unicode names; unknown names stay as typed. */
export const emojiByName: InlinePattern = {
  name: 'emoji',
  find: regexFinder(/:[\p{L}\p{N}_\-+]+:/gu, /:/),
  handle: (m, _data, run) => {
    const syntax = m.groups[0]!;
    const name = syntax.slice(1, -1);
    const custom = run.state.ctx.customEmoji.byName(name);
    if (custom) return { node: imageEmojiNode(custom.sourceUrl, syntax) };
    if (name === 'zulip') return { node: imageEmojiNode(ZULIP_EMOJI_URL, syntax) };
    const code = emojiCodeForName(name);
    // Unknown names become inert text, exactly like Zulip (":foo:cat:" keeps ":foo:").
    return { node: code ? unicodeEmojiNode(code, syntax) : { kind: 'text', text: syntax } };
  },
};

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Emoticons convert only between these "terminal" characters (or the text's ends).
const TERMINAL = `,.;?!()\\[\\] "'\\n\\t`;
const EMOTICON_RE = new RegExp(
  `(?<![^${TERMINAL}])(${Object.keys(EMOTICON_CONVERSIONS).map(escapeRe).join('|')})(?![^${TERMINAL}])`,
  'g',
);

/** :) and friends, for senders who turned translate_emoticons on. */
export const emoticons: InlinePattern = {
  name: 'translate_emoticons',
  find: regexFinder(EMOTICON_RE, /[:;(<]/),
  handle: (m, _data, run) => {
    if (!run.state.ctx.sender?.translateEmoticons) return null;
    const syntax = EMOTICON_CONVERSIONS[m.groups[1]!]!;
    const code = emojiCodeForName(syntax.slice(1, -1));
    return code ? { node: unicodeEmojiNode(code, syntax) } : null;
  },
};

// Cheap filter: every emoji sequence starts with a non-ASCII character or with one of
// "#*0-9" followed by a variation selector / keycap.
const MAYBE_EMOJI = /[^\x00-\x7f]/;

/** Unicode emoji characters -> the same span as their canonical :name:. */
export const unicodeEmoji: InlinePattern = {
  name: 'unicodeemoji',
  find: (text, from) => {
    if (!MAYBE_EMOJI.test(text)) return null;
    for (let i = from; i < text.length; i++) {
      const cp = text.codePointAt(i)!;
      if (mayStartEmoji(cp)) {
        const len = matchEmojiSequence(text, i);
        if (len > 0) {
          const s = text.slice(i, i + len);
          return { index: i, end: i + len, groups: [s], named: {} };
        }
      }
      if (cp > 0xffff) i++;
    }
    return null;
  },
  handle: (m) => {
    const code = emojiStringToCode(m.groups[0]!);
    const name = emojiNameForCode(code);
    // Sequences without a Zulip name (skin tones, newer ZWJ combos) stay raw.
    return name ? { node: unicodeEmojiNode(code, `:${name}:`) } : null;
  },
};

// Zulip-flavoured Markdown -> the HTML Zulip's server stores (spec: shared/spec/
// zulip-markdown.md). Pure and synchronous: the caller preloads realm data into a
// MarkdownContext. Entry points: renderMarkdown, renderMarkdownSafe,
// normalizeMessageContent, topicLinks, emptyMarkdownContext.
import { createBlockParser, preprocessSource } from './block.js';
import type { InlinePattern } from './inline-engine.js';
import { emojiByName, emoticons, unicodeEmoji } from './inline-emoji.js';
import { autolink, backtick, emphasis, entity, link, newline, strikethrough, strong, strongEm, tex } from './inline-format.js';
import { channelLink, globalTime, groupMention, messageLink, topicLink, userMention } from './inline-refs.js';
import { linkifierPatterns } from './linkifiers.js';
import { applyPreviews } from './previews.js';
import { BlockRenderer } from './render.js';
import type { MarkdownContext, RenderResult, RenderState } from './types.js';

export type * from './types.js';
export { topicLinks, expandUrlTemplate } from './linkifiers.js';
export { encodeHashComponent, channelSlug, sanitizeUrl } from './links.js';

/** Zulip's MAX_MESSAGE_LENGTH. */
export const MAX_MESSAGE_LENGTH = 10000;
const TRUNCATION_NOTICE = '\n[message truncated]';
/** What clients show when a stored message has no rendering. */
export const RENDER_FAILED_HTML = '<p>[Zulip note: Sorry, we could not understand the formatting of your message]</p>';
/** The send/edit error Zulip returns when rendering throws (HTTP 400, BAD_REQUEST). */
export const RENDER_FAILED_MESSAGE = 'Unable to render message';

// The realm's default code language reaches the shared parser through this slot; it is
// set for the duration of one synchronous render.
let currentDefaultLanguage: string | null | undefined;
const md = createBlockParser(() => currentDefaultLanguage);

// Priority order of Zulip's inline patterns; realm linkifiers go after autolinks.
const BEFORE_LINKIFIERS: InlinePattern[] = [
  backtick, strongEm, userMention, tex, messageLink, topicLink, channelLink, globalTime, groupMention, link, autolink,
];
const AFTER_LINKIFIERS: InlinePattern[] = [entity, strong, emphasis, strikethrough, emojiByName, emoticons, newline, unicodeEmoji];

export type NormalizeResult = { ok: true; content: string } | { ok: false; error: string };

/**
 * Zulip's normalize_body: trailing whitespace and leading blank lines removed; empty
 * and NUL-containing bodies refused (with Zulip's messages); bodies over 10000
 * characters (code points) cut and ended with "\n[message truncated]".
 */
export function normalizeMessageContent(raw: string, maxLength = MAX_MESSAGE_LENGTH): NormalizeResult {
  const body = raw.trimEnd().replace(/^\n+/, '');
  if (body.length === 0) return { ok: false, error: 'Message must not be empty' };
  if (body.includes('\u0000')) return { ok: false, error: 'Message must not contain null bytes' };
  if (body.length <= maxLength) return { ok: true, content: body };
  const chars = Array.from(body);
  if (chars.length <= maxLength) return { ok: true, content: body };
  return { ok: true, content: chars.slice(0, maxLength - TRUNCATION_NOTICE.length).join('') + TRUNCATION_NOTICE };
}

/** A context with no users, groups, channels, custom emoji or linkifiers. */
export function emptyMarkdownContext(realmUrl: string): MarkdownContext {
  return {
    realmUrl,
    users: { byId: () => undefined, byName: () => [] },
    groups: { byName: () => undefined },
    channels: { byName: () => undefined, byId: () => undefined },
    customEmoji: { byName: () => undefined },
    linkifiers: [],
  };
}

/** Zulip's /me rule: "/me " prefix, one line, and a single paragraph of output. */
function isMeMessage(content: string, html: string): boolean {
  return content.startsWith('/me ') && !content.includes('\n') && html.startsWith('<p>') && html.endsWith('</p>')
    && html.indexOf('<p>', 1) === -1;
}

/** Renders message (or description) Markdown. Throws only on internal errors. */
export function renderMarkdown(content: string, ctx: MarkdownContext): RenderResult {
  const result: RenderResult = {
    html: '', mentionedUserIds: new Set(), mentionedGroupIds: new Set(),
    streamWildcardMentioned: false, topicWildcardMentioned: false, links: [], isMeMessage: false,
  };
  // SOH/STX/ETX delimit our placeholders; they have no business in a message.
  const source = preprocessSource(content.replace(/[\u0001-\u0003]/g, '\uFFFD'));
  if (source.trim() === '') return result;
  const state: RenderState = { ctx, result, linkSet: new Set(), quoteDepth: 0, previewLinks: null };
  const patterns = ctx.linkifiers.length
    ? [...BEFORE_LINKIFIERS, ...linkifierPatterns(ctx.linkifiers), ...AFTER_LINKIFIERS]
    : [...BEFORE_LINKIFIERS, ...AFTER_LINKIFIERS];
  currentDefaultLanguage = ctx.defaultCodeBlockLanguage;
  try {
    const tokens = md.parse(source, { listDepth: 0 });
    const renderer = new BlockRenderer(state, patterns);
    result.html = renderer.renderDocument(tokens);
    if (renderer.previewBlocks.length) result.html = applyPreviews(result.html, renderer.previewBlocks, ctx);
  } finally {
    currentDefaultLanguage = undefined;
  }
  if (result.html.length > MAX_MESSAGE_LENGTH * 100) throw new Error('Rendered message is too long');
  result.isMeMessage = isMeMessage(content, result.html);
  return result;
}

export type RenderOutcome = RenderResult & { ok: boolean; error?: string };

/**
 * renderMarkdown that never throws. On failure it logs (letters of the content replaced
 * by "x", as Zulip does, so logs do not leak message text) and returns Zulip's
 * fallback HTML with ok=false; the send path may instead refuse the message with
 * RENDER_FAILED_MESSAGE, which is what Zulip does.
 */
export function renderMarkdownSafe(
  content: string,
  ctx: MarkdownContext,
  log: (message: string, details: { error: unknown; redactedContent: string }) => void = () => {},
): RenderOutcome {
  try {
    return { ...renderMarkdown(content, ctx), ok: true };
  } catch (error) {
    log('Markdown rendering failed', { error, redactedContent: content.replace(/\p{L}/gu, 'x') });
    return {
      ok: false, error: RENDER_FAILED_MESSAGE, html: RENDER_FAILED_HTML,
      mentionedUserIds: new Set(), mentionedGroupIds: new Set(),
      streamWildcardMentioned: false, topicWildcardMentioned: false, links: [], isMeMessage: false,
    };
  }
}

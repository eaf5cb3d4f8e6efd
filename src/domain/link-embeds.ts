import type { AppCtx } from './context.js';
import { transact } from './context.js';
import { doRenderingOnlyUpdate } from './actions/attachments.js';
import { classifyPreview } from './rules/markdown/previews.js';
import { element } from './rules/markdown/html.js';
import { safeFetchPage, type SafeFetchLimits } from '../net/safe-fetch.js';

/**
 * Link previews that fetch the linked page (Zulip's message_embed, made by
 * its embed_links worker after the message is sent, never in the first
 * render). Off unless the server allows it (PARLEY_LINK_PREVIEWS) AND the
 * organization's inline_url_embed_preview is on. Pages are fetched with
 * safeFetchPage (public addresses only, time- and size-limited); the embed
 * arrives as a rendering_only update_message.
 */
export interface PageData {
  readonly title?: string;
  readonly description?: string;
  readonly image?: string;
}

const decodeEntities = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|#39|apos);/gi, (m, e: string) => {
    const k = e.toLowerCase();
    if (k.startsWith('#x')) return String.fromCodePoint(parseInt(k.slice(2), 16));
    if (k.startsWith('#')) return String.fromCodePoint(Number(k.slice(1)));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[k] ?? m;
  });

function metaContent(html: string, prop: string): string | undefined {
  const tags = html.match(/<meta\b[^>]*>/gi) ?? [];
  for (const tag of tags) {
    const name = /\b(?:property|name)\s*=\s*["']([^"']+)["']/i.exec(tag)?.[1];
    if (name?.toLowerCase() !== prop) continue;
    const content = /\bcontent\s*=\s*"([^"]*)"|\bcontent\s*=\s*'([^']*)'/i.exec(tag);
    const v = content?.[1] ?? content?.[2];
    if (v) return decodeEntities(v).trim();
  }
  return undefined;
}

/** Open Graph data of a page (falling back to <title> and the description meta), as Zulip's link_preview reads it. */
export function parsePageData(html: string, base: string): PageData {
  const head = html.slice(0, 200_000);
  const title = metaContent(head, 'og:title') ?? (/<title[^>]*>([^<]*)<\/title>/i.exec(head)?.[1] ? decodeEntities(/<title[^>]*>([^<]*)<\/title>/i.exec(head)![1]!).trim() : undefined);
  const description = metaContent(head, 'og:description') ?? metaContent(head, 'description');
  let image = metaContent(head, 'og:image');
  if (image) {
    try {
      const u = new URL(image, base);
      image = u.protocol === 'https:' || u.protocol === 'http:' ? u.href : undefined;
    } catch {
      image = undefined;
    }
  }
  return { title: title || undefined, description: description || undefined, image };
}

/** Zulip's message_embed block for one link. */
export function embedHtml(url: string, d: PageData): string {
  let out = '';
  if (d.image) out += element('a', { class: 'message_embed_image', href: url, style: `background-image: url("${d.image.replace(/["\\()]/g, (c) => encodeURIComponent(c))}")` }, '');
  let data = '';
  if (d.title) data += element('div', { class: 'message_embed_title' }, element('a', { href: url, title: d.title }, escapeText(d.title)));
  if (d.description) data += element('div', { class: 'message_embed_description' }, escapeText(d.description));
  out += element('div', { class: 'data-container' }, data);
  return element('div', { class: 'message_embed' }, out);
}

const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The link of a message that may get an embed: the first http(s) link that is not an inline image/video/YouTube. */
export function embeddableLink(links: readonly string[]): string | undefined {
  return links.find((l) => /^https?:\/\//i.test(l) && !classifyPreview(l));
}

export async function embedLinkPreview(app: AppCtx, messageId: number, url: string, limits?: Partial<SafeFetchLimits>): Promise<void> {
  const page = await safeFetchPage(url, { timeoutMs: app.config.linkPreviewTimeoutMs, maxBytes: app.config.linkPreviewMaxBytes, ...limits });
  if (!/^text\/html|application\/xhtml/i.test(page.contentType)) return;
  const data = parsePageData(page.body, page.url);
  if (!data.title && !data.description) return;
  const block = embedHtml(url, data);
  await transact(app, (tx) => doRenderingOnlyUpdate(tx, [messageId], (html) => (html.includes('class="message_embed"') ? html : `${html}\n${block}`)));
}

// Inline previews of images, videos and YouTube links (spec §10). Zulip adds them after
// inline rendering, only when the realm's inline_image_preview is on, never for links
// inside quotes, each URL once, and not at all when a message has more than 24
// previewable URLs. Nothing is fetched. Open Graph embeds come later from a worker in
// Zulip and are not produced here.
import { element, openTag } from './html.js';
import type { MarkdownContext, UploadedImage } from './types.js';

export interface PreviewCandidate {
  href: string;
  /** The label of a [label](url) link; undefined for bare URLs. */
  label?: string;
}

/** One paragraph (or tight list item) whose links may get previews. */
export interface PreviewBlock {
  html: string;
  /** The block's source was nothing but one bare URL: drop it when that URL previews. */
  bareUrlOnly: boolean;
  candidates: PreviewCandidate[];
  /** "p": the divs follow the paragraph; "li": they are appended inside the list item. */
  kind: 'p' | 'li';
}

const MAX_PREVIEWS = 24;
const IMAGE_EXT = /\.(?:bmp|gif|jpe|jpeg|jpg|png|webp)$/;
const VIDEO_EXT = /\.(?:mp4|webm)$/;
const YOUTUBE = /^(?:https?:\/\/)?(?:www\.|m\.)?(?:youtu\.be\/|youtube(?:-nocookie)?\.com\/(?:watch\?(?:.*&)?v=|embed\/|shorts\/|v\/))([0-9A-Za-z_-]{11})/;

type Kind = { kind: 'image' } | { kind: 'video' } | { kind: 'youtube'; id: string };

function pathOf(href: string): string {
  const noQuery = href.replace(/[?#].*$/s, '');
  return noQuery.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').toLowerCase();
}

export function classifyPreview(href: string): Kind | null {
  const yt = YOUTUBE.exec(href);
  if (yt) return { kind: 'youtube', id: yt[1]! };
  if (!/^(https?:\/\/|\/|user_uploads\/)/i.test(href)) return null;
  const path = pathOf(href);
  if (IMAGE_EXT.test(path)) return { kind: 'image' };
  if (VIDEO_EXT.test(path)) return { kind: 'video' };
  return null;
}

/** Same-realm, relative and /static/ URLs are never proxied. */
function mediaSrc(url: string, ctx: MarkdownContext): string {
  const local = !/^https?:\/\//i.test(url) || url.startsWith(ctx.realmUrl + '/');
  return local || !ctx.imageProxyUrl ? url : ctx.imageProxyUrl(url);
}

/** The path id of a link to one of this realm's uploads, or null. */
export function uploadPathIdOf(href: string, realmUrl: string): string | null {
  let h = href.startsWith(realmUrl + '/') ? href.slice(realmUrl.length) : href;
  h = h.replace(/^\//, '').replace(/[?#].*$/s, '');
  if (!h.startsWith('user_uploads/')) return null;
  try {
    const id = decodeURIComponent(h.slice('user_uploads/'.length));
    return id.split('/').length === 4 ? id : null;
  } catch {
    return null;
  }
}

/**
 * An uploaded image (spec §10, Zulip's thumbnail rendering): the thumbnail
 * once made, a loading placeholder while it is pending, nothing at all for an
 * upload we refused to thumbnail (e.g. a decompression bomb) or that is not
 * an image. undefined: not one of our uploads; render as any image URL.
 */
function uploadedImageTag(href: string, ctx: MarkdownContext): string | null | undefined {
  if (!ctx.uploadedImage) return undefined;
  const pathId = uploadPathIdOf(href, ctx.realmUrl);
  if (!pathId) return undefined;
  const img = ctx.uploadedImage(pathId);
  if (!img) return undefined;
  if (img.state === 'none') return null;
  if (img.state === 'pending') {
    return openTag('img', { class: 'image-loading-placeholder', 'data-original-dimensions': `${img.width}x${img.height}`, src: PLACEHOLDER_SRC });
  }
  return openTag('img', thumbnailAttrs(pathId, img));
}

export const PLACEHOLDER_SRC = '/static/images/loading/loader-black.svg';
export const THUMBNAIL_NAME = '840x560.webp';

export function thumbnailAttrs(pathId: string, img: Pick<UploadedImage, 'contentType' | 'width' | 'height' | 'frames'>): Record<string, string> {
  const parts = pathId.split('/');
  const name = encodeURIComponent(parts.pop()!);
  const attrs: Record<string, string> = {
    'data-original-content-type': img.contentType,
    'data-original-dimensions': `${img.width}x${img.height}`,
    src: `/user_uploads/thumbnail/${parts.join('/')}/${name}/${THUMBNAIL_NAME}`,
  };
  if (img.frames > 1) attrs['data-animated'] = 'true';
  return attrs;
}

function previewDiv(c: PreviewCandidate, kind: Kind, ctx: MarkdownContext): string {
  const aAttrs: Record<string, string> = { href: c.href };
  if (c.label !== undefined) aAttrs['title'] = c.label;
  if (kind.kind === 'image') {
    const uploaded = uploadedImageTag(c.href, ctx);
    if (uploaded === null) return '';
    if (uploaded !== undefined) return element('div', { class: 'message_inline_image' }, element('a', aAttrs, uploaded));
  }
  if (kind.kind === 'youtube') {
    const img = openTag('img', { src: mediaSrc(`https://i.ytimg.com/vi/${kind.id}/default.jpg`, ctx) });
    return element('div', { class: 'youtube-video message_inline_image' }, element('a', { ...aAttrs, 'data-id': kind.id }, img));
  }
  if (kind.kind === 'video') {
    const src = mediaSrc(c.href, ctx);
    const vAttrs: Record<string, string> = { preload: 'metadata', src };
    if (src !== c.href) vAttrs['data-video-original-url'] = c.href;
    return element('div', { class: 'message_inline_image message_inline_video' }, element('a', aAttrs, element('video', vAttrs, '')));
  }
  return element('div', { class: 'message_inline_image' }, element('a', aAttrs, openTag('img', { src: mediaSrc(c.href, ctx) })));
}

/** Block HTML after previews are added: "\u0001<n>\u0001" markers are replaced. */
export function applyPreviews(html: string, blocks: PreviewBlock[], ctx: MarkdownContext): string {
  const distinct = new Set<string>();
  for (const b of blocks) for (const c of b.candidates) if (classifyPreview(c.href)) distinct.add(c.href);
  const enabled = distinct.size > 0 && distinct.size <= MAX_PREVIEWS;
  const used = new Set<string>();
  return html.replace(/\u0001(\d+)\u0001/g, (_m, id: string) => {
    const b = blocks[Number(id)]!;
    if (!enabled) return b.html;
    let divs = '';
    let previewedBare = false;
    for (const c of b.candidates) {
      const kind = classifyPreview(c.href);
      if (!kind || used.has(c.href)) continue;
      used.add(c.href);
      divs += previewDiv(c, kind, ctx);
      if (kind.kind !== 'youtube') previewedBare = true;
    }
    if (!divs) return b.html;
    if (b.kind === 'li') return b.html + divs;
    if (b.bareUrlOnly && previewedBare) return divs;
    return `${b.html}\n${divs}`;
  });
}

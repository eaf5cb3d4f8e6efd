import type { Readable } from 'node:stream';
import { thumbnailKey } from './storage.js';

/**
 * Thumbnails as Zulip makes them (zerver/lib/thumbnail.py): WebP, at most
 * 840x560, never enlarged; an animated variant only for animated sources.
 * Clients learn the formats from /register's server_thumbnail_formats and
 * fetch /user_uploads/thumbnail/<path_id>/<format name>.
 *
 * Decompression bombs: sharp's limitInputPixels refuses to decode anything
 * over IMAGE_BOMB_TOTAL_PIXELS (Zulip's limit, frames counted), and we
 * check the header's dimensions before decoding at all; such an upload is
 * stored as a plain file and never thumbnailed or previewed.
 */
export interface ThumbnailFormat {
  readonly name: string;
  readonly max_width: number;
  readonly max_height: number;
  readonly format: 'webp';
  readonly animated: boolean;
}

export const SERVER_THUMBNAIL_FORMATS: readonly ThumbnailFormat[] = [
  { name: '840x560-anim.webp', max_width: 840, max_height: 560, format: 'webp', animated: true },
  { name: '840x560.webp', max_width: 840, max_height: 560, format: 'webp', animated: false },
];
export const STILL_FORMAT = SERVER_THUMBNAIL_FORMATS[1]!;
export const ANIMATED_FORMAT = SERVER_THUMBNAIL_FORMATS[0]!;

export const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
/** Longest side we decode at all, whatever the pixel count. */
const MAX_SIDE = 50_000;

export const thumbnailKeysOf = (pathId: string): string[] => SERVER_THUMBNAIL_FORMATS.map((f) => thumbnailKey(pathId, f.name));

type Sharp = typeof import('sharp');
let sharpMod: Promise<Sharp> | undefined;
// sharp (libvips) is loaded on the first image, not at start.
const loadSharp = (): Promise<Sharp> => (sharpMod ??= import('sharp').then((m) => ((m as { default?: Sharp }).default ?? m) as Sharp));

export interface ImageFacts {
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  /** false: too many pixels (or undecodable dimensions) to thumbnail safely. */
  readonly thumbnail: boolean;
}

/** Dimensions from the image header only (no pixel decoding), or null when sharp cannot read it as an image. */
export async function probeImage(file: string): Promise<ImageFacts | null> {
  const sharp = await loadSharp();
  try {
    const meta = await sharp(file, { limitInputPixels: false, animated: true }).metadata();
    if (!meta.width || !meta.height) return null;
    const frames = meta.pages ?? 1;
    const height = meta.pageHeight ?? meta.height;
    const safe = meta.width <= MAX_SIDE && height <= MAX_SIDE && meta.width * height * frames <= IMAGE_BOMB_TOTAL_PIXELS;
    return { width: meta.width, height, frames, thumbnail: safe };
  } catch {
    return null;
  }
}

/** The WebP thumbnails of an image read from a stream (small, so returned as buffers). */
export async function makeThumbnails(source: () => Promise<Readable>, facts: ImageFacts): Promise<Map<string, Buffer>> {
  const sharp = await loadSharp();
  const out = new Map<string, Buffer>();
  const formats = facts.frames > 1 ? [ANIMATED_FORMAT, STILL_FORMAT] : [STILL_FORMAT];
  for (const f of formats) {
    const pipeline = sharp({ limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS, animated: f.animated, failOn: 'error' })
      .rotate()
      .resize(f.max_width, f.max_height, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 });
    const input = await source();
    input.pipe(pipeline);
    out.set(f.name, await pipeline.toBuffer());
  }
  return out;
}

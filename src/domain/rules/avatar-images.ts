import type Sharp from 'sharp';
import { lazyRequire } from '../../lazy.js';

// sharp (libvips) is loaded on the first upload, not at start.
const loadSharp = lazyRequire<typeof Sharp>('sharp');
import { JsonableError } from '../errors.js';

/**
 * Avatar image checks and resizing (Zulip's zerver/lib/thumbnail.py). Uploads
 * are judged by their bytes: the file name and the client's content type are
 * never trusted. Only raster formats are decoded; everything else is refused
 * before any decoder sees it.
 */
export const DEFAULT_AVATAR_SIZE = 100;
export const MEDIUM_AVATAR_SIZE = 500;
export const MAX_AVATAR_FILE_SIZE_MIB = 5;
/** Zulip refuses images with more pixels than this (decompression bombs). */
export const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;

const badImage = (msg: string): JsonableError => new JsonableError(msg, { code: 'BAD_IMAGE' });
export const COULD_NOT_DECODE = 'Could not decode image; did you upload an image file?';

type Sniffed = 'png' | 'jpeg' | 'gif' | 'webp' | 'tiff' | 'heif' | 'other-image' | 'unknown';

/** The format by magic bytes. */
export function sniffImageFormat(b: Buffer): Sniffed {
  const starts = (sig: number[], at = 0) => b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
  const ascii = (s: string, at = 0) => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (starts([0xff, 0xd8, 0xff])) return 'jpeg';
  if (ascii('GIF87a') || ascii('GIF89a')) return 'gif';
  if (ascii('RIFF') && ascii('WEBP', 8)) return 'webp';
  if (starts([0x49, 0x49, 0x2a, 0x00]) || starts([0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (ascii('ftyp', 4) && ['avif', 'avis', 'heic', 'heix', 'mif1', 'msf1', 'heim', 'heis'].includes(b.toString('latin1', 8, 12))) return 'heif';
  // Recognisable images we do not take as avatars: SVG/XML, BMP, ICO, PDF, JPEG 2000, JPEG XL.
  const head = b.subarray(0, 256).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<') || ascii('BM') || starts([0, 0, 1, 0]) || ascii('%PDF') || starts([0xff, 0x0a]) || ascii('\u0000\u0000\u0000\u000cJXL ')) {
    return 'other-image';
  }
  return 'unknown';
}

export interface AvatarImages {
  readonly default: Buffer;
  readonly medium: Buffer;
}

/**
 * Validates an upload by content and returns the 100px and 500px square PNGs
 * (centre crop, EXIF orientation applied, first frame of animations).
 * Throws BAD_IMAGE with Zulip's messages.
 */
export async function makeAvatarImages(data: Buffer): Promise<AvatarImages> {
  const kind = sniffImageFormat(data);
  if (kind === 'other-image') throw badImage('Invalid image format');
  if (kind === 'unknown') throw badImage(COULD_NOT_DECODE);
  let meta: Sharp.Metadata;
  try {
    meta = await loadSharp()(data, { limitInputPixels: false }).metadata();
  } catch {
    throw badImage(COULD_NOT_DECODE);
  }
  if (!meta.width || !meta.height) throw badImage(COULD_NOT_DECODE);
  if (meta.width * meta.height > IMAGE_BOMB_TOTAL_PIXELS) throw badImage('Image size exceeds limit.');
  const resize = (size: number) =>
    loadSharp()(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS, failOn: 'error' })
      .rotate()
      .resize(size, size, { fit: 'cover', position: 'centre' })
      .png()
      .toBuffer();
  try {
    const [small, medium] = await Promise.all([resize(DEFAULT_AVATAR_SIZE), resize(MEDIUM_AVATAR_SIZE)]);
    return { default: small, medium };
  } catch {
    throw badImage('Image is corrupted or truncated');
  }
}

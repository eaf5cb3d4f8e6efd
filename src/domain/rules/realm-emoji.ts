import type Sharp from 'sharp';
import { lazyRequire } from '../../lazy.js';

// sharp (libvips) is loaded on the first upload, not at start.
const loadSharp = lazyRequire<typeof Sharp>('sharp');
import { badRequest, JsonableError } from '../errors.js';
import { COULD_NOT_DECODE, IMAGE_BOMB_TOTAL_PIXELS, sniffImageFormat } from './avatar-images.js';

/**
 * Custom emoji rules (Zulip's zerver/lib/emoji.py check_valid_emoji_name and
 * zerver/lib/thumbnail.py resize_emoji). Images are judged by their bytes,
 * never by the file name or the client's content type.
 */

export const MAX_EMOJI_FILE_SIZE_MIB = 5;
/** Custom emoji are stored as 64x64 squares (centre crop), animations kept. */
export const DEFAULT_EMOJI_SIZE = 64;

/** Zulip's upload_emoji: the path name is stripped and spaces become underscores. */
export const normalizeEmojiName = (raw: string): string => raw.trim().replaceAll(' ', '_');

/** Zulip's check_valid_emoji_name. */
export function checkValidEmojiName(name: string): void {
  if (!name) throw badRequest('Emoji name is missing');
  if (/^[0-9a-z\-_]+$/.test(name)) {
    if (/[\-_]$/.test(name)) throw badRequest('Emoji names must end with either a letter or digit.');
    return;
  }
  throw badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
}

export interface EmojiImages {
  /** File extension of the stored image (same format as the upload, AVIF/HEIF stored as PNG). */
  readonly ext: 'png' | 'gif' | 'webp' | 'jpg';
  readonly data: Buffer;
  /** First frame as PNG, for animated emoji. */
  readonly still: Buffer | null;
}

const badImage = (msg: string): JsonableError => new JsonableError(msg, { code: 'BAD_IMAGE' });

/**
 * Validates an uploaded emoji image and returns what is stored: PNG, JPEG,
 * GIF and WebP (animated or not) and AVIF are accepted, as in Zulip's list
 * of thumbnailable inline image types; anything else is "Invalid image
 * format", and bytes that are no image at all cannot be decoded.
 */
export async function makeEmojiImages(data: Buffer): Promise<EmojiImages> {
  const kind = sniffImageFormat(data);
  if (kind === 'other-image' || kind === 'tiff') throw badImage('Invalid image format');
  if (kind === 'unknown') throw badImage(COULD_NOT_DECODE);
  let meta: Sharp.Metadata;
  try {
    meta = await loadSharp()(data, { limitInputPixels: false, animated: true }).metadata();
  } catch {
    throw badImage(COULD_NOT_DECODE);
  }
  const frameHeight = meta.pageHeight ?? meta.height;
  if (!meta.width || !frameHeight) throw badImage(COULD_NOT_DECODE);
  if (meta.width * (meta.height ?? frameHeight) > IMAGE_BOMB_TOTAL_PIXELS) throw badImage('Image size exceeds limit.');
  const animated = (meta.pages ?? 1) > 1 && (kind === 'gif' || kind === 'webp');
  const resize = (img: Sharp.Sharp): Sharp.Sharp =>
    img.resize(DEFAULT_EMOJI_SIZE, DEFAULT_EMOJI_SIZE, { fit: 'cover', position: 'centre' });
  const open = (all: boolean): Sharp.Sharp =>
    loadSharp()(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS, failOn: 'error', animated: all }).rotate();
  try {
    if (animated) {
      const moving = resize(open(true));
      const out = kind === 'gif' ? await moving.gif().toBuffer() : await moving.webp().toBuffer();
      const still = await resize(open(false)).png().toBuffer();
      return { ext: kind === 'gif' ? 'gif' : 'webp', data: out, still };
    }
    const img = resize(open(false));
    switch (kind) {
      case 'jpeg':
        return { ext: 'jpg', data: await img.jpeg().toBuffer(), still: null };
      case 'gif':
        return { ext: 'gif', data: await img.gif().toBuffer(), still: null };
      case 'webp':
        return { ext: 'webp', data: await img.webp().toBuffer(), still: null };
      default:
        return { ext: 'png', data: await img.png().toBuffer(), still: null };
    }
  } catch {
    throw badImage('Image is corrupted or truncated');
  }
}

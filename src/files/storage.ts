import type { Readable } from 'node:stream';

/**
 * Where uploaded files and their thumbnails live: one interface, two back
 * ends (local disk by default, an S3-compatible object store when
 * PARLEY_S3_BUCKET is set, so that several server processes share files).
 * Keys are upload path ids ("<realm>/<xx>/<token>/<name>") or thumbnail keys
 * ("thumbnail/<path id>/<format name>") or organization exports
 * ("exports/<realm>/<xx>/<token>/<name>.tar.gz"); callers only pass keys built from
 * rows of our attachments table, and both back ends check them again.
 * Data moves as streams: memory does not grow with the size of a file.
 */
export interface StoredFile {
  readonly stream: Readable;
  /** The whole file's size (a ranged read streams only its range). */
  readonly size: number;
}

export interface ByteRange {
  readonly start: number;
  /** Inclusive. */
  readonly end: number;
}

export interface FileStorage {
  readonly kind: 'local' | 's3';
  /** Writes a file from a stream; returns once it is durable. */
  put(key: string, body: Readable, size: number, contentType: string): Promise<void>;
  /** Opens a file (or the inclusive byte range of it) for reading, or null when there is none. */
  open(key: string, range?: ByteRange): Promise<StoredFile | null>;
  /** Removes files; missing ones are not an error (deletes are idempotent). */
  remove(keys: readonly string[]): Promise<void>;
  close?(): Promise<void>;
}

const KEY = /^(thumbnail\/|exports\/)?\d{1,15}\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{1,64}\/[^/\\\0]+(\/[0-9a-z.-]{1,40})?$/;

/** A storage key we would ever write: no "..", no absolute path, no backslash or NUL. */
export function isValidKey(key: string): boolean {
  if (!KEY.test(key)) return false;
  return key.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

export const thumbnailKey = (pathId: string, formatName: string): string => `thumbnail/${pathId}/${formatName}`;

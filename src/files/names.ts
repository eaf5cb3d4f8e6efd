import { randomBytes, randomInt } from 'node:crypto';

/**
 * Upload names and paths, as Zulip lays them out (zerver/lib/upload:
 * sanitize_name and the message-attachment path_id):
 *   <realm_id>/<2 hex>/<random url-safe token>/<sanitized file name>
 * The random part (24 url-safe characters, 144 bits) is what keeps a URL
 * from being guessed; the 2-hex part spreads files over directories.
 */

/** Zulip's sanitize_name: NFKC, keep word characters, spaces, dots and dashes; runs of spaces/dashes become one dash. */
export function sanitizeName(raw: string): string {
  let v = raw.normalize('NFKC');
  // The browser may send a full client path ("C:\\x\\a.png"): only the base name counts.
  v = v.split(/[\\/]/).pop() ?? '';
  v = v.replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, '').trim();
  v = v.replace(/[-\s]+/g, '-');
  // A name made only of dots could climb out of a directory; Zulip names those "uploaded-file".
  if (v === '' || /^\.+$/.test(v)) return 'uploaded-file';
  // Keep the name within one path segment's usual limit (bytes), preserving the extension.
  while (Buffer.byteLength(v) > 200) {
    const dot = v.lastIndexOf('.');
    const ext = dot > 0 && v.length - dot <= 10 ? v.slice(dot) : '';
    v = v.slice(0, Math.max(1, v.length - ext.length - 1)) + ext;
  }
  return v;
}

export function newPathId(realmId: number, fileName: string): string {
  const bucket = randomInt(0, 256).toString(16).padStart(2, '0');
  const token = randomBytes(18).toString('base64url');
  return `${realmId}/${bucket}/${token}/${sanitizeName(fileName)}`;
}

const SEGMENT_OK = /^[^/\\\0]+$/;

/**
 * A path id as it may appear in a URL, or null: exactly four segments, the
 * first a realm id, none of them "." or "..", no backslash or NUL. Storage
 * keys are only ever built from ids that pass this (and come from our table).
 */
export function parsePathId(raw: string): { realmId: number; pathId: string } | null {
  const parts = raw.split('/');
  if (parts.length !== 4) return null;
  const [realm, bucket, token, name] = parts as [string, string, string, string];
  if (!/^\d{1,15}$/.test(realm) || !/^[0-9a-f]{1,2}$/.test(bucket) || !/^[A-Za-z0-9_-]{1,64}$/.test(token)) return null;
  if (!SEGMENT_OK.test(name) || name === '.' || name === '..') return null;
  return { realmId: Number(realm), pathId: raw };
}

/** The URL of an upload: the name is percent-encoded, the rest is already URL-safe. */
export function uploadUrl(pathId: string): string {
  const parts = pathId.split('/');
  const name = parts.pop()!;
  return `/user_uploads/${parts.join('/')}/${encodeURIComponent(name)}`;
}

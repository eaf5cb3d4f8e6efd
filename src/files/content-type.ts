/**
 * What an uploaded file is, decided by us and never by the uploader's
 * Content-Type header: the file's first bytes for the formats browsers
 * render (images, PDF, audio/video), the extension otherwise. A file whose
 * name claims an image type but whose bytes are not that image is served as
 * application/octet-stream, so a script dressed as a .png is never sniffed.
 *
 * Zulip (zerver/lib/upload/base.py INLINE_MIME_TYPES) serves inline only a
 * fixed list of safe types and everything else as an attachment; SVG is not
 * on it because it can carry script. We follow the same rule.
 */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain', log: 'text/plain', md: 'text/plain', csv: 'text/csv', json: 'application/json',
  html: 'text/html', htm: 'text/html', xml: 'application/xml', svg: 'image/svg+xml', js: 'text/javascript',
  css: 'text/css', zip: 'application/zip', gz: 'application/gzip', tar: 'application/x-tar',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', jpe: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  bmp: 'image/bmp', tif: 'image/tiff', tiff: 'image/tiff', avif: 'image/avif', heic: 'image/heic',
  pdf: 'application/pdf', mp3: 'audio/mpeg', ogg: 'audio/ogg', oga: 'audio/ogg', wav: 'audio/wav', m4a: 'audio/mp4',
  mp4: 'video/mp4', m4v: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime', ogv: 'video/ogg',
};

type Sniff = (b: Buffer) => boolean;
const starts = (sig: number[], at = 0): Sniff => (b) => b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
const ascii = (s: string, at = 0): Sniff => starts([...Buffer.from(s, 'latin1')], at);

/** Magic numbers of the types a browser would render inline. */
const MAGIC: [string, Sniff][] = [
  ['image/png', starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ['image/jpeg', starts([0xff, 0xd8, 0xff])],
  ['image/gif', (b) => ascii('GIF87a')(b) || ascii('GIF89a')(b)],
  ['image/webp', (b) => ascii('RIFF')(b) && ascii('WEBP', 8)(b)],
  ['image/bmp', ascii('BM')],
  ['image/tiff', (b) => starts([0x49, 0x49, 0x2a, 0x00])(b) || starts([0x4d, 0x4d, 0x00, 0x2a])(b)],
  ['image/avif', (b) => ascii('ftypavif', 4)(b) || ascii('ftypavis', 4)(b)],
  ['application/pdf', ascii('%PDF-')],
  ['audio/mpeg', (b) => ascii('ID3')(b) || starts([0xff, 0xfb])(b)],
  ['audio/ogg', ascii('OggS')],
  ['audio/wav', (b) => ascii('RIFF')(b) && ascii('WAVE', 8)(b)],
  ['video/webm', starts([0x1a, 0x45, 0xdf, 0xa3])],
  ['video/mp4', (b) => ascii('ftyp', 4)(b)],
];

/** Types served inline (Content-Disposition: inline); everything else downloads. */
export const INLINE_TYPES: ReadonlySet<string> = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/tiff', 'image/avif',
  'application/pdf', 'text/plain', 'audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/mp4',
  'video/mp4', 'video/webm', 'video/ogg', 'video/quicktime',
]);

/** Types whose bytes we can check: an extension claiming one of these must match its magic number. */
const CHECKABLE = new Set(MAGIC.map(([t]) => t));

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** The type we serve a file as, from its name and its first bytes (up to 64 are enough). */
export function detectContentType(name: string, head: Buffer): string {
  const sniffed = MAGIC.find(([, test]) => test(head))?.[0];
  const byExt = BY_EXTENSION[extensionOf(name)];
  if (byExt && CHECKABLE.has(byExt)) {
    // mp4 and m4a/mov share the ISO container; trust the extension within the family.
    if (sniffed === byExt || (sniffed === 'video/mp4' && /^(video|audio)\//.test(byExt))) return byExt;
    return sniffed ?? 'application/octet-stream';
  }
  if (sniffed && !byExt) return sniffed;
  if (byExt === 'text/plain' && head.includes(0)) return 'application/octet-stream';
  return byExt ?? 'application/octet-stream';
}

export const isThumbnailableImage = (type: string): boolean =>
  ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/tiff', 'image/avif'].includes(type);

import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * A minimal POSIX ustar writer and reader for organization exports (regular
 * files and directories only), over Node's zlib: the export format needs no
 * more, and no dependency is added for it. Names longer than 100 bytes use
 * the ustar prefix field (up to 255 bytes in all).
 */
export interface TarEntry {
  readonly name: string;
  readonly data: Buffer;
}

const BLOCK = 512;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  let base = name;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100) throw new Error(`tar: name too long: ${name}`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtime, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** A gzipped tarball of these files. */
export function writeTarGz(entries: readonly TarEntry[], mtime = Math.floor(Date.now() / 1000)): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(header(e.name, e.data.length, mtime), e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return gzipSync(Buffer.concat(parts));
}

const str = (b: Buffer, start: number, len: number): string => {
  const s = b.subarray(start, start + len);
  const nul = s.indexOf(0);
  return s.subarray(0, nul < 0 ? s.length : nul).toString('utf8');
};

/**
 * The regular files of a gzipped tarball. Throws on anything that is not a
 * well-formed gzip + ustar/GNU archive (bad checksum, truncated data), and
 * refuses absolute names and ".." components.
 */
export function readTarGz(gz: Buffer, maxBytes = 4 * 1024 * 1024 * 1024): TarEntry[] {
  let tar: Buffer;
  try {
    tar = gunzipSync(gz, { maxOutputLength: Math.min(maxBytes, 0x7fffffff) });
  } catch (e) {
    throw new Error(`not a gzip file (${(e as Error).message})`);
  }
  const out: TarEntry[] = [];
  let off = 0;
  let longName: string | undefined;
  while (off + BLOCK <= tar.length) {
    const h = tar.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    const stored = parseInt(str(h, 148, 8).trim(), 8);
    if (!Number.isFinite(stored) || stored !== sum) throw new Error('not a tar archive (bad header checksum)');
    const size = parseInt(str(h, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(h[156]!);
    const prefix = str(h, 257, 6).startsWith('ustar') ? str(h, 345, 155) : '';
    let name = longName ?? (prefix ? `${prefix}/${str(h, 0, 100)}` : str(h, 0, 100));
    longName = undefined;
    const start = off + BLOCK;
    if (start + size > tar.length) throw new Error('truncated tar archive');
    const data = tar.subarray(start, start + size);
    off = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'L') {
      longName = str(data, 0, data.length);
      continue;
    }
    if (type !== '0' && type !== '\0') continue; // directories, links, pax headers: not part of the format
    name = name.replace(/^\.\//, '');
    if (name.startsWith('/') || name.split('/').includes('..')) throw new Error(`unsafe name in tar archive: ${name}`);
    out.push({ name, data: Buffer.from(data) });
  }
  return out;
}

/** A file to put in a streamed tarball: its size up front (tar headers need it), its bytes when read. */
export interface TarSource {
  readonly name: string;
  readonly size: number;
  open(): Promise<AsyncIterable<Buffer | Uint8Array>> | AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>;
}

/**
 * The bytes of an (uncompressed) tarball, file by file: memory holds one
 * chunk at a time, whatever the size of the files. A file whose length is not
 * the announced size fails the archive (it changed while being read).
 */
export async function* tarChunks(sources: Iterable<TarSource>, mtime = Math.floor(Date.now() / 1000)): AsyncGenerator<Buffer> {
  for (const s of sources) {
    yield header(s.name, s.size, mtime);
    let n = 0;
    for await (const chunk of (await s.open()) as AsyncIterable<Buffer | Uint8Array>) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      n += b.length;
      if (n > s.size) throw new Error(`tar: ${s.name} grew while being archived`);
      yield b;
    }
    if (n !== s.size) throw new Error(`tar: ${s.name} shrank while being archived`);
    const pad = (BLOCK - (s.size % BLOCK)) % BLOCK;
    if (pad) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(BLOCK * 2);
}

/** A TarSource over bytes already in memory. */
export const bufferSource = (name: string, data: Buffer): TarSource => ({ name, size: data.length, open: () => [data] });

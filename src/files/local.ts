import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { isValidKey, type ByteRange, type FileStorage, type StoredFile } from './storage.js';

/**
 * Files under {dataDir}/uploads/files. A key is resolved and must stay inside
 * that folder (checked after resolution, so no key can reach outside even if
 * the key check had a hole). Writes go to a temporary name first and are
 * renamed into place, so a reader never sees half a file.
 */
export class LocalStorage implements FileStorage {
  readonly kind = 'local' as const;
  readonly root: string;
  constructor(dataDir: string) {
    this.root = path.resolve(dataDir, 'uploads', 'files');
  }

  private fullPath(key: string): string {
    if (!isValidKey(key)) throw new Error('invalid storage key');
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error('storage key escapes the upload folder');
    return full;
  }

  async put(key: string, body: Readable, _size: number, _contentType: string): Promise<void> {
    const target = this.fullPath(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${randomBytes(6).toString('hex')}.part`;
    try {
      await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
      await fs.rename(tmp, target);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw e;
    }
  }

  async open(key: string, range?: ByteRange): Promise<StoredFile | null> {
    let full: string;
    try {
      full = this.fullPath(key);
    } catch {
      return null;
    }
    try {
      const st = await fs.stat(full);
      if (!st.isFile()) return null;
      // 256 KiB reads: fewer syscalls and event-loop turns per file, still bounded memory.
      const opts = range ? { start: range.start, end: range.end } : {};
      return { stream: createReadStream(full, { highWaterMark: 256 * 1024, ...opts }), size: st.size };
    } catch {
      return null;
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const full = this.fullPath(key);
      await fs.rm(full, { force: true });
      // Drop now-empty parent folders up to the realm's, so deletes leave no litter.
      let dir = path.dirname(full);
      while (dir.startsWith(this.root + path.sep) && path.dirname(dir) !== this.root) {
        try {
          await fs.rmdir(dir);
        } catch {
          break;
        }
        dir = path.dirname(dir);
      }
    }
  }
}

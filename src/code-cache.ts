import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import zlib from 'node:zlib';

/**
 * Runs the server bundle (dist/src/server.cjs, tools/bundle-server.mjs) with
 * V8's code cache (performance.md P10). Parsing and compiling the 3.3 MB
 * bundle, and then compiling lazily each function start-up calls, was about
 * a quarter of a cold start; Node 20 has no compile cache for modules, but a
 * script compiled through vm.Script takes V8's cached data. The cache is
 * written once the server listens (every function start-up ran is compiled
 * by then) and read by the next start.
 *
 * V8 checks only the source's length, its own version and its flags against
 * the cached data, and does not verify its checksum in release builds (a
 * corrupt cache crashes the process). So the file carries a CRC-32 of the
 * bundle it was made from and of the data: a rebuilt bundle (even of the same
 * length) or a damaged file is ignored, and the start compiles from source
 * and writes a new cache. A cache V8 rejects (another Node version, other V8
 * flags) is replaced the same way.
 *
 * CRC-32 rather than SHA-256: both checks guard against accidents (a rebuild,
 * a torn or damaged file), not against someone who can write to dist/ (they
 * could change the bundle itself). A CRC detects every burst error up to 32
 * bits and misses a random change with probability 2^-32; zlib computes it
 * over the 3.3 MB bundle and the 3 MB cache in about 1 ms, against 9-12 ms
 * for the two SHA-256s of a cold start (OpenSSL's first use included),
 * 2% of the start (P10). Node before 20.15 has no zlib.crc32: SHA-256's first
 * four bytes stand in.
 */

const MAGIC = Buffer.from('parley-v8-cache2');
const HASH_BYTES = 4;
const HEADER_BYTES = MAGIC.length + 2 * HASH_BYTES;

/** Set by runBundle; src/start-heap.ts's startupDone() calls it once the server listens. */
export const STARTED_HOOK = Symbol.for('parley.startupDone');

const crc32 = (zlib as { crc32?: (data: Buffer) => number }).crc32;
function checksum(data: Buffer): Buffer {
  if (crc32 === undefined) return crypto.createHash('sha256').update(data).digest().subarray(0, HASH_BYTES);
  const out = Buffer.alloc(HASH_BYTES);
  out.writeUInt32BE(crc32(data));
  return out;
}

/** The V8 data in `file` when it was made from the source with this checksum and is intact; else undefined. */
export function readCodeCache(file: string, sourceHash: Buffer): Buffer | undefined {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  if (buf.length <= HEADER_BYTES || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (!buf.subarray(MAGIC.length, MAGIC.length + HASH_BYTES).equals(sourceHash)) return undefined;
  const data = buf.subarray(HEADER_BYTES);
  if (!checksum(data).equals(buf.subarray(MAGIC.length + HASH_BYTES, HEADER_BYTES))) return undefined;
  return data;
}

/**
 * Writes the cache through a temporary file and a rename, so a reader (another
 * process starting) never sees half a file. False when it cannot be written
 * (a read-only installation): the server then simply compiles at every start.
 */
export function writeCodeCache(file: string, sourceHash: Buffer, data: Buffer): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, Buffer.concat([MAGIC, sourceHash, checksum(data), data]));
    fs.renameSync(tmp, file);
    return true;
  } catch {
    fs.rmSync(tmp, { force: true });
    return false;
  }
}

export interface BundleRun {
  /** True when the start used a valid cache that V8 accepted. */
  readonly cacheUsed: boolean;
  /** Writes the cache from what has been compiled so far. */
  saveCodeCache(): boolean;
}

/**
 * Runs the bundle: an ASCII file holding one function expression, called
 * with CommonJS's arguments (exports, require, module, __filename, __dirname)
 * and the bundle's URL for its import.meta.url (tools/bundle-server.mjs). It is
 * compiled as it is: wrapping it here would keep a second copy of its 3 MB in
 * the heap. The bundle must not use import() (the bundler turns it into
 * require()). Without a usable cache, the cache is written shortly after
 * the bundle reports that the server listens (STARTED_HOOK), or never if it
 * does not.
 */
export function runBundle(bundleFile: string, cacheFile = `${bundleFile}.cache`): BundleRun {
  const bytes = fs.readFileSync(bundleFile);
  const sourceHash = checksum(bytes);
  const cachedData = readCodeCache(cacheFile, sourceHash);
  const script = new vm.Script(bytes.toString('utf8'), { filename: bundleFile, cachedData });
  const cacheUsed = cachedData !== undefined && script.cachedDataRejected !== true;
  const run: BundleRun = { cacheUsed, saveCodeCache: () => writeCodeCache(cacheFile, sourceHash, script.createCachedData()) };
  if (!cacheUsed) {
    (globalThis as Record<symbol, unknown>)[STARTED_HOOK] = () => {
      // Later than the listen itself, so the first requests are not kept waiting by the serialization.
      setTimeout(() => run.saveCodeCache(), 500).unref();
    };
  }
  const module = { exports: {} };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(module.exports, module.exports, createRequire(bundleFile), module, bundleFile, path.dirname(bundleFile), pathToFileURL(bundleFile).href);
  return run;
}

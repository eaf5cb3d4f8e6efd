import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * An upload's bytes as they arrive, streamed to a temporary file in
 * {dataDir}/uploads/tmp (never held in memory), with its size and first
 * bytes (for type detection). `truncated`: the multipart parser stopped at
 * its size limit, so the file is larger than we accept.
 */
export interface StagedFile {
  readonly path: string;
  readonly size: number;
  readonly head: Buffer;
  readonly truncated: boolean;
}

export const stagingDir = (dataDir: string): string => path.resolve(dataDir, 'uploads', 'tmp');

export async function stageStream(dataDir: string, source: Readable & { truncated?: boolean }): Promise<StagedFile> {
  const dir = stagingDir(dataDir);
  await fs.mkdir(dir, { recursive: true });
  // The name is ours alone: nothing from the client reaches the file system.
  const file = path.join(dir, `${randomBytes(12).toString('hex')}.part`);
  let size = 0;
  const headParts: Buffer[] = [];
  let headLen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (headLen < 64) {
        headParts.push(chunk.subarray(0, 64 - headLen));
        headLen += Math.min(chunk.length, 64 - headLen);
      }
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, counter, createWriteStream(file, { flags: 'wx' }));
  } catch (e) {
    await fs.rm(file, { force: true });
    throw e;
  }
  return { path: file, size, head: Buffer.concat(headParts), truncated: source.truncated === true };
}

export async function discardStaged(files: readonly StagedFile[]): Promise<void> {
  await Promise.all(files.map((f) => fs.rm(f.path, { force: true })));
}

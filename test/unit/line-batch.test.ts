import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineBatch } from '../../src/http/logging.js';

/** A sink that records what LineBatch hands on, as SonicBoom's buffer mode would receive it. */
function recordingSink() {
  /** Copies of what was handed on, when it was handed on. */
  const writes: Buffer[] = [];
  /** The buffers themselves, as the destination holds them until written. */
  const live: Buffer[] = [];
  let flushes = 0;
  let syncFlushes = 0;
  return {
    writes,
    live,
    get flushes() {
      return flushes;
    },
    get syncFlushes() {
      return syncFlushes;
    },
    sink: {
      write(bytes: Buffer): boolean {
        writes.push(Buffer.from(bytes));
        live.push(bytes);
        return true;
      },
      flush(cb?: (err?: Error) => void): void {
        flushes++;
        cb?.();
      },
      flushSync(): void {
        syncFlushes++;
      },
    },
  };
}

describe('LineBatch', () => {
  it('hands on nothing until a batch is full, then the lines as UTF-8 in order, in one buffer', () => {
    const r = recordingSink();
    const batch = new LineBatch(r.sink, 100);
    const lines = ['{"a":1}\n', '{"b":"é ü"}\n', '{"c":"😀 中文"}\n'];
    for (const l of lines) batch.write(l);
    expect(r.writes).toEqual([]);
    batch.write('x'.repeat(80) + '\n');
    expect(r.writes.length).toBe(1);
    expect(r.writes[0]!.toString('utf8')).toBe(lines.join('') + 'x'.repeat(80) + '\n');
    batch.close();
  });

  it('never changes a buffer it has handed on', () => {
    const r = recordingSink();
    const batch = new LineBatch(r.sink, 16);
    batch.write('0123456789abcdef\n');
    batch.write('ZZZZZZZZZZZZZZZZ\n');
    expect(r.live.map((b) => b.toString())).toEqual(['0123456789abcdef\n', 'ZZZZZZZZZZZZZZZZ\n']);
    batch.close();
  });

  it('sends a line longer than a batch on its own, after what was pending', () => {
    const r = recordingSink();
    const batch = new LineBatch(r.sink, 64);
    batch.write('first\n');
    const long = 'é'.repeat(40_000) + '\n';
    batch.write(long);
    batch.write('after\n');
    expect(r.writes.map((b) => b.toString('utf8'))).toEqual(['first\n', long]);
    batch.flush();
    expect(r.writes.map((b) => b.toString('utf8'))).toEqual(['first\n', long, 'after\n']);
    expect(r.flushes).toBe(1);
    batch.close();
  });

  it('passes a partial batch on flush, flushSync and close, and nothing when empty', () => {
    const r = recordingSink();
    const batch = new LineBatch(r.sink, 1024);
    batch.flush();
    expect(r.writes).toEqual([]);
    batch.write('one\n');
    batch.flush();
    batch.write('two\n');
    batch.flushSync();
    batch.write('three\n');
    batch.close();
    expect(r.writes.map((b) => b.toString())).toEqual(['one\n', 'two\n', 'three\n']);
    expect([r.flushes, r.syncFlushes]).toEqual([2, 1]);
  });

  it('encodes a lone surrogate as UTF-8 encoding does (U+FFFD), as the string destination did', () => {
    const r = recordingSink();
    const batch = new LineBatch(r.sink, 1024);
    batch.write('a\ud800b\n');
    batch.close();
    expect(r.writes[0]).toEqual(Buffer.from('a\ud800b\n', 'utf8'));
  });

  it('onFd writes every line to the file, in order, once flushed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-linebatch-'));
    const file = path.join(dir, 'log');
    const fd = fs.openSync(file, 'w');
    const batch = LineBatch.onFd(fd);
    const lines = Array.from({ length: 2000 }, (_, i) => `{"n":${i},"s":"ß${'x'.repeat(i % 50)}"}\n`);
    for (const l of lines) batch.write(l);
    await new Promise<void>((resolve, reject) => batch.flush((err) => (err ? reject(err) : resolve())));
    batch.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(lines.join(''));
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bufferSource, readTarGz, tarChunks, writeTarGz } from '../../src/files/tar.js';

/** Issue 19: the ustar writer/reader under organization exports. */

async function streamed(sources: Parameters<typeof tarChunks>[0]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of Readable.from(tarChunks(sources, 1700000000))) parts.push(c as Buffer);
  return gzipSync(Buffer.concat(parts));
}

describe('tar', () => {
  const long = `zulip-export-abcdef12/uploads/2/ab/${'x'.repeat(60)}/${'n'.repeat(90)}.txt`;
  const files = [
    { name: 'zulip-export-abcdef12/realm.json', data: Buffer.from('{"zerver_realm":[]}') },
    { name: long, data: Buffer.alloc(1025, 7) },
    { name: 'zulip-export-abcdef12/empty', data: Buffer.alloc(0) },
    { name: 'zulip-export-abcdef12/uploads/2/cd/tok/naïve résumé.pdf', data: Buffer.from('ü') },
  ];

  it('reads back what it writes, in memory and streamed (long names through the ustar prefix)', async () => {
    expect(readTarGz(writeTarGz(files, 1700000000))).toEqual(files);
    const gz = await streamed(files.map((f) => bufferSource(f.name, f.data)));
    expect(gz.equals(writeTarGz(files, 1700000000))).toBe(true);
  });

  it('refuses what is not a gzipped tarball, and unsafe names', () => {
    expect(() => readTarGz(Buffer.from('plain text'))).toThrow(/^not a gzip file/);
    expect(() => readTarGz(gzipSync(Buffer.alloc(600, 1)))).toThrow('not a tar archive (bad header checksum)');
    const truncated = writeTarGz(files);
    const raw = gunzipSync(truncated);
    expect(() => readTarGz(gzipSync(raw.subarray(0, 1536 + 500)))).toThrow('truncated tar archive');
    expect(() => readTarGz(writeTarGz([{ name: 'a/../../etc/passwd', data: Buffer.from('x') }]))).toThrow('unsafe name in tar archive: a/../../etc/passwd');
    expect(() => readTarGz(writeTarGz([{ name: '/etc/passwd', data: Buffer.from('x') }]))).toThrow('unsafe name in tar archive: /etc/passwd');
  });

  it('fails a streamed file whose size changed while it was read', async () => {
    await expect(streamed([{ name: 'a', size: 5, open: () => [Buffer.from('abc')] }])).rejects.toThrow('tar: a shrank while being archived');
    await expect(streamed([{ name: 'b', size: 2, open: () => [Buffer.from('abc')] }])).rejects.toThrow('tar: b grew while being archived');
  });
});

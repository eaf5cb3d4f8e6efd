import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// s3rver ships no types; it is a real S3-compatible server, started in-process on loopback.
// @ts-expect-error no declaration file
import S3rver from 's3rver';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { basicAuth, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { fetchUrl, filesUnder, uploadFile } from '../support/files.js';
import { pngImage } from '../support/uploads.js';
import { S3Storage } from '../../src/files/s3.js';

let s3: { run(): Promise<{ port: number }>; close(): Promise<void> };
let t: TestServer;
let endpoint = '';
const bucket = 'parley-test';
const creds = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, resetOnClose: true, configureBuckets: [{ name: bucket }] });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
  t = await startTestServer({
    s3: { bucket, endpoint, region: 'us-east-1', ...creds, forcePathStyle: true, prefix: 'uploads/' },
    uploadCleanerIntervalMs: 0,
  });
  await createChannel(t, 's3', ['hamlet', 'cordelia']);
});
afterAll(async () => {
  await t?.close();
  await s3?.close();
});

async function bucketKeys(): Promise<string[]> {
  const c = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: creds });
  const out = await c.send(new ListObjectsV2Command({ Bucket: bucket }));
  c.destroy();
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

describe('uploads on an S3-compatible store', () => {
  it('stores in the bucket (nothing on local disk), serves through Parley with access checks, deletes', async () => {
    expect(t.app.ctx.files.storage.kind).toBe('s3');
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'report.txt', 'from s3', 'text/plain'));
    const pathId = decodeURIComponent(up.url.replace('/user_uploads/', ''));
    expect(await bucketKeys()).toContain(`uploads/${pathId}`);
    expect(filesUnder(path.join(t.config.dataDir, 'uploads', 'files'))).toEqual([]);
    expect((await fetchUrl(t, up.url, 'cordelia')).statusCode).toBe(404);
    await sendChannelMessage(t, 'hamlet', 's3', 't', `[r](${up.url})`);
    const got = await fetchUrl(t, up.url, 'cordelia');
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('from s3');
    expect(got.headers['content-security-policy']).toContain('sandbox');

    // A second process with the same settings reads the same object.
    const other = new S3Storage({ bucket, endpoint, region: 'us-east-1', ...creds, forcePathStyle: true, prefix: 'uploads/' });
    const f = await other.open(pathId);
    const chunks: Buffer[] = [];
    for await (const c of f!.stream as Readable) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('from s3');
    await other.close();

    const row = await t.app.ctx.db.selectFrom('attachments').select('id').where('path_id', '=', pathId).executeTakeFirstOrThrow();
    expectSuccess(await t.delete(`/attachments/${row.id}`, {}, 'hamlet'));
    expect(await bucketKeys()).not.toContain(`uploads/${pathId}`);
    expect((await fetchUrl(t, up.url, 'hamlet')).statusCode).toBe(404);
  });

  it('a file larger than one multipart part streams up and back intact', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024 + 123);
    for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) & 0xff;
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'big.bin', big));
    const got = await fetchUrl(t, up.url, 'hamlet');
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(big)).toBe(true);
    // A range straight from the bucket.
    const part = await t.app.http.inject({ method: 'GET', url: up.url, headers: { authorization: basicAuth(t.users.hamlet), range: 'bytes=4096-8191' } });
    expect([part.statusCode, part.headers['content-range']]).toEqual([206, `bytes 4096-8191/${big.length}`]);
    expect(part.rawPayload.equals(big.subarray(4096, 8192))).toBe(true);
  });

  it('thumbnails are made from and stored in the bucket', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'pic.png', await pngImage(1000, 800), 'image/png'));
    await t.app.ctx.files.idle();
    const pathId = decodeURIComponent(up.url.replace('/user_uploads/', ''));
    expect(await bucketKeys()).toContain(`uploads/thumbnail/${pathId}/840x560.webp`);
    const thumb = await fetchUrl(t, up.url.replace('/user_uploads/', '/user_uploads/thumbnail/') + '/840x560.webp', 'hamlet');
    expect(thumb.statusCode).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/webp');
  });
});

import type { Readable } from 'node:stream';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type * as S3Upload from '@aws-sdk/lib-storage';
import { lazyRequire } from '../lazy.js';
import { isValidKey, type ByteRange, type FileStorage, type StoredFile } from './storage.js';

// The AWS SDK is large (about 25 MB resident, 100-150 ms to load): loaded only when S3 is configured.
const sdk = lazyRequire<typeof S3Sdk>('@aws-sdk/client-s3');
const libStorage = lazyRequire<typeof S3Upload>('@aws-sdk/lib-storage');

export interface S3Settings {
  readonly bucket: string;
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly accessKeyId: string | undefined;
  readonly secretAccessKey: string | undefined;
  readonly forcePathStyle: boolean;
  /** Key prefix inside the bucket (e.g. "uploads/"). */
  readonly prefix: string;
}

/**
 * An S3-compatible object store (AWS S3, MinIO, Ceph, s3rver in tests), so
 * that several Parley processes, on several machines, serve the same files.
 * Uploads stream through lib-storage's multipart Upload (parts of 5 MiB,
 * at most 2 in flight), downloads stream the GetObject body: memory stays
 * flat whatever the file size. Files are always served through Parley
 * (never a redirect to the bucket), so access checks and our security
 * headers apply to every download.
 */
export class S3Storage implements FileStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  constructor(private readonly s: S3Settings) {
    // Checksums only where S3 requires them: S3-compatible stores (MinIO, Ceph, s3rver) differ
    // in their support for the SDK's newer default trailing checksums.
    const cfg: S3ClientConfig = {
      region: s.region,
      forcePathStyle: s.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (s.endpoint) cfg.endpoint = s.endpoint;
    if (s.accessKeyId && s.secretAccessKey) cfg.credentials = { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey };
    this.client = new (sdk().S3Client)(cfg);
  }

  private objectKey(key: string): string {
    if (!isValidKey(key)) throw new Error('invalid storage key');
    return this.s.prefix + key;
  }

  async put(key: string, body: Readable, _size: number, contentType: string): Promise<void> {
    const upload = new (libStorage().Upload)({
      client: this.client,
      params: { Bucket: this.s.bucket, Key: this.objectKey(key), Body: body, ContentType: contentType },
      queueSize: 2,
      partSize: 5 * 1024 * 1024,
    });
    await upload.done();
  }

  async open(key: string, range?: ByteRange): Promise<StoredFile | null> {
    let objectKey: string;
    try {
      objectKey = this.objectKey(key);
    } catch {
      return null;
    }
    try {
      const out = await this.client.send(new (sdk().GetObjectCommand)({ Bucket: this.s.bucket, Key: objectKey, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
      if (!out.Body) return null;
      // A ranged answer's Content-Range ends in "/<total size>".
      const total = range && out.ContentRange ? Number(out.ContentRange.split('/').pop()) : Number(out.ContentLength ?? 0);
      return { stream: out.Body as Readable, size: total };
    } catch (e) {
      const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404) return null;
      throw e;
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000).map((k) => ({ Key: this.objectKey(k) }));
      if (batch.length) await this.client.send(new (sdk().DeleteObjectsCommand)({ Bucket: this.s.bucket, Delete: { Objects: batch, Quiet: true } }));
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

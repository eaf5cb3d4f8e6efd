import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { basicAuth, type FixtureName, type Res, type TestServer, type TestUser } from './server.js';

/** A file part of a multipart body. */
export interface FilePart {
  readonly field?: string;
  readonly filename: string;
  readonly contentType: string;
  readonly data: Buffer;
}

/** Sends a multipart/form-data request (files plus plain fields) as a fixture user. */
export async function multipartRequest(
  t: TestServer,
  method: 'POST' | 'PATCH',
  url: string,
  files: readonly FilePart[],
  fields: Record<string, string> = {},
  as: TestUser | FixtureName = 'hamlet',
): Promise<Res> {
  const user = typeof as === 'string' ? t.users[as] : as;
  const boundary = '----parleytest' + randomBytes(8).toString('hex');
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  files.forEach((f, i) => {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? `file-${i}`}"; filename="${f.filename}"\r\nContent-Type: ${f.contentType}\r\n\r\n`),
      f.data,
      Buffer.from('\r\n'),
    );
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const res = await t.app.http.inject({
    method,
    url: '/api/v1' + url,
    headers: { authorization: basicAuth(user), 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: Buffer.concat(parts),
  });
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, body, headers: res.headers as Res['headers'] };
}

export const pngImage = (width = 300, height = 200, color = '#ff0000'): Promise<Buffer> =>
  sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();

export const jpegImage = (width = 640, height = 480): Promise<Buffer> =>
  sharp({ create: { width, height, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 30 } } as unknown as sharp.Create }).jpeg().toBuffer();

function crc32(buf: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of buf) {
    let c = (crc ^ byte) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A tiny file whose PNG header claims width x height pixels (a decompression bomb's header). */
export function pngBombHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(64))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

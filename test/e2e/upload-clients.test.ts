import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// zulip-js ships no types; it is the real npm client Zulip users run.
// @ts-expect-error no declaration file
import zulipInit from 'zulip-js';
import { basicAuth, startTestServer, type FixtureName, type TestServer } from '../support/server.js';
import { createChannel } from '../support/messages.js';

/**
 * End to end over real HTTP: a client uploads a file, links it in a message,
 * a second user downloads it, a third who cannot see the message gets the
 * missing-file answer.
 *
 * zulip-js has no upload helper; its callEndpoint POSTs a form-data body, and
 * a file stream becomes a file part (its field name is ours to choose).
 *
 * The Python `zulip` package is not installed on this machine (no PyPI), so
 * its upload_file is replayed byte for byte as python-zulip + requests send
 * it (clients.md): POST /api/v1/user_uploads, multipart/form-data whose one
 * part is named after the file object's name (the full path), with the base
 * name as filename and no part Content-Type, the ZulipPython User-Agent and
 * HTTP Basic credentials.
 */
let t: TestServer;
let site: string;
beforeAll(async () => {
  t = await startTestServer();
  site = await t.listen();
  // hamlet and cordelia see the channel; polonius (a guest, not subscribed) does not.
  await createChannel(t, 'uploads-e2e', ['hamlet', 'cordelia'], { invite_only: true });
});
afterAll(async () => t.close());

function rawGet(url: string, who: FixtureName | null): Promise<{ status: number; body: Buffer; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = who ? { authorization: basicAuth(t.users[who]) } : {};
    http
      .get(site + url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), headers: res.headers }));
      })
      .on('error', reject);
  });
}

async function sendAndCheck(url: string, expected: Buffer, sender: FixtureName): Promise<void> {
  const res = await t.post('/messages', { type: 'stream', to: 'uploads-e2e', topic: 'files', content: `here: [file](${url})` }, sender);
  expect(res.status).toBe(200);
  const got = await rawGet(url, 'cordelia');
  expect(got.status).toBe(200);
  expect(got.body.equals(expected)).toBe(true);
  const denied = await rawGet(url, 'polonius');
  const missing = await rawGet(url.replace(/\/[^/]+\/([^/]+)$/, '/BBBBBBBBBBBBBBBBBBBBBBBB/$1'), 'polonius');
  expect(denied.status).toBe(404);
  expect(denied.body.toString()).toBe(missing.body.toString());
}

describe('uploads from real clients', () => {
  it('zulip-js: callEndpoint POST /user_uploads with a file stream; message; download; denial', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zjs-up-'));
    const file = path.join(dir, 'zulip-js report.txt');
    const data = Buffer.from('uploaded by zulip-js\n');
    fs.writeFileSync(file, data);
    const client = await zulipInit({ username: t.users.hamlet.email, apiKey: t.users.hamlet.apiKey, realm: site });
    const res = await client.callEndpoint('/user_uploads', 'POST', { file: fs.createReadStream(file) });
    expect(res).toEqual({ result: 'success', msg: '', uri: res.url, url: expect.stringMatching(/^\/user_uploads\/\d+\/[0-9a-f]{2}\/[^/]+\/zulip-js-report\.txt$/), filename: 'zulip-js report.txt' });
    const sent = await client.messages.send({ type: 'stream', to: 'uploads-e2e', topic: 'files', content: `[report](${res.url})` });
    expect(sent.result).toBe('success');
    const got = await rawGet(res.url, 'cordelia');
    expect(got.status).toBe(200);
    expect(got.body.equals(data)).toBe(true);
    expect((await rawGet(res.url, 'polonius')).status).toBe(404);
    // The API's temporary URL, fetched with no credentials at all.
    const tmp = await client.callEndpoint(res.url, 'GET', {});
    expect(tmp.result).toBe('success');
    const anon = await rawGet(tmp.url, null);
    expect(anon.body.equals(data)).toBe(true);
  });

  it('python-zulip upload_file, replayed: field named after the full path, no part type', async () => {
    const data = randomBytes(50_000);
    const fullPath = '/tmp/pybot/build log.bin';
    const boundary = randomBytes(16).toString('hex');
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${fullPath}"; filename="build log.bin"\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = http.request(
        site + '/api/v1/user_uploads',
        {
          method: 'POST',
          headers: {
            'user-agent': 'ZulipPython/0.9.1 (Debian GNU/Linux; 12)',
            authorization: basicAuth(t.users.hamlet),
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(body.length),
            accept: '*/*',
            'accept-encoding': 'gzip, deflate',
          },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ result: 'success', msg: '', uri: res.json.url, url: expect.stringMatching(/\/build-log\.bin$/), filename: 'build log.bin' });
    await sendAndCheck(res.json.url, data, 'hamlet');
    const got = await rawGet(res.json.url, 'hamlet');
    expect(got.headers['content-type']).toBe('application/octet-stream');
    expect(got.headers['content-disposition']).toBe('attachment; filename="build-log.bin"');
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { CONTENT_SECURITY_POLICY } from '../../src/http/web.js';

// Issue 14: the server serves the built web app. These tests use a small build
// of their own (the shape web/build.mjs writes), so they check the serving
// rules whatever the app's code is at the moment.

const JS = 'console.log("parley");\n'.repeat(50);
const CSS = 'body{color:#123}\n'.repeat(50);
const HTML = '<!doctype html><html><head><link rel="stylesheet" href="/static/app-ABC123.css"><script type="module" src="/static/app-XYZ789.js"></script></head><body><div id="app"></div></body></html>\n';

let webDir: string;
let t: TestServer;
beforeAll(async () => {
  webDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-web-'));
  fs.mkdirSync(path.join(webDir, 'static', 'fonts'), { recursive: true });
  const put = (rel: string, body: string, compressed = true): void => {
    const p = path.join(webDir, rel);
    fs.writeFileSync(p, body);
    if (compressed) {
      fs.writeFileSync(p + '.gz', zlib.gzipSync(body));
      fs.writeFileSync(p + '.br', zlib.brotliCompressSync(body));
    }
  };
  put('index.html', HTML);
  put('static/app-XYZ789.js', JS);
  put('static/app-ABC123.css', CSS);
  put('static/fonts/KaTeX_Main-Regular-QWE456.woff2', 'wOF2-not-really', false);
  t = await startTestServer({ webDir });
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(webDir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.http.inject({ method: 'GET', url, headers });

describe('the app page', () => {
  it('is served at / and the app paths with no-cache and a strict CSP', async () => {
    for (const url of ['/', '/login', '/settings']) {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(HTML);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    }
    const csp = CONTENT_SECURITY_POLICY.split('; ');
    expect(csp).toEqual(expect.arrayContaining(["script-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "default-src 'none'"]));
    // No 'unsafe-inline' or 'unsafe-eval' for scripts, nor for style elements.
    expect(csp.filter((d) => d.includes('unsafe'))).toEqual(["style-src-attr 'unsafe-inline'"]);
  });

  it('is compressed when the browser accepts it, and revalidates with its ETag', async () => {
    const br = await get('/', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(HTML);
    const etag = br.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await get('/', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });
});

describe('/static', () => {
  it('serves hashed assets as immutable with their type, precompressed', async () => {
    const plain = await get('/static/app-XYZ789.js');
    expect(plain.statusCode).toBe(200);
    expect(plain.body).toBe(JS);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['x-content-type-options']).toBe('nosniff');
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();

    const gz = await get('/static/app-XYZ789.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(JS);
    expect(gz.rawPayload.length).toBeLessThan(JS.length);

    const br = await get('/static/app-ABC123.css', { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(CSS);

    // br refused with q=0: gzip.
    const noBr = await get('/static/app-ABC123.css', { 'accept-encoding': 'br;q=0, gzip' });
    expect(noBr.headers['content-encoding']).toBe('gzip');

    const font = await get('/static/fonts/KaTeX_Main-Regular-QWE456.woff2', { 'accept-encoding': 'gzip, br' });
    expect(font.statusCode).toBe(200);
    expect(font.headers['content-type']).toBe('font/woff2');
    expect(font.headers['content-encoding']).toBeUndefined();
  });

  it('answers 404 for anything not in the build', async () => {
    for (const url of ['/static/app-NOPE.js', '/static/app-XYZ789.js.gz', '/static/../package.json', '/static/%2e%2e/package.json', '/static/', '/static/fonts']) {
      const res = await get(url);
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(res.body)).toEqual({ result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });
    }
  });

  it('serves emoji images from the emoji data package', async () => {
    const res = await get('/static/generated/emoji/images-google-64/1f600.png');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.rawPayload.subarray(1, 4).toString()).toBe('PNG');
    expect((await get('/static/generated/emoji/images-google-64/zzzz.png')).statusCode).toBe(404);
    expect((await get('/static/generated/emoji/images-google-64/fffff.png')).statusCode).toBe(404);
  });
});

describe('the API is unchanged', () => {
  it('unknown /api/v1 paths keep their 404 JSON', async () => {
    const res = await get('/api/v1/nothing/here');
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe('{"result":"error","msg":"Not Found","code":"BAD_REQUEST"}\n');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});

describe('without a build', () => {
  it('says so at / instead of failing', async () => {
    const s = await startTestServer({ webDir: path.join(webDir, 'missing') });
    try {
      const res = await s.app.http.inject({ method: 'GET', url: '/' });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('The web app is not built');
      expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect((await s.app.http.inject({ method: 'GET', url: '/static/app-XYZ789.js' })).statusCode).toBe(404);
    } finally {
      await s.close();
    }
  });
});

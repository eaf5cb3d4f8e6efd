import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { fetchUrl, filesUnder, uploadFile } from '../support/files.js';
import { multipartRequest, pngImage } from '../support/uploads.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ maxFileUploadSizeMib: 1 });
});
afterAll(async () => t.close());

const URL_RE = (name: string) => new RegExp(`^/user_uploads/\\d+/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/${name.replace(/[.]/g, '\\.')}$`);

async function attachmentRows() {
  return t.app.ctx.db.selectFrom('attachments').selectAll().orderBy('id').execute();
}

describe('POST /user_uploads', () => {
  it('stores the file and answers uri, url and filename as Zulip does; the uploader downloads it', async () => {
    const res = await uploadFile(t, 'hamlet', 'notes.txt', 'hello world\n', 'text/plain');
    const body = expectSuccess(res);
    expect(body).toEqual({ result: 'success', msg: '', uri: body.url, url: expect.stringMatching(URL_RE('notes.txt')), filename: 'notes.txt' });
    expect(body.url.startsWith(`/user_uploads/${t.realmId}/`)).toBe(true);
    const got = await fetchUrl(t, body.url, 'hamlet');
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('hello world\n');
    expect(got.headers['content-type']).toBe('text/plain');
    expect(got.headers['content-disposition']).toBe('inline; filename="notes.txt"');
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.headers['content-security-policy']).toContain('sandbox');
    expect(got.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('sanitizes the stored name like Zulip and percent-encodes it in the URL', async () => {
    const body = expectSuccess(await uploadFile(t, 'hamlet', 'my résumé (final).pdf', '%PDF-1.4\n', 'application/pdf'));
    expect(body.filename).toBe('my résumé (final).pdf');
    expect(body.url).toMatch(/\/my-r%C3%A9sum%C3%A9-final\.pdf$/);
    const got = await fetchUrl(t, body.url, 'hamlet');
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('application/pdf');
    expect(got.headers['content-disposition']).toBe("inline; filename*=utf-8''my-r%C3%A9sum%C3%A9-final.pdf");
  });

  it('refuses no file, two files and a file over the limit, writing nothing', async () => {
    const before = await attachmentRows();
    expectError(await multipartRequest(t, 'POST', '/user_uploads', [], { a: '1' }), 400, 'BAD_REQUEST', 'You must specify a file to upload');
    expectError(await t.post('/user_uploads', {}, 'hamlet'), 400, 'BAD_REQUEST', 'You must specify a file to upload');
    const two = [
      { filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('a') },
      { filename: 'b.txt', contentType: 'text/plain', data: Buffer.from('b') },
    ];
    expectError(await multipartRequest(t, 'POST', '/user_uploads', two), 400, 'BAD_REQUEST', 'You may only upload one file at a time');
    const big = Buffer.alloc(1024 * 1024 + 1, 7);
    expectError(await uploadFile(t, 'hamlet', 'big.bin', big), 400, 'BAD_REQUEST', "File is larger than this server's configured maximum upload size (1 MiB).");
    expect(await attachmentRows()).toEqual(before);
    // The temporary staging folder is empty again.
    expect(filesUnder(path.join(t.config.dataDir, 'uploads', 'tmp'))).toEqual([]);
  });

  it('accepts a file of exactly the limit and a zero-byte file', async () => {
    const exact = expectSuccess(await uploadFile(t, 'hamlet', 'exact.bin', Buffer.alloc(1024 * 1024, 1)));
    expect((await fetchUrl(t, exact.url, 'hamlet')).rawPayload.length).toBe(1024 * 1024);
    const empty = expectSuccess(await uploadFile(t, 'hamlet', 'empty.txt', ''));
    const got = await fetchUrl(t, empty.url, 'hamlet');
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.length).toBe(0);
  });

  it('enforces the organization upload quota', async () => {
    const { doSetRealmProperty } = await import('../../src/domain/actions/realm-settings.js');
    const { transact } = await import('../../src/domain/context.js');
    const { realmUploadSpaceUsed } = await import('../../src/store/attachments.js');
    const used = await realmUploadSpaceUsed(t.app.ctx.db, t.realmId);
    const quotaMib = Math.ceil((used + 10) / (1024 * 1024));
    await transact(t.app.ctx, (tx) => doSetRealmProperty(tx, t.realmId, 'upload_quota_mib', quotaMib));
    try {
      const room = quotaMib * 1024 * 1024 - used;
      const before = await attachmentRows();
      expectError(await uploadFile(t, 'othello', 'over.bin', Buffer.alloc(room + 1)), 400, 'REALM_UPLOAD_QUOTA', "Upload would exceed your organization's upload quota.");
      expect(await attachmentRows()).toEqual(before);
      expectSuccess(await uploadFile(t, 'othello', 'fits.bin', Buffer.alloc(room)));
    } finally {
      await transact(t.app.ctx, (tx) => doSetRealmProperty(tx, t.realmId, 'upload_quota_mib', null));
    }
  });
});

describe('ranges and forced downloads', () => {
  it('serves byte ranges (206), refuses unsatisfiable ones (416); /user_uploads/download/ always downloads', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'range.txt', '0123456789', 'text/plain'));
    const get = (range: string) => t.app.http.inject({ method: 'GET', url: up.url, headers: { authorization: basicAuth(t.users.hamlet), range } });
    for (const [range, status, body, cr] of [
      ['bytes=0-3', 206, '0123', 'bytes 0-3/10'],
      ['bytes=7-', 206, '789', 'bytes 7-9/10'],
      ['bytes=-2', 206, '89', 'bytes 8-9/10'],
      ['bytes=5-100', 206, '56789', 'bytes 5-9/10'],
    ] as const) {
      const r = await get(range);
      expect([r.statusCode, r.body, r.headers['content-range'], r.headers['content-length']], range).toEqual([status, body, cr, String(body.length)]);
      expect(r.headers['content-security-policy']).toContain('sandbox');
    }
    const bad = await get('bytes=10-20');
    expect([bad.statusCode, bad.headers['content-range']]).toEqual([416, 'bytes */10']);
    expect((await get('bytes=0-1,4-5')).statusCode).toBe(200);
    const dl = await fetchUrl(t, up.url.replace('/user_uploads/', '/user_uploads/download/'), 'hamlet');
    expect([dl.statusCode, dl.body, dl.headers['content-disposition']]).toEqual([200, '0123456789', 'attachment; filename="range.txt"']);
    expect((await fetchUrl(t, up.url.replace('/user_uploads/', '/user_uploads/download/'), 'cordelia')).statusCode).toBe(404);
  });
});

describe('who may download', () => {
  it('the uploader, readers of a linking message; others get the missing-file 404', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'plan.txt', 'secret plan', 'text/plain'));
    const missing = up.url.replace(/\/[^/]+\/plan\.txt$/, '/AAAAAAAAAAAAAAAAAAAAAAAA/plan.txt');
    const notFound = await fetchUrl(t, missing, 'hamlet');
    expect(notFound.statusCode).toBe(404);
    // Before any message links it, only the uploader can read it.
    const denied = await fetchUrl(t, up.url, 'cordelia');
    expect(denied.statusCode).toBe(404);
    expect(denied.body).toBe(notFound.body);
    expect(denied.headers['content-type']).toBe(notFound.headers['content-type']);

    await sendDirectMessage(t, 'hamlet', ['cordelia'], `see [plan](${up.url})`);
    expect((await fetchUrl(t, up.url, 'cordelia')).body).toBe('secret plan');
    expect((await fetchUrl(t, up.url, 'othello')).statusCode).toBe(404);

    // A private channel: subscribers read it, others (and guests) do not.
    await createChannel(t, 'files-private', ['hamlet', 'iago'], { invite_only: true });
    const up2 = expectSuccess(await uploadFile(t, 'hamlet', 'p.txt', 'private', 'text/plain'));
    await sendChannelMessage(t, 'hamlet', 'files-private', 'x', `[p](${up2.url})`);
    expect((await fetchUrl(t, up2.url, 'iago')).statusCode).toBe(200);
    expect((await fetchUrl(t, up2.url, 'othello')).statusCode).toBe(404);

    // A public channel: every non-guest member, subscribed or not; not the guest.
    await createChannel(t, 'files-public', ['hamlet']);
    const up3 = expectSuccess(await uploadFile(t, 'hamlet', 'pub.txt', 'public', 'text/plain'));
    await sendChannelMessage(t, 'hamlet', 'files-public', 'x', `[p](${up3.url})`);
    expect((await fetchUrl(t, up3.url, 'othello')).statusCode).toBe(200);
    expect((await fetchUrl(t, up3.url, 'polonius')).statusCode).toBe(404);
  });

  it('needs credentials; a wrong key is 401', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'c.txt', 'c', 'text/plain'));
    const anon = await fetchUrl(t, up.url, null);
    expect(anon.statusCode).toBe(401);
    expect(anon.body).not.toContain('c.txt');
  });

  it('a signed-in browser downloads with its session cookie, under the same access rule; a bad cookie is 401', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'browser.txt', 'from the web app', 'text/plain'));
    const cookieOf = async (who: 'hamlet' | 'cordelia'): Promise<string> => {
      const u = t.users[who];
      const res = await t.app.http.inject({ method: 'POST', url: '/accounts/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `username=${encodeURIComponent(u.email)}&password=${encodeURIComponent(u.password)}` });
      expect(res.statusCode).toBe(200);
      const set = res.headers['set-cookie'] as string[];
      return set.find((c) => c.startsWith('sessionid='))!.split(';')[0]!;
    };
    const get = (cookie: string) => t.app.http.inject({ method: 'GET', url: up.url, headers: { cookie } });
    const own = await get(await cookieOf('hamlet'));
    expect(own.statusCode).toBe(200);
    expect(own.body).toBe('from the web app');
    const other = await get(await cookieOf('cordelia'));
    expect(other.statusCode).toBe(404);
    expect((await get('sessionid=not-a-session')).statusCode).toBe(401);
  });

  it('path traversal and malformed paths are the missing-file 404', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'ok.txt', 'ok', 'text/plain'));
    const [, , realm, bucket, token] = up.url.split('/');
    for (const bad of [
      `/user_uploads/${realm}/${bucket}/${token}/..%2f..%2f..%2fetc%2fpasswd`,
      `/user_uploads/${realm}/${bucket}/${token}/%2e%2e`,
      `/user_uploads/${realm}/../../../etc/passwd`,
      `/user_uploads/${realm}/${bucket}/${token}/ok.txt/extra`,
      `/user_uploads/${realm}/${bucket}/..%5c..%5cwin.ini/x`,
      `/user_uploads/99999999/${bucket}/${token}/ok.txt`,
      `/user_uploads/${realm}/${bucket}/${token}/ok.txt%00.png`,
    ]) {
      const res = await fetchUrl(t, bad, 'hamlet');
      expect(res.statusCode, bad).toBe(404);
    }
  });
});

describe('hostile files', () => {
  it('an HTML file and an SVG with script are served as downloads under a sandboxing CSP', async () => {
    for (const [name, data, type] of [
      ['x.html', '<script>alert(document.cookie)</script>', 'text/html'],
      ['x.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml'],
      ['fake.png', '<html><script>alert(1)</script></html>', 'image/png'],
    ] as const) {
      const up = expectSuccess(await uploadFile(t, 'hamlet', name, data, type));
      const got = await fetchUrl(t, up.url, 'hamlet');
      expect(got.statusCode).toBe(200);
      expect(got.headers['content-disposition']).toMatch(/^attachment; /);
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.headers['content-security-policy']).toMatch(/default-src 'none'.*sandbox/);
      if (name === 'fake.png') expect(got.headers['content-type']).toBe('application/octet-stream');
    }
  });

  it('a real PNG is served inline as image/png', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'red.png', await pngImage(30, 20), 'application/octet-stream'));
    const got = await fetchUrl(t, up.url, 'hamlet');
    expect(got.headers['content-type']).toBe('image/png');
    expect(got.headers['content-disposition']).toBe('inline; filename="red.png"');
  });

  it('names that try to climb out never leave the upload folder', async () => {
    const before = filesUnder(t.config.dataDir).filter((f) => !f.startsWith('uploads/'));
    for (const name of ['../../evil.txt', '..', '/etc/passwd', '..\\..\\win.ini', '.', '....']) {
      const up = expectSuccess(await uploadFile(t, 'hamlet', name, 'x', 'text/plain'));
      expect(up.url).toMatch(/^\/user_uploads\/\d+\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/[^/]+$/);
      expect(up.url.split('/').pop()).not.toMatch(/^\.+$/);
    }
    const after = filesUnder(t.config.dataDir).filter((f) => !f.startsWith('uploads/'));
    expect(after.filter((f) => !f.endsWith('.sqlite') && !f.includes('sqlite'))).toEqual(before.filter((f) => !f.endsWith('.sqlite') && !f.includes('sqlite')));
  });
});

describe('temporary URLs', () => {
  it('GET /api/v1/user_uploads/{realm}/{path} answers a URL that works without credentials', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'temp.txt', 'temporary', 'text/plain'));
    const res = expectSuccess(await t.get(up.url.replace(/^\/user_uploads/, '/user_uploads'), {}, 'hamlet'));
    expect(res).toEqual({ result: 'success', msg: '', url: expect.stringMatching(/^\/user_uploads\/temporary\/[^/]+\/temp\.txt$/) });
    const got = await fetchUrl(t, res.url, null);
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('temporary');
    // Someone who may not read the file gets the missing-file answer, not a URL.
    expectError(await t.get(up.url, {}, 'othello'), 404, 'BAD_REQUEST', 'File not found');
    expectError(await t.get(up.url.replace(/temp\.txt$/, 'nope.txt'), {}, 'hamlet'), 404, 'BAD_REQUEST', 'File not found');
    // A forged or altered token, or another name, is refused.
    const forged = res.url.replace(/\/temporary\/([^/]+)\//, (_m: string, tok: string) => `/temporary/${tok.slice(0, -1)}${tok.endsWith('A') ? 'B' : 'A'}/`);
    expectError(jsonRes(await fetchUrl(t, forged, null)), 400, 'BAD_REQUEST', 'Invalid token');
    expectError(jsonRes(await fetchUrl(t, res.url.replace(/temp\.txt$/, 'other.txt'), null)), 400, 'BAD_REQUEST', 'Invalid filename');
  });

  it('expires after the configured lifetime', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'exp.txt', 'e', 'text/plain'));
    const res = expectSuccess(await t.get(up.url, {}, 'hamlet'));
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      expectError(jsonRes(await fetchUrl(t, res.url, null)), 400, 'BAD_REQUEST', 'Invalid token');
    } finally {
      Date.now = realNow;
    }
  });
});

function jsonRes(r: { statusCode: number; body: string; headers: Record<string, unknown> }) {
  return { status: r.statusCode, body: JSON.parse(r.body), headers: r.headers as never };
}

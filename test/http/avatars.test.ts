import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usersModule } from '../../src/state/users.js';
import '../../src/state/profiles.js';
import { activeUserIds } from '../../src/store/users.js';
import { applyDeliveries, registerContext } from '../support/module-consistency.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { jpegImage, multipartRequest, pngBombHeader, pngImage } from '../support/uploads.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const avatarFiles = (): string[] => {
  const dir = path.join(t.config.dataDir, 'user_avatars', String(t.realmId));
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
};
const active = async () => (await activeUserIds(t.app.ctx.db, t.realmId)).sort((a, b) => a - b);
/** Recipients of a delivery, sorted (emitters need not sort them). */
const rcpt = (d: { userIds: readonly number[] }) => [...d.userIds].sort((a, b) => a - b);

async function fetchFile(url: string) {
  return t.app.http.inject({ method: 'GET', url: url.replace(/\?.*$/, '') });
}

describe('POST /users/me/avatar', () => {
  it('stores 100px and 500px PNGs, bumps avatar_version, sends the avatar update to every active user', async () => {
    const u = await t.createUser({ email: 'pic@zulip.com', fullName: 'Pic Person' });
    const events = await t.captureEvents(async () => {
      const res = await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'me.png', contentType: 'image/png', data: await pngImage(300, 200) }], {}, u);
      expect(expectSuccess(res)).toEqual({ result: 'success', msg: '', avatar_url: expect.stringMatching(new RegExp(`^/user_avatars/${t.realmId}/[0-9a-f]{32}\\.png\\?version=2$`)) });
    });
    const row = await t.row(u.id);
    expect(row.avatar_source).toBe('U');
    expect(row.avatar_version).toBe(2);
    const url = `/user_avatars/${t.realmId}/${row.avatar_file}.png?version=2`;
    const medium = `/user_avatars/${t.realmId}/${row.avatar_file}-medium.png?version=2`;
    expect(events.map((e) => e.event)).toEqual([
      { type: 'realm_user', op: 'update', person: { user_id: u.id, avatar_source: 'U', avatar_url: url, avatar_url_medium: medium, avatar_version: 2 } },
    ]);
    expect(rcpt(events[0]!)).toEqual(await active());
    const small = await fetchFile(url);
    expect(small.statusCode).toBe(200);
    expect(small.headers['content-type']).toBe('image/png');
    expect(await sharp(small.rawPayload).metadata()).toMatchObject({ format: 'png', width: 100, height: 100 });
    const big = await fetchFile(medium);
    expect(await sharp(big.rawPayload).metadata()).toMatchObject({ format: 'png', width: 500, height: 500 });
    // User objects carry the uploaded URL whatever client_gravatar says.
    const got = expectSuccess(await t.get(`/users/${u.id}`, { client_gravatar: true }));
    expect(got.user.avatar_url).toBe(url);
    expect(got.user.avatar_version).toBe(2);
  });

  it('judges by content: a PNG named .txt is accepted; text named .png is BAD_IMAGE and nothing is stored', async () => {
    const u = await t.createUser({ email: 'content@zulip.com', fullName: 'Content Judge' });
    const ok = await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'notes.txt', contentType: 'text/plain', data: await jpegImage() }], {}, u);
    expectSuccess(ok);
    const before = await t.row(u.id);
    const filesBefore = avatarFiles();
    const events = await t.captureEvents(async () => {
      const bad = await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'avatar.png', contentType: 'image/png', data: Buffer.from('just some text, not pixels') }], {}, u);
      expectError(bad, 400, 'BAD_IMAGE', 'Could not decode image; did you upload an image file?');
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
      expectError(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'a.png', contentType: 'image/png', data: svg }], {}, u), 400, 'BAD_IMAGE', 'Invalid image format');
      const bomb = pngBombHeader(20000, 20000);
      expectError(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'a.png', contentType: 'image/png', data: bomb }], {}, u), 400, 'BAD_IMAGE', 'Image size exceeds limit.');
      const png = await pngImage(400, 400);
      const truncated = png.subarray(0, Math.floor(png.length / 2));
      expectError(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'a.png', contentType: 'image/png', data: truncated }], {}, u), 400, 'BAD_IMAGE', 'Image is corrupted or truncated');
    });
    expect(events).toEqual([]);
    expect(await t.row(u.id)).toEqual(before);
    expect(avatarFiles()).toEqual(filesBefore);
  });

  it('oversized uploads: "Uploaded file is larger than the allowed limit of 5 MiB", nothing stored', async () => {
    const before = await t.row(t.users.cordelia.id);
    const filesBefore = avatarFiles();
    const big = Buffer.concat([await pngImage(), Buffer.alloc(5 * 1024 * 1024)]);
    const events = await t.captureEvents(async () => {
      const res = await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'big.png', contentType: 'image/png', data: big }], {}, 'cordelia');
      expectError(res, 400, 'BAD_REQUEST', 'Uploaded file is larger than the allowed limit of 5 MiB');
    });
    expect(events).toEqual([]);
    expect(await t.row(t.users.cordelia.id)).toEqual(before);
    expect(avatarFiles()).toEqual(filesBefore);
  });

  it('exactly one file', async () => {
    expectError(await t.post('/users/me/avatar', {}, 'othello'), 400, 'BAD_REQUEST', 'You must upload exactly one avatar.');
    const two = [
      { filename: 'a.png', contentType: 'image/png', data: await pngImage() },
      { filename: 'b.png', contentType: 'image/png', data: await pngImage() },
    ];
    expectError(await multipartRequest(t, 'POST', '/users/me/avatar', two, {}, 'othello'), 400, 'BAD_REQUEST', 'You must upload exactly one avatar.');
    expect((await t.row(t.users.othello.id)).avatar_version).toBe(1);
  });

  it('no credentials', async () => {
    expectError(await t.post('/users/me/avatar', {}, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('avatar_changes_disabled: members refused, admins allowed', async () => {
    const realm = await t.app.ctx.db.selectFrom('realms').select('settings').where('id', '=', t.realmId).executeTakeFirstOrThrow();
    await t.app.ctx.db.updateTable('realms').set({ settings: JSON.stringify({ ...JSON.parse(realm.settings), avatar_changes_disabled: true }) }).where('id', '=', t.realmId).execute();
    try {
      const file = [{ filename: 'a.png', contentType: 'image/png', data: await pngImage() }];
      expectError(await multipartRequest(t, 'POST', '/users/me/avatar', file, {}, 'othello'), 400, 'BAD_REQUEST', 'Avatar changes are disabled in this organization.');
      expectError(await t.delete('/users/me/avatar', {}, 'othello'), 400, 'BAD_REQUEST', 'Avatar changes are disabled in this organization.');
      expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', file, {}, 'iago'));
    } finally {
      await t.app.ctx.db.updateTable('realms').set({ settings: realm.settings }).where('id', '=', t.realmId).execute();
    }
  });
});

describe('re-upload and DELETE /users/me/avatar', () => {
  it('a new upload replaces the files; DELETE returns to gravatar and removes them', async () => {
    const u = await t.createUser({ email: 'Swap@zulip.com', fullName: 'Swap Person' });
    const file = async (color: string) => [{ filename: 'a.png', contentType: 'image/png', data: await pngImage(120, 120, color) }];
    expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', await file('#00ff00'), {}, u));
    const first = (await t.row(u.id)).avatar_file!;
    expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', await file('#0000ff'), {}, u));
    const second = await t.row(u.id);
    expect(second.avatar_version).toBe(3);
    expect(avatarFiles()).not.toContain(`${first}.png`);
    expect(avatarFiles()).toContain(`${second.avatar_file}-medium.png`);
    expect((await fetchFile(`/user_avatars/${t.realmId}/${first}.png`)).statusCode).toBe(404);

    let body: any;
    const events = await t.captureEvents(async () => {
      body = expectSuccess(await t.delete('/users/me/avatar', {}, u));
    });
    const gravatar = 'https://secure.gravatar.com/avatar/' + (await import('node:crypto')).createHash('md5').update('swap@zulip.com').digest('hex');
    expect(body).toEqual({ result: 'success', msg: '', avatar_url: `${gravatar}?d=identicon&version=4` });
    expect(events.map((e) => e.event)).toEqual([
      {
        type: 'realm_user',
        op: 'update',
        person: { user_id: u.id, avatar_source: 'G', avatar_url: `${gravatar}?d=identicon&version=4`, avatar_url_medium: `${gravatar}?d=identicon&s=500&version=4`, avatar_version: 4 },
      },
    ]);
    const row = await t.row(u.id);
    expect([row.avatar_source, row.avatar_file, row.avatar_version]).toEqual(['G', null, 4]);
    expect(avatarFiles().filter((f) => f.startsWith(second.avatar_file!))).toEqual([]);
    // With client_gravatar, a public-email gravatar user's avatar_url is null again.
    expect(expectSuccess(await t.get(`/users/${u.id}`, { client_gravatar: true })).user.avatar_url).toBeNull();
  });

  it('unknown avatar paths are 404', async () => {
    for (const url of ['/user_avatars/1/nothing.png', `/user_avatars/${t.realmId}/${'a'.repeat(32)}.png`, '/user_avatars/1/..%2F..%2Fparley.sqlite3']) {
      expect((await fetchFile(url)).statusCode).toBe(404);
    }
  });
});

describe('/register consistency: avatars in realm_users and the own avatar keys', () => {
  it('upload, re-upload and delete, seen by the user and by others', async () => {
    const u = await t.createUser({ email: 'consistent@zulip.com', fullName: 'Consistent Pic' });
    const flow = async () => {
      expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'a.png', contentType: 'image/png', data: await pngImage() }], {}, u));
      expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'b.png', contentType: 'image/png', data: await pngImage(50, 80) }], {}, u));
      expectSuccess(await t.delete('/users/me/avatar', {}, u));
      expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'c.png', contentType: 'image/png', data: await pngImage() }], {}, u));
    };
    // The fresh fetch gets a fresh context: the own avatar keys come from the user's row as read at /register.
    for (const who of [u, 'polonius'] as const) {
      const stale = await registerContext(t, who);
      const state = await usersModule.fetch(stale);
      applyDeliveries(usersModule, state, await t.captureEvents(flow), stale);
      expect(state).toEqual(await usersModule.fetch(await registerContext(t, who)));
    }
  });
});

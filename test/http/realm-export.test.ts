import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { readTarGz, writeTarGz } from '../../src/files/tar.js';
import { importRealm, ImportError } from '../../src/domain/export/import-realm.js';
import { basicAuth, expectError, expectSuccess, startTestServer, type FixtureName, type TestServer } from '../support/server.js';
import { emptyTarget, tableCounts, type ImportTarget } from '../support/import-target.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { fetchUrl, uploadFile } from '../support/files.js';
import { multipartRequest, pngImage } from '../support/uploads.js';
import { SERVER_THUMBNAIL_FORMATS } from '../../src/files/thumbnails.js';

/**
 * Issue 19: organization exports (POST/GET/DELETE /export/realm, consents)
 * and `parley import`: export -> import into an empty database -> the same
 * API answers.
 */

const HUMANS: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius'];

async function runExport(t: TestServer, type: number, as: FixtureName = 'iago'): Promise<{ id: number; url: string; gz: Buffer }> {
  const { id } = expectSuccess(await t.post('/export/realm', { export_type: type }, as));
  await t.app.scheduler.runDueNow();
  const list = expectSuccess(await t.get('/export/realm', {}, as)).exports;
  const row = list.find((e: any) => e.id === id);
  const url = String(row.export_url);
  const res = await fetchUrl(t, url.replace(/^https?:\/\/[^/]+/, ''), as);
  expect(res.statusCode).toBe(200);
  return { id, url, gz: res.rawPayload };
}

describe('organization exports', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ schedulerEnabled: false });
  });
  afterAll(async () => t?.close());

  it('is for administrators only, and checks export_type', async () => {
    for (const who of ['hamlet', 'polonius', 'bot'] as FixtureName[]) {
      expectError(await t.post('/export/realm', {}, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      expectError(await t.get('/export/realm', {}, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      expectError(await t.get('/export/realm/consents', {}, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      expectError(await t.delete('/export/realm/1', {}, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    }
    expectError(await t.post('/export/realm', { export_type: 3 }, 'iago'), 400, 'BAD_REQUEST', 'Invalid export_type: Value error, Not in the list of possible values');
    expect(await t.captureEvents(() => t.post('/export/realm', {}, 'shiva'))).toEqual([]);
    expect(await t.app.ctx.db.selectFrom('realm_exports').selectAll().execute()).toEqual([]);
    expect(expectSuccess(await t.get('/export/realm', {}, 'iago')).exports).toEqual([]);
    expectError(await t.delete('/export/realm/999', {}, 'iago'), 400, 'BAD_REQUEST', 'Invalid data export ID');
  });

  it('lists consents and tells administrators when one changes', async () => {
    const events = await t.captureEvents(() => t.patch('/settings', { allow_private_data_export: true }, 'cordelia'));
    const consent = events.filter((d) => d.event.type === 'realm_export_consent');
    expect(consent.map((d) => ({ event: d.event, userIds: [...d.userIds].sort((a, b) => a - b) }))).toEqual([
      { event: { type: 'realm_export_consent', user_id: t.users.cordelia.id, consented: true }, userIds: [t.users.owner.id, t.users.iago.id].sort((a, b) => a - b) },
    ]);
    const body = expectSuccess(await t.get('/export/realm/consents', {}, 'iago'));
    const byId = new Map(body.export_consents.map((c: any) => [c.user_id, c]));
    expect(byId.get(t.users.cordelia.id)).toEqual({ user_id: t.users.cordelia.id, consented: true, email_address_visibility: 1 });
    expect(byId.get(t.users.hamlet.id)).toEqual({ user_id: t.users.hamlet.id, consented: false, email_address_visibility: 1 });
    expect(byId.has(t.users.bot.id)).toBe(false);
    await t.patch('/settings', { allow_private_data_export: false }, 'cordelia');
  });

  it('runs as a job, sends realm_export events to administrators, serves the tarball to them only, and deletes', async () => {
    const admins = [t.users.owner.id, t.users.iago.id].sort((a, b) => a - b);
    let id = 0;
    const requested = await t.captureEvents(async () => {
      id = expectSuccess(await t.post('/export/realm', {}, 'iago')).id;
    });
    const pendingRow = { id, export_time: expect.any(Number), acting_user_id: t.users.iago.id, export_url: null, deleted_timestamp: null, failed_timestamp: null, pending: true, export_type: 1 };
    expect(requested.map((d) => ({ event: d.event, userIds: [...d.userIds].sort((a, b) => a - b) }))).toEqual([{ event: { type: 'realm_export', exports: [pendingRow] }, userIds: admins }]);
    // Nothing is exported in the request.
    expect(expectSuccess(await t.get('/export/realm', {}, 'owner')).exports).toEqual([pendingRow]);
    expectError(await t.delete(`/export/realm/${id}`, {}, 'iago'), 400, 'BAD_REQUEST', 'Export still in progress');

    const done = await t.captureEvents(() => t.app.scheduler.runDueNow());
    const doneRow = { ...pendingRow, pending: false, export_url: expect.stringMatching(/^http:\/\/zulip\.testserver\/user_uploads\/exports\/\d+\/[0-9a-f]{2}\/[A-Za-z0-9_-]+\/zulip-export-[0-9a-f]{8}\.tar\.gz$/) };
    expect(done.map((d) => ({ event: d.event, userIds: [...d.userIds].sort((a, b) => a - b) }))).toEqual([{ event: { type: 'realm_export', exports: [doneRow] }, userIds: admins }]);
    const url = String(expectSuccess(await t.get('/export/realm', {}, 'iago')).exports[0].export_url).replace('http://zulip.testserver', '');

    const ok = await fetchUrl(t, url, 'owner');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toBe('application/gzip');
    const names = readTarGz(ok.rawPayload).map((e) => e.name.replace(/^[^/]+\//, ''));
    expect(names).toEqual(expect.arrayContaining(['realm.json', 'messages-000001.json', 'attachment.json', 'uploads/records.json', 'avatars/records.json', 'emoji/records.json']));
    for (const who of ['hamlet', 'shiva', 'polonius', 'bot'] as FixtureName[]) {
      const res = await fetchUrl(t, url, who);
      expect([res.statusCode, res.body]).toEqual([404, '<p>File not found.</p>']);
    }
    expect((await fetchUrl(t, url, null)).statusCode).toBe(401);

    const deleted = await t.captureEvents(async () => expectSuccess(await t.delete(`/export/realm/${id}`, {}, 'iago')));
    expect(deleted.map((d) => d.event)).toEqual([{ type: 'realm_export', exports: [{ ...pendingRow, pending: false, deleted_timestamp: expect.any(Number) }] }]);
    expect((await fetchUrl(t, url, 'owner')).statusCode).toBe(404);
    expectError(await t.delete(`/export/realm/${id}`, {}, 'iago'), 400, 'BAD_REQUEST', 'Export already deleted');
  });

  it('a failed export says so, and 5 requests in 7 days is the limit', async () => {
    const storage = t.app.ctx.files.storage;
    const put = storage.put.bind(storage);
    (storage as { put: typeof put }).put = async () => {
      throw new Error('disk full');
    };
    let id = 0;
    try {
      id = expectSuccess(await t.post('/export/realm', { export_type: 2 }, 'owner')).id;
      const events = await t.captureEvents(() => t.app.scheduler.runDueNow());
      const row = (events.map((d) => d.event).find((e) => e.type === 'realm_export')!.exports as any[]).find((e: any) => e.id === id);
      expect(row).toEqual({ id, export_time: expect.any(Number), acting_user_id: t.users.owner.id, export_url: null, deleted_timestamp: null, failed_timestamp: expect.any(Number), pending: false, export_type: 2 });
    } finally {
      (storage as { put: typeof put }).put = put;
    }
    expectError(await t.delete(`/export/realm/${id}`, {}, 'owner'), 400, 'BAD_REQUEST', 'Export failed, nothing to delete');
    // Two so far this week (one deleted, one failed): three more are allowed, the sixth is not.
    for (let i = 0; i < 3; i++) expectSuccess(await t.post('/export/realm', {}, 'iago'));
    const before = expectSuccess(await t.get('/export/realm', {}, 'iago')).exports;
    const events = await t.captureEvents(async () => expectError(await t.post('/export/realm', {}, 'iago'), 400, 'BAD_REQUEST', 'Exceeded rate limit.'));
    expect(events).toEqual([]);
    expect(expectSuccess(await t.get('/export/realm', {}, 'iago')).exports).toEqual(before);
  });
});

describe('export -> import into an empty database', () => {
  let t: TestServer;
  let target: ImportTarget;
  let channelMsg = 0;
  let privateMsg = 0;
  let dm = 0;
  let uploadUrl = '';
  let imagePath = '';
  beforeAll(async () => {
    t = await startTestServer({ schedulerEnabled: false });
    target = await emptyTarget();
    // Notification Bot's notice stays: messages from the system bots (another organization) are carried too.
    await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'othello', 'iago', 'polonius'], {}, 'owner', true);
    await createChannel(t, 'secret', ['hamlet', 'othello'], { invite_only: true });
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'notes.txt', 'to be or not to be', 'text/plain'));
    uploadUrl = up.url;
    channelMsg = await sendChannelMessage(t, 'hamlet', 'Denmark', 'castle', `Hello **@_Cordelia, Lear's daughter** see [notes](${up.url})`);
    await sendChannelMessage(t, 'cordelia', 'Denmark', 'castle', 'A reply');
    privateMsg = await sendChannelMessage(t, 'othello', 'secret', 'plans', 'A secret plan');
    dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'A direct word');
    await sendDirectMessage(t, 'hamlet', ['cordelia', 'othello'], 'A group word');
    expectSuccess(await t.post(`/messages/${channelMsg}/reactions`, { emoji_name: 'octopus' }, 'cordelia'));
    expectSuccess(await multipartRequest(t, 'POST', '/users/me/avatar', [{ filename: 'me.png', contentType: 'image/png', data: await pngImage(300, 200) }], {}, 'hamlet'));
    expectSuccess(await multipartRequest(t, 'POST', '/realm/emoji/party_parrot', [{ filename: 'parrot.png', contentType: 'image/png', data: await pngImage(64, 64, '#00ff00') }], {}, 'iago'));
    await sendChannelMessage(t, 'iago', 'Denmark', 'castle', 'Look :party_parrot:');
    const img = expectSuccess(await uploadFile(t, 'iago', 'red.png', await pngImage(300, 200), 'image/png'));
    imagePath = String(img.url).replace(/^\/user_uploads\//, '');
    await sendChannelMessage(t, 'iago', 'Denmark', 'castle', `[red](${img.url})`);
    await t.app.ctx.files.idle();
    expectSuccess(await t.post(`/messages/${channelMsg}/reactions`, { emoji_name: 'party_parrot' }, 'othello'));
    expectSuccess(await t.post('/messages/flags', { messages: [channelMsg], op: 'add', flag: 'starred' }, 'othello'));
    // Objects around the messages: a user group, a profile field and values, topic and user muting, alert words, a linkifier.
    expectSuccess(await t.post('/user_groups/create', { name: 'actors', description: 'The players', members: [t.users.hamlet.id, t.users.othello.id] }, 'iago'));
    const field = expectSuccess(await t.post('/realm/profile_fields', { name: 'Title', field_type: 1 }, 'iago')).id;
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: field, value: 'Prince of Denmark' }] }, 'hamlet'));
    const denmark = expectSuccess(await t.get('/get_stream_id', { stream: 'Denmark' }, 'hamlet')).stream_id;
    expectSuccess(await t.post('/user_topics', { stream_id: denmark, topic: 'castle', visibility_policy: 3 }, 'cordelia'));
    expectSuccess(await t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'cordelia'));
    expectSuccess(await t.post('/users/me/alert_words', { alert_words: ['ghost'] }, 'hamlet'));
    expectSuccess(await t.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}' }, 'iago'));
    expectSuccess(await t.patch('/realm', { description: 'Elsinore', invite_required: false }, 'owner'));
    expectSuccess(await t.post('/saved_snippets', { title: 'Greeting', content: 'Good morrow' }, 'hamlet'));
    expectSuccess(await t.post('/navigation_views', { fragment: 'narrow/is/starred', is_pinned: true }, 'hamlet'));
    expectSuccess(await t.request('PUT', '/bot_storage', { storage: { skull: 'Yorick' } }, 'bot'));
    expectSuccess(await t.post('/messages/flags', { messages: [channelMsg, dm], op: 'add', flag: 'read' }, 'cordelia'));
  });
  afterAll(async () => {
    await t?.close();
    await target?.close();
  });

  it('a public export leaves out private channels and direct messages', async () => {
    const { gz } = await runExport(t, 1);
    const files = new Map(readTarGz(gz).map((e) => [e.name.replace(/^[^/]+\//, ''), e.data]));
    const msgs = JSON.parse(files.get('messages-000001.json')!.toString());
    const ids = msgs.zerver_message.map((m: any) => m.id);
    expect(ids).toContain(channelMsg);
    expect(ids).not.toContain(privateMsg);
    expect(ids).not.toContain(dm);
    const realm = JSON.parse(files.get('realm.json')!.toString());
    expect(realm.zerver_userprofile.every((u: any) => !('api_key' in u) && !('password_hash' in u) && !('password' in u))).toBe(true);
    // Everyone stays a working account, without private data: no alert words, snippets, muting.
    expect(realm.zerver_userprofile_mirrordummy).toEqual([]);
    expect([realm.zerver_alertword, realm.zerver_savedsnippet, realm.zerver_muteduser, realm.zerver_navigationview, realm.zerver_botstoragedata]).toEqual([[], [], [], [], []]);
    const attachments = JSON.parse(files.get('attachment.json')!.toString());
    expect(attachments.zerver_attachment.map((a: any) => [a.file_name, a.messages.length === 1 && ids.includes(a.messages[0])])).toEqual([['notes.txt', true], ['red.png', true]]);
    expect(attachments.zerver_imageattachment.map((i: any) => [i.original_width_px, i.original_height_px, i.frames])).toEqual([[300, 200, 1]]);
    expect(Object.keys(attachments.zerver_attachment[0]).sort()).toEqual(['content_type', 'create_time', 'file_name', 'id', 'is_realm_public', 'messages', 'owner', 'path_id', 'realm', 'scheduled_messages', 'size']);
  });

  it('a full export holds private data of consenting users only', async () => {
    await t.patch('/settings', { allow_private_data_export: true }, 'othello');
    const { gz } = await runExport(t, 2);
    const files = new Map(readTarGz(gz).map((e) => [e.name.replace(/^[^/]+\//, ''), e.data]));
    const msgs = JSON.parse(files.get('messages-000001.json')!.toString());
    const ids = msgs.zerver_message.map((m: any) => m.id);
    expect(ids).toContain(privateMsg);
    expect(ids).not.toContain(dm); // hamlet and cordelia did not consent
    const privRows = msgs.zerver_usermessage.filter((um: any) => um.message === privateMsg).map((um: any) => um.user_profile);
    expect(privRows).toEqual([t.users.othello.id]);
    // Zulip's rules for the others: mirror dummies (deactivated), default settings, scrubbed subscriptions, no private tables.
    const realm = JSON.parse(files.get('realm.json')!.toString());
    expect(realm.zerver_userprofile.map((u: any) => u.id)).toEqual([t.users.othello.id]);
    const hamlet = realm.zerver_userprofile_mirrordummy.find((u: any) => u.id === t.users.hamlet.id);
    expect([hamlet.is_mirror_dummy, hamlet.is_active, hamlet.delivery_email]).toEqual([true, false, 'hamlet@zulip.com']);
    expect(realm.zerver_alertword).toEqual([]);
    expect(realm.zerver_usertopic.map((u: any) => u.user_profile)).toEqual([t.users.othello.id]); // followed on sending
    expect(realm.zerver_muteduser).toEqual([]);
    expect(realm.zerver_savedsnippet).toEqual([]);
    const denmarkRecipient = realm.zerver_stream.find((c: any) => c.name === 'Denmark').recipient;
    const cordeliaSub = realm.zerver_subscription.find((x: any) => x.user_profile === t.users.cordelia.id && x.recipient === denmarkRecipient);
    expect(cordeliaSub).toMatchObject({ is_muted: false, pin_to_top: false, desktop_notifications: null });
    await t.patch('/settings', { allow_private_data_export: false }, 'othello');
  });

  it('imports into an empty database with the same API answers', async () => {
    for (const who of HUMANS) await t.patch('/settings', { allow_private_data_export: true }, who);
    const { gz } = await runExport(t, 2, 'owner');
    const summary = await importRealm(target.app.ctx, gz);
    expect(summary.realmId).toBe(t.realmId);

    const keys = new Map<number, string>();
    for (const u of await target.app.ctx.db.selectFrom('users').select(['id', 'delivery_email', 'api_key', 'password_hash']).execute()) {
      keys.set(u.id, basicAuth({ email: u.delivery_email, apiKey: u.api_key }));
      expect(u.password_hash).toBeNull();
    }
    const ask = async (app: App, auth: string, url: string): Promise<any> => {
      const res = await app.http.inject({ method: 'GET', url: '/api/v1' + url, headers: { authorization: auth } });
      return JSON.parse(res.body);
    };
    const same = async (who: FixtureName, url: string): Promise<void> => {
      const before = await ask(t.app, basicAuth(t.users[who]), url);
      const after = await ask(target.app, keys.get(t.users[who].id)!, url);
      expect(before.result).toBe('success');
      expect({ url, who, body: after }).toEqual({ url, who, body: before });
    };
    const narrow = encodeURIComponent(JSON.stringify([]));
    for (const who of HUMANS) {
      await same(who, '/users');
      await same(who, '/users/me/subscriptions');
      await same(who, `/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}`);
      await same(who, '/streams');
    }
    // The whole /register state, but for what a queue makes fresh and what is not carried (README).
    const VOLATILE = ['queue_id', 'last_event_id', 'server_timestamp', 'presences', 'presence_last_update_id', 'realm_presence_disabled'];
    const register = async (app: App, auth: string): Promise<any> => {
      const res = await app.http.inject({ method: 'POST', url: '/api/v1/register', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
      // API keys are new after an import (as after Zulip's).
      const body = JSON.parse(res.body.replace(/"api_key":"[A-Za-z0-9]+"/g, '"api_key":"(new)"'));
      for (const k of VOLATILE) delete body[k];
      return body;
    };
    for (const who of HUMANS) {
      const before = await register(t.app, basicAuth(t.users[who]));
      const after = await register(target.app, keys.get(t.users[who].id)!);
      for (const k of Object.keys(before)) expect({ who, k, v: after[k] }).toEqual({ who, k, v: before[k] });
      expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    }
    const reg = async (app: App, auth: string): Promise<any> => {
      const res = await app.http.inject({ method: 'POST', url: '/api/v1/register', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'fetch_event_types=%5B%22realm_user%22%5D' });
      return JSON.parse(res.body).cross_realm_bots;
    };
    const botKey = await target.app.ctx.db.selectFrom('users').select(['delivery_email', 'api_key']).where('id', '=', t.users.bot.id).executeTakeFirstOrThrow();
    expect(await ask(target.app, basicAuth({ email: botKey.delivery_email, apiKey: botKey.api_key }), '/bot_storage')).toEqual(await ask(t.app, basicAuth(t.users.bot), '/bot_storage'));
    expect((await ask(t.app, basicAuth(t.users.bot), '/bot_storage')).storage).toEqual({ skull: 'Yorick' });
    const bots = await reg(t.app, basicAuth(t.users.hamlet));
    expect(bots.length).toBe(2);
    expect(await reg(target.app, keys.get(t.users.hamlet.id)!)).toEqual(bots);
    await same('iago', '/user_groups');
    await same('hamlet', '/attachments');
    await same('owner', '/realm/emoji');
    // The upload is there, for the same people.
    const path = uploadUrl.replace(/^https?:\/\/[^/]+/, '');
    const got = await target.app.http.inject({ method: 'GET', url: path, headers: { authorization: keys.get(t.users.cordelia.id)! } });
    expect([got.statusCode, got.body]).toEqual([200, 'to be or not to be']);
    // Avatars and custom emoji images are served from the imported organization.
    for (const url of [String((await ask(t.app, basicAuth(t.users.hamlet), '/users/me')).avatar_url), String((await ask(t.app, basicAuth(t.users.owner), '/realm/emoji')).emoji[Object.keys((await ask(t.app, basicAuth(t.users.owner), '/realm/emoji')).emoji)[0]!].source_url)]) {
      const src = await t.app.http.inject({ method: 'GET', url, headers: { authorization: basicAuth(t.users.hamlet) } });
      const dst = await target.app.http.inject({ method: 'GET', url, headers: { authorization: keys.get(t.users.hamlet.id)! } });
      expect(url).toMatch(/^\/user_avatars\//);
      expect([dst.statusCode, dst.rawPayload.equals(src.rawPayload)]).toEqual([200, true]);
    }
    // Thumbnails are made again from the imported originals.
    const thumbUrl = `/user_uploads/thumbnail/${imagePath}/${SERVER_THUMBNAIL_FORMATS[0]!.name}`;
    const thumbSrc = await t.app.http.inject({ method: 'GET', url: thumbUrl, headers: { authorization: basicAuth(t.users.hamlet) } });
    const thumbDst = await target.app.http.inject({ method: 'GET', url: thumbUrl, headers: { authorization: keys.get(t.users.hamlet.id)! } });
    expect([thumbSrc.statusCode, thumbDst.statusCode, thumbDst.headers['content-type']]).toEqual([200, 200, 'image/webp']);
    // New sends continue after the imported ids.
    const sent = await target.app.http.inject({ method: 'POST', url: '/api/v1/messages', headers: { authorization: keys.get(t.users.hamlet.id)!, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'type=stream&to=Denmark&topic=castle&content=after' });
    expect(JSON.parse(sent.body).id).toBeGreaterThan(dm);
  });

  it('refuses a second import and a malformed tarball, writing nothing', async () => {
    const { gz } = await runExport(t, 1, 'owner');
    const before = await tableCounts(target.app);
    await expect(importRealm(target.app.ctx, gz)).rejects.toThrow(new ImportError('the database already holds an organization: import needs an empty database (a new PARLEY_DATABASE_URL or data directory)'));
    expect(await tableCounts(target.app)).toEqual(before);

    const empty = await emptyTarget();
    try {
      const zero = await tableCounts(empty.app);
      await expect(importRealm(empty.app.ctx, Buffer.from('not a tarball'))).rejects.toThrow(/^malformed export: not a gzip file/);
      await expect(importRealm(empty.app.ctx, gzipSync(Buffer.alloc(1024, 7)))).rejects.toThrow('malformed export: not a tar archive (bad header checksum)');
      // A well-formed tarball whose messages point at a user that is not there: fails inside the transaction.
      const entries = readTarGz(gz);
      const broken = entries.map((e) => {
        if (!e.name.endsWith('messages-000001.json')) return e;
        const m = JSON.parse(e.data.toString());
        m.zerver_message[0].sender = 999999;
        return { name: e.name, data: Buffer.from(JSON.stringify(m)) };
      });
      await expect(importRealm(empty.app.ctx, writeTarGz(broken))).rejects.toThrow(/^import failed, nothing was written: /);
      expect(await tableCounts(empty.app)).toEqual(zero);
      const noRealm = entries.filter((e) => !e.name.endsWith('realm.json'));
      await expect(importRealm(empty.app.ctx, writeTarGz(noRealm))).rejects.toThrow('malformed export: no realm.json in the tarball');
      expect(await tableCounts(empty.app)).toEqual(zero);
    } finally {
      await empty.close();
    }
  });
});

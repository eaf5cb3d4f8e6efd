import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRealmEmojiReaction, customEmojiByName, realmEmojiDataForName } from '../../src/domain/access/realm-emoji.js';
import { expectStateConsistent, getEvents, registerQueue, withoutIds } from '../support/events.js';
import { realmSetting } from '../support/channels.js';
import { expectError, expectSuccess, startTestServer, type FixtureName, type Res, type TestServer } from '../support/server.js';
import { multipartRequest, pngBombHeader, pngImage, type FilePart } from '../support/uploads.js';

let t: TestServer;
let png: Buffer;
beforeAll(async () => {
  t = await startTestServer();
  png = await pngImage(120, 90);
});
afterAll(async () => t.close());

const ALL: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot'];
const allIds = () => ALL.map((n) => t.users[n].id).sort((a, b) => a - b);
const file = (data: Buffer, filename = 'img.png', contentType = 'image/png'): FilePart => ({ field: 'f1', filename, contentType, data });
const upload = (name: string, files: FilePart[], as: FixtureName = 'hamlet') => multipartRequest(t, 'POST', `/realm/emoji/${name}`, files, {}, as);
const list = async () => expectSuccess(await t.get('/realm/emoji', {}, 'cordelia')).emoji;

async function snapshot(): Promise<unknown> {
  return t.app.ctx.db.selectFrom('realm_emoji').selectAll().orderBy('id').execute();
}

/** The exact error, nothing written, no event. */
async function refused(fn: () => Promise<Res>, status: number, code: string, msg: string): Promise<void> {
  const before = await snapshot();
  let res!: Res;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, status, code, msg);
  expect(deliveries).toEqual([]);
  expect(await snapshot()).toEqual(before);
}

describe('custom emoji: upload', () => {
  it('a member uploads one: a 64x64 image served from source_url, the whole set sent to every active user', async () => {
    expect(await list()).toEqual({});
    let res!: Res;
    const deliveries = await t.captureEvents(async () => {
      res = await upload('green_tick', [file(png)]);
    });
    expect(res.body).toEqual({ result: 'success', msg: '' });
    const row = (await t.app.ctx.db.selectFrom('realm_emoji').selectAll().executeTakeFirstOrThrow());
    const info = {
      id: String(row.id),
      name: 'green_tick',
      source_url: `/user_avatars/${t.realmId}/emoji/images/${row.file_name}`,
      deactivated: false,
      author_id: t.users.hamlet.id,
      still_url: null,
    };
    expect(row.file_name).toMatch(/^[0-9a-f]{16}\.png$/);
    expect(deliveries.map((d) => ({ event: d.event, userIds: [...d.userIds].sort((a, b) => a - b) }))).toEqual([
      // The hint is what clients with individual_emoji_changes receive instead (mobile-events.test.ts).
      { event: { type: 'realm_emoji', op: 'update', realm_emoji: { [info.id]: info }, __individual: { type: 'realm_emoji', op: 'add', emoji: info } }, userIds: allIds() },
    ]);
    expect(await list()).toEqual({ [info.id]: info });
    const img = await t.app.http.inject({ method: 'GET', url: info.source_url });
    expect(img.statusCode).toBe(200);
    expect(img.headers['content-type']).toBe('image/png');
    const meta = await sharp(img.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 64, 64]);
    expect((await t.app.http.inject({ method: 'GET', url: `/user_avatars/${t.realmId}/emoji/images/0000000000000000.png` })).statusCode).toBe(404);
    expect((await t.app.http.inject({ method: 'GET', url: `/user_avatars/${t.realmId}/emoji/images/..%2F..%2Fparley.sqlite3` })).statusCode).toBe(404);
  });

  it('names: stripped, spaces become underscores; invalid ones refused with Zulip\'s messages', async () => {
    expect((await upload('my%20emoji', [file(png)])).body).toEqual({ result: 'success', msg: '' });
    expect(Object.values(await list()).map((e: any) => e.name)).toContain('my_emoji');
    const bad = 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.';
    await refused(() => upload('my_em*oji', [file(png)]), 400, 'BAD_REQUEST', bad);
    await refused(() => upload('my/emoji/with/forward/slash/', [file(png)]), 400, 'BAD_REQUEST', bad);
    await refused(() => upload('my_EMoji', [file(png)]), 400, 'BAD_REQUEST', bad);
    await refused(() => upload('my_emoji_', [file(png)]), 400, 'BAD_REQUEST', 'Emoji names must end with either a letter or digit.');
    await refused(() => upload('%20', [file(png)]), 400, 'BAD_REQUEST', 'Emoji name is missing');
  });

  it('who may add: not guests or bots; the can_add_custom_emoji_group setting; built-in names only by administrators', async () => {
    await refused(() => upload('guest_emoji', [file(png)], 'polonius'), 400, 'UNAUTHORIZED_PRINCIPAL', 'Not allowed for guest users');
    await refused(() => upload('bot_emoji', [file(png)], 'bot'), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    await realmSetting(t, 'can_add_custom_emoji_group', 'role:administrators');
    await refused(() => upload('member_emoji', [file(png)], 'hamlet'), 400, 'BAD_REQUEST', 'Insufficient permission');
    expectSuccess(await upload('admin_emoji', [file(png)], 'iago'));
    await realmSetting(t, 'can_add_custom_emoji_group', 'role:members');
    await refused(() => upload('laughing', [file(png)], 'othello'), 400, 'BAD_REQUEST', 'Only administrators can override default emoji.');
    expectSuccess(await upload('smile', [file(png)], 'iago'));
  });

  it('one file, within 5 MiB, an image by its content', async () => {
    await refused(() => upload('green_tick', [file(png)]), 400, 'BAD_REQUEST', 'A custom emoji with this name already exists.');
    await refused(() => upload('two_files', [file(png), { ...file(png), field: 'f2' }]), 400, 'BAD_REQUEST', 'You must upload exactly one file.');
    await refused(() => upload('no_file', []), 400, 'BAD_REQUEST', 'You must upload exactly one file.');
    await refused(() => upload('too_big', [file(Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)]))]), 400, 'BAD_REQUEST', 'Uploaded file is larger than the allowed limit of 5 MiB');
    const tif = await sharp(png).tiff().toBuffer();
    await refused(() => upload('a_tif', [file(tif, 'img.png', 'image/png')]), 400, 'BAD_IMAGE', 'Invalid image format');
    await refused(() => upload('not_image', [file(Buffer.from('just some text, not an image'), 'x.png')]), 400, 'BAD_IMAGE', 'Could not decode image; did you upload an image file?');
    await refused(() => upload('svg', [file(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'), 'x.svg', 'image/svg+xml')]), 400, 'BAD_IMAGE', 'Invalid image format');
    await refused(() => upload('pixel_flood', [file(pngBombHeader(20000, 20000))]), 400, 'BAD_IMAGE', 'Image size exceeds limit.');
  });

  it('animated GIFs stay animated, with a still PNG of the first frame', async () => {
    const a = await pngImage(100, 80, '#ff0000');
    const b = await pngImage(100, 80, '#00ff00');
    const gif = await sharp([a, b], { join: { animated: true } }).gif().toBuffer();
    expectSuccess(await upload('party_parrot', [file(gif, 'parrot.gif', 'image/gif')]));
    const e = Object.values(await list()).find((x: any) => x.name === 'party_parrot') as any;
    expect(e.source_url).toMatch(new RegExp(`^/user_avatars/${t.realmId}/emoji/images/[0-9a-f]{16}\\.gif$`));
    expect(e.still_url).toBe(e.source_url.replace('/images/', '/images/still/').replace('.gif', '.png'));
    const moving = await t.app.http.inject({ method: 'GET', url: e.source_url });
    expect(moving.headers['content-type']).toBe('image/gif');
    const m = await sharp(moving.rawPayload, { animated: true }).metadata();
    expect([m.pages, m.width, m.pageHeight]).toEqual([2, 64, 64]);
    const still = await t.app.http.inject({ method: 'GET', url: e.still_url });
    expect(still.headers['content-type']).toBe('image/png');
    expect((await sharp(still.rawPayload).metadata()).pages ?? 1).toBe(1);
  });
});

describe('custom emoji: deactivation', () => {
  it('unknown names 404; only administrators or the author; deactivated emoji stay listed; the name can be reused', async () => {
    await refused(() => t.delete('/realm/emoji/invalid_emoji', {}, 'iago'), 404, 'BAD_REQUEST', "Emoji 'invalid_emoji' does not exist");
    expectSuccess(await upload('othello_emoji', [file(png)], 'othello'));
    await refused(() => t.delete('/realm/emoji/othello_emoji', {}, 'cordelia'), 400, 'BAD_REQUEST', 'Must be an organization administrator or emoji author');
    const deliveries = await t.captureEvents(async () => expect((await t.delete('/realm/emoji/othello_emoji', {}, 'othello')).body).toEqual({ result: 'success', msg: '' }));
    const first = Object.values(await list()).find((x: any) => x.name === 'othello_emoji') as any;
    expect(first.deactivated).toBe(true);
    expect(deliveries).toHaveLength(1);
    expect((deliveries[0]!.event.realm_emoji as any)[first.id]).toEqual(first);
    // Still served: old messages and reactions show it.
    expect((await t.app.http.inject({ method: 'GET', url: first.source_url })).statusCode).toBe(200);
    expectSuccess(await upload('othello_emoji', [file(png)], 'cordelia'));
    expectSuccess(await t.delete('/realm/emoji/othello_emoji', {}, 'iago'));
    const both = Object.values(await list()).filter((x: any) => x.name === 'othello_emoji') as any[];
    expect(both.map((x) => [x.author_id, x.deactivated])).toEqual([
      [t.users.othello.id, true],
      [t.users.cordelia.id, true],
    ]);
    await refused(() => t.delete('/realm/emoji/othello_emoji', {}, 'iago'), 404, 'BAD_REQUEST', "Emoji 'othello_emoji' does not exist");
  });
});

describe('custom emoji: /register and lookups for the renderer and reactions', () => {
  it('realm_emoji in /register; stale state + events == fresh state', async () => {
    const state = await registerQueue(t, 'hamlet', { fetch_event_types: ['realm_emoji'] });
    expect(state.realm_emoji).toEqual(await list());
    const events = await expectStateConsistent(
      t,
      'hamlet',
      async () => {
        expectSuccess(await upload('consistent', [file(png)]));
        expectSuccess(await t.delete('/realm/emoji/green_tick', {}, 'hamlet'));
      },
      { event_types: ['realm_emoji'] },
    );
    expect(events.map((e) => [e.type, e.op])).toEqual([
      ['realm_emoji', 'update'],
      ['realm_emoji', 'update'],
    ]);
  });

  it('the queue gets the event as Zulip sends it', async () => {
    const q = await registerQueue(t, 'cordelia', { event_types: ['realm_emoji'] });
    expectSuccess(await upload('queued', [file(png)]));
    expect(withoutIds(await getEvents(t, 'cordelia', q.queue_id))).toEqual([{ type: 'realm_emoji', op: 'update', realm_emoji: await list() }]);
  });

  it('customEmojiByName, realmEmojiDataForName and checkRealmEmojiReaction', async () => {
    const db = t.app.ctx.db;
    const all = Object.values(await list()) as any[];
    const smile = all.find((e) => e.name === 'smile' && !e.deactivated);
    const gone = all.find((e) => e.name === 'green_tick');
    const ctx = await customEmojiByName(db, t.realmId);
    expect(ctx.byName('smile')).toEqual({ id: smile.id, name: 'smile', sourceUrl: smile.source_url, stillUrl: null });
    expect(ctx.byName('green_tick')).toBeUndefined();
    expect(await realmEmojiDataForName(db, t.realmId, 'smile')).toEqual({ code: smile.id, type: 'realm_emoji' });
    expect(await realmEmojiDataForName(db, t.realmId, 'green_tick')).toBeUndefined();
    await expect(checkRealmEmojiReaction(db, t.realmId, 'smile', smile.id)).resolves.toBeUndefined();
    await expect(checkRealmEmojiReaction(db, t.realmId, 'smile', '99999')).rejects.toThrow('Invalid custom emoji.');
    await expect(checkRealmEmojiReaction(db, t.realmId, 'frown', smile.id)).rejects.toThrow('Invalid custom emoji name.');
    await expect(checkRealmEmojiReaction(db, t.realmId, 'green_tick', gone.id)).rejects.toThrow('This custom emoji has been deactivated.');
    // Cached: a render costs no query once warm; a change is seen at once.
    const before = t.app.ctx.store.stats.queries;
    await customEmojiByName(db, t.realmId);
    expect(t.app.ctx.store.stats.queries).toBe(before);
    expectSuccess(await upload('fresh_one', [file(png)]));
    expect((await customEmojiByName(db, t.realmId)).byName('fresh_one')).toBeDefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { everyone, expectNoChange, mkChannel, plain } from '../support/channels.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

describe('channel folders', () => {
  it('creates (admins), lists, rendered descriptions, add event to every active user', async () => {
    let id = 0;
    const d = plain(await t.captureEvents(async () => {
      id = expectSuccess(await t.post('/channel_folders/create', { name: 'Backend', description: 'Channels for **backend** discussions' }, 'iago')).channel_folder_id;
    }));
    const folder = {
      id,
      name: 'Backend',
      description: 'Channels for **backend** discussions',
      rendered_description: '<p>Channels for <strong>backend</strong> discussions</p>',
      creator_id: t.users.iago.id,
      date_created: expect.any(Number),
      is_archived: false,
      order: id,
    };
    expect(d).toEqual([{ event: { type: 'channel_folder', op: 'add', channel_folder: folder }, userIds: everyone(t) }]);
    expect(expectSuccess(await t.get('/channel_folders', {}, 'polonius')).channel_folders).toEqual([folder]);
  });

  it('permission matrix: administrators only', async () => {
    for (const who of ['shiva', 'hamlet', 'polonius', 'bot'] as const) {
      await expectNoChange(t, async () => {
        expectError(await t.post('/channel_folders/create', { name: 'X', description: '' }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
        expectError(await t.patch('/channel_folders/1', { name: 'X' }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
        expectError(await t.patch('/channel_folders', { order: [1] }, who), 400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
      });
    }
    expectSuccess(await t.post('/channel_folders/create', { name: 'By owner', description: '' }, 'owner'));
  });

  it('name rules', async () => {
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ name: '  ', description: '' }, "Channel folder name can't be empty."],
      [{ name: 'backend', description: '' }, 'Channel folder name already in use'],
      [{ name: 'a'.repeat(61), description: '' }, 'name is too long (limit: 60 characters)'],
      [{ name: 'bad\u0000', description: '' }, 'Invalid character in channel folder name, at position 4.'],
      [{ name: 'ok', description: 'd'.repeat(1025) }, 'description is too long (limit: 1024 characters)'],
    ];
    for (const [params, msg] of cases) {
      await expectNoChange(t, async () => expectError(await t.post('/channel_folders/create', params, 'iago'), 400, 'BAD_REQUEST', msg));
    }
    await expectNoChange(t, async () =>
      expectError(await t.post('/channel_folders/create', { name: 'x' }, 'iago'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'description' argument", { var_name: 'description' }),
    );
  });

  it('updates name, description, archived state (one event each); archiving needs an empty folder', async () => {
    const id = expectSuccess(await t.post('/channel_folders/create', { name: 'Frontend', description: 'old' }, 'iago')).channel_folder_id;
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/channel_folders/${id}`, { name: 'Web', description: '*new*' }, 'iago'))));
    expect(d).toEqual([
      { event: { type: 'channel_folder', op: 'update', channel_folder_id: id, data: { name: 'Web' } }, userIds: everyone(t) },
      { event: { type: 'channel_folder', op: 'update', channel_folder_id: id, data: { description: '*new*', rendered_description: '<p><em>new</em></p>' } }, userIds: everyone(t) },
    ]);
    const ch = await mkChannel(t, 'in-folder', { folder_id: id });
    await expectNoChange(t, async () =>
      expectError(await t.patch(`/channel_folders/${id}`, { is_archived: true }, 'iago'), 400, 'BAD_REQUEST', 'You need to remove all the channels from this folder to archive it.'),
    );
    expectSuccess(await t.patch(`/streams/${ch}`, { folder_id: null }, 'iago'));
    const a = plain(await t.captureEvents(async () => expectSuccess(await t.patch(`/channel_folders/${id}`, { is_archived: true }, 'iago'))));
    expect(a).toEqual([{ event: { type: 'channel_folder', op: 'update', channel_folder_id: id, data: { is_archived: true } }, userIds: everyone(t) }]);
    expect(expectSuccess(await t.get('/channel_folders', {}, 'hamlet')).channel_folders.map((f: any) => f.id)).not.toContain(id);
    expect(expectSuccess(await t.get('/channel_folders', { include_archived: true }, 'hamlet')).channel_folders.map((f: any) => f.id)).toContain(id);
    // An archived folder's name is free again.
    expectSuccess(await t.post('/channel_folders/create', { name: 'web', description: '' }, 'iago'));
    expectSuccess(await t.patch(`/channel_folders/${id}`, { description: '' }, 'iago'));
    await expectNoChange(t, async () => {
      expectError(await t.patch('/channel_folders/9999', { name: 'x' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid channel folder ID');
      expectError(await t.patch(`/channel_folders/${id}`, { name: '' }, 'iago'), 400, 'BAD_REQUEST', "Channel folder name can't be empty.");
      expectError(await t.patch(`/channel_folders/${id}`, { is_archived: 'yes' }, 'iago'), 400, 'BAD_REQUEST', 'is_archived is not valid JSON');
    });
    // No change, no event.
    await expectNoChange(t, async () => expectSuccess(await t.patch(`/channel_folders/${id}`, { name: 'Web' }, 'iago')));
  });

  it('reorders with the full list of ids', async () => {
    const all = (expectSuccess(await t.get('/channel_folders', { include_archived: true }, 'iago')).channel_folders as any[]).map((f) => f.id);
    const reversed = [...all].reverse();
    const d = plain(await t.captureEvents(async () => expectSuccess(await t.patch('/channel_folders', { order: reversed }, 'iago'))));
    expect(d).toEqual([{ event: { type: 'channel_folder', op: 'reorder', order: reversed }, userIds: everyone(t) }]);
    expect((expectSuccess(await t.get('/channel_folders', { include_archived: true }, 'iago')).channel_folders as any[]).map((f) => f.id)).toEqual(reversed);
    await expectNoChange(t, async () => {
      expectError(await t.patch('/channel_folders', { order: reversed.slice(1) }, 'iago'), 400, 'BAD_REQUEST', 'Invalid order mapping.');
      expectError(await t.patch('/channel_folders', { order: [...reversed.slice(1), 9999] }, 'iago'), 400, 'BAD_REQUEST', 'Invalid order mapping.');
    });
  });
});

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { plain } from '../support/channels.js';
import { fetchUrl, filesUnder, uploadFile } from '../support/files.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ uploadCleanerIntervalMs: 0 });
  await createChannel(t, 'att', ['hamlet', 'cordelia']);
});
afterAll(async () => t.close());

const spaceUsed = async (): Promise<number> => {
  const { realmUploadSpaceUsed } = await import('../../src/store/attachments.js');
  return realmUploadSpaceUsed(t.app.ctx.db, t.realmId);
};
const storedFiles = () => filesUnder(path.join(t.config.dataDir, 'uploads', 'files'));

describe('attachments', () => {
  it('upload sends attachment add; a message claims it (update); GET /attachments lists it', async () => {
    let url = '';
    const addEvents = await t.captureEvents(async () => {
      url = expectSuccess(await uploadFile(t, 'hamlet', 'a.txt', 'hello', 'text/plain')).url;
    });
    const row = (await t.app.ctx.db.selectFrom('attachments').selectAll().where('path_id', '=', url.replace('/user_uploads/', '')).executeTakeFirstOrThrow());
    const created = row.create_time * 1000;
    expect(plain(addEvents)).toEqual([
      {
        event: { type: 'attachment', op: 'add', attachment: { id: row.id, name: 'a.txt', path_id: row.path_id, size: 5, create_time: created, messages: [] }, upload_space_used: await spaceUsed() },
        userIds: [t.users.hamlet.id],
      },
    ]);
    let msgId = 0;
    const sendEvents = await t.captureEvents(async () => {
      msgId = await sendChannelMessage(t, 'hamlet', 'att', 'files', `[a.txt](${url})`);
    });
    const msg = await t.app.ctx.db.selectFrom('messages').select(['date_sent', 'has_attachment']).where('id', '=', msgId).executeTakeFirstOrThrow();
    expect(msg.has_attachment).toBe(1);
    const expected = { id: row.id, name: 'a.txt', path_id: row.path_id, size: 5, create_time: created, messages: [{ id: msgId, date_sent: msg.date_sent * 1000 }] };
    expect(plain(sendEvents).filter((d) => d.event.type === 'attachment')).toEqual([
      { event: { type: 'attachment', op: 'update', attachment: expected, upload_space_used: await spaceUsed() }, userIds: [t.users.hamlet.id] },
    ]);
    const list = expectSuccess(await t.get('/attachments', {}, 'hamlet'));
    expect(list).toEqual({ result: 'success', msg: '', attachments: [expected], upload_space_used: await spaceUsed() });
    expect(expectSuccess(await t.get('/attachments', {}, 'cordelia')).attachments).toEqual([]);

    // Editing the link away detaches it (detached_uploads) and sends update with no messages.
    const editEvents = await t.captureEvents(async () => {
      const res = expectSuccess(await t.patch(`/messages/${msgId}`, { content: 'no more file' }, 'hamlet'));
      expect(res).toEqual({ result: 'success', msg: '', detached_uploads: [{ ...expected, messages: [] }] });
    });
    expect(plain(editEvents).filter((d) => d.event.type === 'attachment').map((d) => d.event)).toEqual([
      { type: 'attachment', op: 'update', attachment: { ...expected, messages: [] }, upload_space_used: await spaceUsed() },
    ]);
    expect((await fetchUrl(t, url, 'cordelia')).statusCode).toBe(404);
    // Editing it back links it again.
    expectSuccess(await t.patch(`/messages/${msgId}`, { content: `again [a](${url})` }, 'hamlet'));
    expect((await fetchUrl(t, url, 'cordelia')).statusCode).toBe(200);
    // Deleting the message unlinks it.
    const delEvents = await t.captureEvents(async () => expectSuccess(await t.delete(`/messages/${msgId}`, {}, 'hamlet')));
    expect(plain(delEvents).filter((d) => d.event.type === 'attachment').map((d) => d.event)).toEqual([
      { type: 'attachment', op: 'update', attachment: { ...expected, messages: [] }, upload_space_used: await spaceUsed() },
    ]);
    expect((await fetchUrl(t, url, 'cordelia')).statusCode).toBe(404);
    expect((await fetchUrl(t, url, 'hamlet')).statusCode).toBe(200);
  });

  it("linking someone else's upload you cannot read claims nothing and grants nothing", async () => {
    const url = expectSuccess(await uploadFile(t, 'hamlet', 'mine.txt', 'mine', 'text/plain')).url;
    await sendChannelMessage(t, 'othello', 'att', 'steal', `[x](${url})`);
    expect((await fetchUrl(t, url, 'othello')).statusCode).toBe(404);
    expect((await fetchUrl(t, url, 'cordelia')).statusCode).toBe(404);
  });

  it('DELETE /attachments/{id}: owner only, remove event, file gone; others get Invalid attachment', async () => {
    const url = expectSuccess(await uploadFile(t, 'hamlet', 'del.txt', 'bye', 'text/plain')).url;
    const pathId = url.replace('/user_uploads/', '');
    const row = await t.app.ctx.db.selectFrom('attachments').selectAll().where('path_id', '=', pathId).executeTakeFirstOrThrow();
    expect(storedFiles()).toContain(pathId);
    for (const [who, id] of [['cordelia', row.id], ['hamlet', 999999], ['hamlet', 2 ** 40]] as const) {
      const events = await t.captureEvents(async () => expectError(await t.delete(`/attachments/${id}`, {}, who), 400, 'BAD_REQUEST', 'Invalid attachment'));
      expect(events).toEqual([]);
    }
    expect(storedFiles()).toContain(pathId);
    const events = await t.captureEvents(async () => expectSuccess(await t.delete(`/attachments/${row.id}`, {}, 'hamlet')));
    expect(plain(events)).toEqual([{ event: { type: 'attachment', op: 'remove', attachment: { id: row.id }, upload_space_used: await spaceUsed() }, userIds: [t.users.hamlet.id] }]);
    expect(storedFiles()).not.toContain(pathId);
    expect((await fetchUrl(t, url, 'hamlet')).statusCode).toBe(404);
  });

  it('the cleaner removes unclaimed uploads after the grace period, once, and keeps linked ones', async () => {
    const lone = expectSuccess(await uploadFile(t, 'cordelia', 'lone.txt', 'lone', 'text/plain')).url.replace('/user_uploads/', '');
    const used = expectSuccess(await uploadFile(t, 'cordelia', 'used.txt', 'used', 'text/plain')).url;
    await sendChannelMessage(t, 'cordelia', 'att', 'keep', `[u](${used})`);
    const files = t.app.ctx.files;
    // Within the grace period nothing goes.
    expect(await files.clean()).toBe(0);
    const later = Math.floor(Date.now() / 1000) + (t.config.uploadGraceDays + 1) * 86_400;
    const loneRow = await t.app.ctx.db.selectFrom('attachments').select('id').where('path_id', '=', lone).executeTakeFirstOrThrow();
    let counts: number[] = [];
    const events = await t.captureEvents(async () => {
      // Two cleaners at once (as two processes would): each upload is removed exactly once.
      counts = await Promise.all([files.clean(later), files.clean(later)]);
    });
    const removedIds = plain(events).filter((d) => d.event.op === 'remove').map((d) => (d.event.attachment as { id: number }).id);
    expect(removedIds).toContain(loneRow.id);
    expect(new Set(removedIds).size).toBe(removedIds.length);
    expect(counts[0]! + counts[1]!).toBe(removedIds.length);
    expect(storedFiles()).not.toContain(lone);
    expect(storedFiles()).toContain(used.replace('/user_uploads/', '').replace(/%[0-9A-F]{2}/g, decodeURIComponent));
    expect(await files.clean(later)).toBe(0);
  });
});

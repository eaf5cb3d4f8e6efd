import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStateConsistent } from '../support/events.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel } from '../support/messages.js';
import { uploadFile } from '../support/files.js';
import { pngImage } from '../support/uploads.js';

/**
 * Issue 15 through the real /register + GET /events path: `attachment` events
 * (add, update, remove) reach the owner's queue and change no /register key;
 * the rendering_only update_message of a finished thumbnail leaves a stale
 * state plus events equal to a fresh one (the message state keys included).
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ uploadCleanerIntervalMs: 0 });
  await createChannel(t, 'ev-files', ['hamlet', 'cordelia']);
  // The channel's first message exists before the checks (first_message_id is not what is tested here).
  expectSuccess(await t.post('/messages', { type: 'stream', to: 'ev-files', topic: 'x', content: 'first' }, 'hamlet'));
});
afterAll(async () => t.close());

describe('attachment events and /register state', () => {
  it('upload, link, unlink, delete; a thumbnail finishing', async () => {
    for (const params of [{}, { event_types: ['attachment', 'message', 'update_message'] }]) {
      const events = await expectStateConsistent(t, 'hamlet', async () => {
        const up = expectSuccess(await uploadFile(t, 'hamlet', 'e.png', await pngImage(64, 48), 'image/png'));
        const sent = expectSuccess(await t.post('/messages', { type: 'stream', to: 'ev-files', topic: 'x', content: `[e](${up.url})` }, 'hamlet'));
        await t.app.ctx.files.idle();
        expectSuccess(await t.patch(`/messages/${sent.id}`, { content: 'gone' }, 'hamlet'));
        const row = await t.app.ctx.db.selectFrom('attachments').select('id').where('path_id', '=', decodeURIComponent(up.url.slice('/user_uploads/'.length))).executeTakeFirstOrThrow();
        expectSuccess(await t.delete(`/attachments/${row.id}`, {}, 'hamlet'));
      }, params);
      const ops = events.filter((e) => e.type === 'attachment').map((e) => e.op);
      expect(ops).toEqual(['add', 'update', 'update', 'remove']);
    }
  });
});

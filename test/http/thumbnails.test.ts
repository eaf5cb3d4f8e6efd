import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, getMessage, sendChannelMessage } from '../support/messages.js';
import { plain, realmSetting } from '../support/channels.js';
import { fetchUrl, uploadFile } from '../support/files.js';
import { pngBombHeader, pngImage } from '../support/uploads.js';
import type { AttachmentRow } from '../../src/store/attachments.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ uploadCleanerIntervalMs: 0 });
  await createChannel(t, 'pics', ['hamlet', 'cordelia']);
});
afterAll(async () => t.close());

const thumbUrl = (url: string): string => url.replace('/user_uploads/', '/user_uploads/thumbnail/') + '/840x560.webp';

describe('thumbnails and inline images', () => {
  it('/register advertises Zulip\'s thumbnail formats', async () => {
    const reg = expectSuccess(await t.post('/register', { fetch_event_types: JSON.stringify(['realm']) }, 'hamlet'));
    expect(reg.server_thumbnail_formats).toEqual([
      { name: '840x560-anim.webp', max_width: 840, max_height: 560, format: 'webp', animated: true },
      { name: '840x560.webp', max_width: 840, max_height: 560, format: 'webp', animated: false },
    ]);
    expect(reg.max_file_upload_size_mib).toBe(25);
  });

  it('a message linking a thumbnailed image renders Zulip\'s inline image; the thumbnail is a WebP within 840x560', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'big.png', await pngImage(1200, 900), 'image/png'));
    await t.app.ctx.files.idle();
    const id = await sendChannelMessage(t, 'hamlet', 'pics', 'a', `[big.png](${up.url})`);
    const m = await getMessage(t, 'cordelia', id);
    expect(m.content).toBe(
      `<p><a href="${up.url}">big.png</a></p>\n<div class="message_inline_image"><a href="${up.url}" title="big.png"><img data-original-content-type="image/png" data-original-dimensions="1200x900" src="${thumbUrl(up.url)}"></a></div>`,
    );
    const thumb = await fetchUrl(t, thumbUrl(up.url), 'cordelia');
    expect(thumb.statusCode).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/webp');
    expect(await sharp(thumb.rawPayload).metadata()).toMatchObject({ format: 'webp', width: 747, height: 560 });
    // The animated name falls back to the still thumbnail for a still image.
    expect((await fetchUrl(t, thumbUrl(up.url).replace('840x560.webp', '840x560-anim.webp'), 'cordelia')).statusCode).toBe(200);
    // Thumbnails follow the file's access rule.
    expect((await fetchUrl(t, thumbUrl(up.url), 'othello')).statusCode).toBe(200);
    expect((await fetchUrl(t, thumbUrl(up.url), 'polonius')).statusCode).toBe(404);
  });

  it('while the thumbnail is pending: placeholder, then a rendering_only update_message swaps the thumbnail in', async () => {
    const files = t.app.ctx.files;
    const held: AttachmentRow[] = [];
    const schedule = files.scheduleThumbnail.bind(files);
    files.scheduleThumbnail = (row) => void held.push(row);
    let up: { url: string };
    try {
      up = expectSuccess(await uploadFile(t, 'hamlet', 'wait.png', await pngImage(300, 200), 'image/png'));
    } finally {
      files.scheduleThumbnail = schedule;
    }
    const content = `[wait.png](${up.url})`;
    const id = await sendChannelMessage(t, 'hamlet', 'pics', 'b', content);
    const para = `<p><a href="${up.url}">wait.png</a></p>\n`;
    const pending = para + `<div class="message_inline_image"><a href="${up.url}" title="wait.png"><img class="image-loading-placeholder" data-original-dimensions="300x200" src="/static/images/loading/loader-black.svg"></a></div>`;
    expect((await getMessage(t, 'cordelia', id)).content).toBe(pending);
    expect((await fetchUrl(t, thumbUrl(up.url), 'hamlet')).statusCode).toBe(404);
    const events = await t.captureEvents(async () => {
      schedule(held[0]!);
      await files.idle();
    });
    const done = para + `<div class="message_inline_image"><a href="${up.url}" title="wait.png"><img data-original-content-type="image/png" data-original-dimensions="300x200" src="${thumbUrl(up.url)}"></a></div>`;
    const updates = plain(events).filter((d) => d.event.type === 'update_message');
    expect(updates).toEqual([
      {
        event: { type: 'update_message', user_id: null, edit_timestamp: expect.any(Number), message_id: id, message_ids: [id], content, rendered_content: done, rendering_only: true },
        userIds: [t.users.cordelia.id, t.users.hamlet.id].sort((a, b) => a - b),
      },
    ]);
    expect((await getMessage(t, 'cordelia', id)).content).toBe(done);
  });

  it('a thumbnail finishing between render and commit: the send swaps the placeholder itself', async () => {
    const files = t.app.ctx.files;
    const held: AttachmentRow[] = [];
    const schedule = files.scheduleThumbnail.bind(files);
    const refresh = files.refreshPlaceholders.bind(files);
    files.scheduleThumbnail = (row) => void held.push(row);
    let refreshed: number[] = [];
    files.refreshPlaceholders = (id) => void refreshed.push(id);
    let up: { url: string };
    let id = 0;
    try {
      up = expectSuccess(await uploadFile(t, 'hamlet', 'race.png', await pngImage(120, 80), 'image/png'));
      id = await sendChannelMessage(t, 'hamlet', 'pics', 'r', `[race.png](${up.url})`);
    } finally {
      files.scheduleThumbnail = schedule;
      files.refreshPlaceholders = refresh;
    }
    expect(refreshed).toEqual([id]);
    // The thumbnail is made, but (as in the race) its finishing step found no message yet.
    await t.app.ctx.db.deleteFrom('attachment_messages').where('message_id', '=', id).execute();
    schedule(held[0]!);
    await files.idle();
    await t.app.ctx.db.insertInto('attachment_messages').values({ attachment_id: held[0]!.id, message_id: id }).execute();
    expect((await getMessage(t, 'cordelia', id)).content).toContain('image-loading-placeholder');
    refresh(id);
    await files.idle();
    const content = (await getMessage(t, 'cordelia', id)).content;
    expect(content).not.toContain('image-loading-placeholder');
    expect(content).toContain(`src="${thumbUrl(up.url)}"`);
    refreshed = [];
  });

  it('a decompression bomb is stored but never decoded, thumbnailed or previewed; no 5xx', async () => {
    const res = await uploadFile(t, 'hamlet', 'bomb.png', pngBombHeader(100_000, 100_000), 'image/png');
    const up = expectSuccess(res);
    await t.app.ctx.files.idle();
    const row = await t.app.ctx.db.selectFrom('attachments').selectAll().where('path_id', '=', decodeURIComponent(up.url.slice('/user_uploads/'.length))).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ image_width: 100_000, image_height: 100_000, thumbnail_state: 3 });
    const id = await sendChannelMessage(t, 'hamlet', 'pics', 'c', `[bomb.png](${up.url})`);
    expect((await getMessage(t, 'cordelia', id)).content).toBe(`<p><a href="${up.url}">bomb.png</a></p>`);
    expect((await fetchUrl(t, thumbUrl(up.url), 'hamlet')).statusCode).toBe(404);
  });

  it('inline_image_preview off: links only; YouTube and external images follow Zulip\'s forms when on', async () => {
    const up = expectSuccess(await uploadFile(t, 'hamlet', 'off.png', await pngImage(50, 40), 'image/png'));
    await t.app.ctx.files.idle();
    await realmSetting(t, 'inline_image_preview', false);
    try {
      const id = await sendChannelMessage(t, 'hamlet', 'pics', 'd', `[off.png](${up.url})`);
      expect((await getMessage(t, 'cordelia', id)).content).toBe(`<p><a href="${up.url}">off.png</a></p>`);
    } finally {
      await realmSetting(t, 'inline_image_preview', true);
    }
    const yt = await sendChannelMessage(t, 'hamlet', 'pics', 'd', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ');
    expect((await getMessage(t, 'cordelia', yt)).content).toBe(
      '<p><a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ">https://www.youtube.com/watch?v=dQw4w9WgXcQ</a></p>\n<div class="youtube-video message_inline_image"><a data-id="dQw4w9WgXcQ" href="https://www.youtube.com/watch?v=dQw4w9WgXcQ"><img src="https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg"></a></div>',
    );
    const ext = await sendChannelMessage(t, 'hamlet', 'pics', 'd', 'https://example.com/cat.png');
    expect((await getMessage(t, 'cordelia', ext)).content).toBe(
      '<div class="message_inline_image"><a href="https://example.com/cat.png"><img src="https://example.com/cat.png"></a></div>',
    );
  });
});

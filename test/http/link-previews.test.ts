import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress, safeFetchPage } from '../../src/net/safe-fetch.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, getMessage, sendChannelMessage } from '../support/messages.js';
import { plain, realmSetting } from '../support/channels.js';

/** A page server on loopback that records every request it gets. */
let pages: http.Server;
let base = '';
const hits: string[] = [];
beforeAll(async () => {
  pages = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/article') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><head><title>Fallback</title><meta property="og:title" content="An &amp; article"><meta property="og:description" content="About &lt;things&gt;"><meta property="og:image" content="/img.png"></head><body>x</body></html>');
    } else if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<title>big</title>' + 'x'.repeat(5_000_000));
    } else if (req.url === '/slow') {
      // never answers
    } else if (req.url === '/redirect-inside') {
      res.writeHead(302, { location: 'http://127.0.0.2:1/secret' });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
});
afterAll(async () => {
  pages.closeAllConnections();
  await new Promise((r) => pages.close(r));
});

const loopbackOnly = (ip: string) => ip === '127.0.0.1';

describe('safe fetching', () => {
  it('only public unicast addresses are allowed', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'fe80::1', 'fd00::1', 'ff02::1']) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e']) expect(isPublicAddress(ip), ip).toBe(true);
  });

  it('refuses loopback by address and by name, before connecting', async () => {
    const before = hits.length;
    await expect(safeFetchPage(`${base}/article`, { timeoutMs: 2000, maxBytes: 10_000 })).rejects.toThrow(/non-public|not a public/);
    await expect(safeFetchPage(base.replace('127.0.0.1', 'localhost') + '/article', { timeoutMs: 2000, maxBytes: 10_000 })).rejects.toThrow(/not a public|EREFUSED|ENOTFOUND/);
    await expect(safeFetchPage('http://[::1]:1/x', { timeoutMs: 2000, maxBytes: 10_000 })).rejects.toThrow(/non-public/);
    await expect(safeFetchPage('file:///etc/passwd', { timeoutMs: 2000, maxBytes: 10_000 })).rejects.toThrow(/only http/);
    expect(hits.length).toBe(before);
  });

  it('re-checks redirect targets, reads at most maxBytes, and gives up at the deadline', async () => {
    await expect(safeFetchPage(`${base}/redirect-inside`, { timeoutMs: 2000, maxBytes: 10_000, allowAddress: loopbackOnly })).rejects.toThrow(/non-public/);
    const big = await safeFetchPage(`${base}/huge`, { timeoutMs: 5000, maxBytes: 4096, allowAddress: loopbackOnly });
    expect(big.body.length).toBeLessThanOrEqual(4096);
    const started = Date.now();
    await expect(safeFetchPage(`${base}/slow`, { timeoutMs: 300, maxBytes: 4096, allowAddress: loopbackOnly })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('message embeds', () => {
  let off: TestServer;
  let on: TestServer;
  beforeAll(async () => {
    off = await startTestServer();
    on = await startTestServer({ linkPreviews: true });
    on.app.ctx.files.embedLimits = { allowAddress: loopbackOnly };
    for (const t of [off, on]) await createChannel(t, 'links', ['hamlet', 'cordelia']);
  });
  afterAll(async () => {
    await off?.close();
    await on?.close();
  });

  it('off by default: nothing is fetched, even with the realm setting on', async () => {
    expect(expectSuccess(await off.post('/register', { fetch_event_types: JSON.stringify(['realm']) }, 'hamlet')).server_inline_url_embed_preview).toBe(false);
    await realmSetting(off, 'inline_url_embed_preview', true);
    const before = hits.length;
    const id = await sendChannelMessage(off, 'hamlet', 'links', 't', `${base}/article`);
    await off.app.ctx.files.idle();
    expect(hits.length).toBe(before);
    expect((await getMessage(off, 'cordelia', id)).content).not.toContain('message_embed');
  });

  it('server and realm on: the page is fetched after the send and its embed arrives as a rendering_only update', async () => {
    // Realm setting still off: no fetch.
    const before = hits.length;
    await sendChannelMessage(on, 'hamlet', 'links', 't', `${base}/article`);
    await on.app.ctx.files.idle();
    expect(hits.length).toBe(before);
    await realmSetting(on, 'inline_url_embed_preview', true);
    let id = 0;
    const events = await on.captureEvents(async () => {
      id = await sendChannelMessage(on, 'hamlet', 'links', 't', `${base}/article`);
      await on.app.ctx.files.idle();
    });
    const link = `<p><a href="${base}/article">${base}/article</a></p>`;
    const embed = `<div class="message_embed"><a class="message_embed_image" href="${base}/article" style="background-image: url(&quot;${base}/img.png&quot;)"></a><div class="data-container"><div class="message_embed_title"><a href="${base}/article" title="An &amp; article">An &amp; article</a></div><div class="message_embed_description">About &lt;things&gt;</div></div></div>`;
    expect((await getMessage(on, 'cordelia', id)).content).toBe(`${link}\n${embed}`);
    const update = plain(events).find((d) => d.event.type === 'update_message');
    expect(update?.event).toMatchObject({ user_id: null, message_id: id, rendering_only: true, rendered_content: `${link}\n${embed}` });
  });
});

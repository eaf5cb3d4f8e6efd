#!/usr/bin/env node
// W1, the web app in Chromium (issue 14). Not part of npm test; run: npm run bench:web
//   1. first load: gzipped JS + CSS of the app's first page (from the build's manifest,
//      checked against what the browser actually fetched);
//   2. time from navigation to the feed showing the newest message, signed in, cold cache,
//      in a realm with 10,000 messages, 200 users and 50 channels (median and max of 5);
//   3. a message sent in one browser -> shown in the other: p50/p95/max over 50 sends.
// Targets (issue 14): <= 150 KB, <= 1 s, p95 <= 150 ms.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, record, startParley } from './lib.mjs';
import { bulkInsertChannelMessages } from './messages-lib.mjs';
import { call, createUser, launchChromium, ok, sessionCookies } from './web-lib.mjs';

const USERS = Number(process.env.W1_USERS ?? 200);
const CHANNELS = Number(process.env.W1_CHANNELS ?? 50);
const MESSAGES = Number(process.env.W1_MESSAGES ?? 10_000);
const SUBS_PER_CHANNEL = 40;
const SENDS = Number(process.env.W1_SENDS ?? 50);
const LOADS = Number(process.env.W1_LOADS ?? 5);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const ms = (x) => `${x.toFixed(0)} ms`;

async function seed(server) {
  const t0 = Date.now();
  const owner = await ok(call(server.base, server.auth, 'GET', '/users/me'), 'me');
  const users = [];
  // Users in parallel batches (each is one API call plus a key fetch).
  for (let i = 1; i < USERS; i += 20) {
    const batch = [];
    for (let j = i; j < Math.min(USERS, i + 20); j++) batch.push(createUser(server, `user${j}@example.com`, `User ${j}`));
    users.push(...(await Promise.all(batch)));
  }
  const reader = users[0];
  const channels = [];
  for (let c = 0; c < CHANNELS; c++) {
    // The owner and the reader are in every channel; 38 others rotate.
    const subs = [owner.user_id, reader.id];
    for (let k = 0; k < SUBS_PER_CHANNEL - 2; k++) subs.push(users[1 + ((c * 7 + k) % (users.length - 1))].id);
    const id = (await ok(call(server.base, server.auth, 'POST', '/channels/create', { name: `channel ${c}`, subscribers: [...new Set(subs)] }), 'channel')).id;
    channels.push({ id, subs: [...new Set(subs)] });
  }
  const per = Math.floor(MESSAGES / CHANNELS);
  for (const [c, ch] of channels.entries()) {
    await bulkInsertChannelMessages(server, { channelId: ch.id, senderId: ch.subs[2 + (c % (ch.subs.length - 2))], readerIds: ch.subs, count: per, batch: 200, topics: 10 });
  }
  // The newest message, sent through the API so that it is the one the feed must show last.
  const newest = (await ok(call(server.base, server.auth, 'POST', '/messages', { type: 'stream', to: String(channels[0].id), topic: 'topic 0', content: 'the newest message' }), 'send')).id;
  console.log(`seeded ${USERS} users, ${CHANNELS} channels, ${per * CHANNELS + 1} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { owner, reader, newest, channels };
}

async function main() {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/web/manifest.json'), 'utf8'));
  const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast' });
  const browser = await launchChromium();
  try {
    const { reader, newest, channels } = await seed(server);
    const ownerCookies = await sessionCookies(server.base, 'owner@example.com', 'bench-Owner-pass-1');
    const readerCookies = await sessionCookies(server.base, reader.email, reader.password);

    // 1 + 2: cold loads of the combined feed, signed in.
    const loads = [];
    const breakdown = [];
    let transferred = 0;
    for (let i = 0; i < LOADS; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await ctx.addCookies(readerCookies);
      const page = await ctx.newPage();
      let bytes = 0;
      page.on('response', async (r) => {
        if (/\/static\/app-[^/]+\.(js|css)$/.test(r.url())) bytes += Number((await r.allHeaders())['content-length'] ?? 0);
      });
      const t0 = Date.now();
      await page.goto(`${server.base}/#feed`);
      await page.locator(`[data-testid="message"][data-message-id="${newest}"]`).waitFor({ timeout: 30_000 });
      loads.push(Date.now() - t0);
      if (i === 0) transferred = bytes;
      // Where the time went: the page and its assets, then /json/register and the first /json/messages page.
      const parts = await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const res = performance.getEntriesByType('resource');
        const dur = (re) => Math.round(res.find((e) => re.test(e.name))?.duration ?? NaN);
        const json = res.filter((e) => e.name.includes('/json/')).map((e) => `${new URL(e.name).pathname} ${Math.round(e.startTime)}-${Math.round(e.responseEnd)}`);
        return { domContentLoaded: Math.round(nav.domContentLoadedEventEnd), register: dur(/\/json\/register/), messages: dur(/\/json\/messages\?/), shown: Math.round(performance.now()), json };
      });
      breakdown.push(parts);
      await ctx.close();
    }

    // 3: two browsers; the owner sends through the app's own API path (/json/messages with the CSRF token), the reader's feed shows it.
    const a = await browser.newContext();
    await a.addCookies(ownerCookies);
    const b = await browser.newContext();
    await b.addCookies(readerCookies);
    const pa = await a.newPage();
    const pb = await b.newPage();
    await pa.goto(`${server.base}/#feed`);
    await pb.goto(`${server.base}/#feed`);
    await pa.getByTestId('feed').waitFor();
    await pb.locator(`[data-testid="message"][data-message-id="${newest}"]`).waitFor({ timeout: 30_000 });
    // The reader's page notes when each marked message appears (same machine clock as the sender's Date.now()).
    await pb.evaluate(() => {
      const seen = (window.__seen = {});
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('[data-testid="message-content"]')) {
          const m = /lat-(\d+)/.exec(el.textContent ?? '');
          if (m && !(m[1] in seen)) seen[m[1]] = Date.now();
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    const sent = {};
    for (let i = 0; i < SENDS; i++) {
      sent[i] = await pa.evaluate(
        async ({ i, stream }) => {
          const csrf = /(?:^|;\s*)csrftoken=([^;]*)/.exec(document.cookie)[1];
          const t = Date.now();
          const body = new URLSearchParams({ type: 'stream', to: String(stream), topic: 'latency', content: `lat-${i}` });
          const r = await fetch('/json/messages', { method: 'POST', headers: { 'X-CSRFToken': csrf }, body });
          if (!r.ok) throw new Error(await r.text());
          return t;
        },
        { i, stream: channels[0].id },
      );
      await pb.waitForFunction((i) => i in window.__seen, i, { timeout: 10_000 });
      await pa.waitForTimeout(50);
    }
    const seen = await pb.evaluate(() => window.__seen);
    const lat = Object.keys(sent).map((i) => seen[i] - sent[i]);

    const figures = {
      first_load_gzip_kb: +(manifest.firstLoad.gzip / 1024).toFixed(1),
      first_load_brotli_kb: +(manifest.firstLoad.brotli / 1024).toFixed(1),
      first_load_transferred_kb: +(transferred / 1024).toFixed(1),
      feed_ready_median_ms: pct(loads, 50),
      feed_ready_max_ms: Math.max(...loads),
      send_to_seen_p50_ms: pct(lat, 50),
      send_to_seen_p95_ms: pct(lat, 95),
      send_to_seen_max_ms: Math.max(...lat),
      realm: `${USERS} users, ${CHANNELS} channels, ${MESSAGES} messages`,
      // The machine's load while measuring: figures on a shared, oversubscribed machine are upper bounds.
      load_average: os.loadavg().map((x) => +x.toFixed(1)),
    };
    console.log(`first load (JS + CSS): gzip ${figures.first_load_gzip_kb} KB, brotli ${figures.first_load_brotli_kb} KB (browser fetched ${figures.first_load_transferred_kb} KB)   target <= 150 KB`);
    console.log(`navigation -> newest message in the feed: median ${ms(figures.feed_ready_median_ms)}, max ${ms(figures.feed_ready_max_ms)} over ${LOADS} cold loads   target <= 1000 ms`);
    console.log(`  breakdown of the median load: ${JSON.stringify(breakdown[loads.indexOf(pct(loads, 50))])} (ms: DOMContentLoaded and shown since navigation start; request durations; /json requests start-end)`);
    console.log(`sent in one browser -> shown in the other: p50 ${ms(figures.send_to_seen_p50_ms)}, p95 ${ms(figures.send_to_seen_p95_ms)}, max ${ms(figures.send_to_seen_max_ms)} over ${SENDS} sends   target p95 <= 150 ms`);
    console.log(`load average during the run: ${figures.load_average.join(', ')} on ${os.cpus().length} cores`);
    record('w1-web', figures);
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

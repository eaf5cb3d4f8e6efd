import fs from 'node:fs';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { openStore } from '../../src/store/db.js';
import { basicAuth, formBody } from '../support/server.js';
import { createChannel } from '../support/messages.js';
import { feedIds, launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

// A lost event queue is re-registered without losing the view (issue 14):
// first the queue is deleted under the app (its next poll answers
// BAD_EVENT_QUEUE_ID), then the whole server restarts on the same port and database.

let s: AppServer;
let browser: Browser;
let page: Page;
let errors: string[];
let restarted: App | undefined;
let queueId: string;

beforeAll(async () => {
  [s, browser] = await Promise.all([startAppServer(), launchChromium()]);
  await createChannel(s.t, 'Elsinore', ['cordelia', 'iago']);
  ({ page, errors } = await newPage(browser));
  // The first register (before signing in) answers 401; the one after it carries the queue.
  const registered = page.waitForResponse((r) => r.url().endsWith('/json/register') && r.status() === 200);
  await signIn(page, s.url, s.t.users.cordelia);
  queueId = ((await (await registered).json()) as { queue_id: string }).queue_id;
  await page.getByTestId('channel-Elsinore').click();
  await page.getByTestId('feed').waitFor();
});
afterAll(async () => {
  await browser?.close();
  if (restarted) {
    await restarted.close();
    fs.rmSync(s.t.config.dataDir, { recursive: true, force: true });
  } else await s?.t.close();
});

/** Sends a channel message as iago over HTTP (works against whichever server is listening). */
async function sendAsIago(content: string): Promise<number> {
  const post = () =>
    fetch(`${s.url}/api/v1/messages`, {
      method: 'POST',
      headers: { authorization: basicAuth(s.t.users.iago), 'content-type': 'application/x-www-form-urlencoded' },
      body: formBody({ type: 'stream', to: 'Elsinore', topic: 'watch', content }),
    });
  // After the restart, Node's pool may first hand out a kept-alive socket to the old server.
  const res = await post().catch(post);
  const body = (await res.json()) as { result: string; id: number };
  expect(body.result).toBe('success');
  return body.id;
}

describe('losing the event queue', () => {
  it('re-registers after BAD_EVENT_QUEUE_ID and keeps the narrow', async () => {
    const before = await feedIds(page);
    const deleted = await fetch(`${s.url}/api/v1/events`, {
      method: 'DELETE',
      headers: { authorization: basicAuth(s.t.users.cordelia), 'content-type': 'application/x-www-form-urlencoded' },
      body: formBody({ queue_id: queueId }),
    });
    expect(await deleted.json()).toEqual({ result: 'success', msg: '' });
    // The next poll of the deleted queue fails, and the app registers a new queue.
    const reregistered = page.waitForResponse((r) => r.url().endsWith('/json/register') && r.status() === 200, { timeout: 15_000 });
    const id = await sendAsIago('who is there?');
    const fresh = ((await (await reregistered).json()) as { queue_id: string }).queue_id;
    expect(fresh).not.toBe(queueId);
    await page.locator(`[data-testid="message"][data-message-id="${id}"]`).waitFor({ timeout: 10_000 });
    expect(await feedIds(page)).toEqual([...before, id]);
    expect(await page.getByTestId('narrow-title').textContent()).toContain('Elsinore');
    // And the new queue is live: the next message arrives through it.
    const next = await sendAsIago('nay, answer me');
    await page.locator(`[data-testid="message"][data-message-id="${next}"]`).waitFor({ timeout: 2000 });
  });

  it('keeps working across a server restart, on the same session', async () => {
    const port = Number(new URL(s.url).port);
    const config = s.t.config;
    await s.t.app.close();
    restarted = await buildApp(config, { logger: pino({ level: 'silent' }), store: openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }) });
    await restarted.http.listen({ host: '127.0.0.1', port });
    const id = await sendAsIago('long live the king');
    await page.locator(`[data-testid="message"][data-message-id="${id}"]`).waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('narrow-title').textContent()).toContain('Elsinore');
    expect(await page.getByTestId('login-form').count()).toBe(0);
    await expect.poll(() => page.getByTestId('reconnecting').count(), { timeout: 10_000 }).toBe(0);
  });

  it('had no script errors', () => {
    expect(errors).toEqual([]);
  });
});

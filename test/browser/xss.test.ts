import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess } from '../support/server.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

// Markup in anything users write (message content, topic names, user names,
// channel names) is shown as text in the app, never run (issue 14). Each
// payload would set window.__xss if it ever ran.

const payload = (n: number): string => `<img src=x onerror="window.__xss=${n}"><script>window.__xss=${n}</script>`;
const CHANNEL = `<img src=x onerror=window.__xss=1>`;
const TOPIC = `<svg onload=window.__xss=2>`;
// Full names may not contain > or " (Zulip's rule); an unclosed tag is the attack left.
const NAME = `Mallory <img src=x onerror=window.__xss=3 &amp; co`;
const CONTENT = `${payload(4)} and [click](javascript:window.__xss=5) and <a href="javascript:window.__xss=6">x</a>`;

let s: AppServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([startAppServer(), launchChromium()]);
  const t = s.t;
  expectSuccess(await t.patch('/settings', { full_name: NAME }, 'othello'));
  await createChannel(t, CHANNEL, ['cordelia', 'othello']);
  await sendChannelMessage(t, 'othello', CHANNEL, TOPIC, CONTENT);
  await sendDirectMessage(t, 'othello', ['cordelia'], payload(7));
});
afterAll(async () => {
  await browser?.close();
  await s?.t.close();
});

describe('user-written markup', () => {
  it('renders as text in the feed, the sidebars and the recipient bars', async () => {
    const { page, context, errors } = await newPage(browser);
    await signIn(page, s.url, s.t.users.cordelia, '#feed');
    await page.getByTestId('feed').getByTestId('message').nth(1).waitFor();
    // The channel (sidebar and recipient bar), topic and sender name appear literally.
    expect(await page.getByTestId(`channel-${CHANNEL}`).textContent()).toContain(CHANNEL);
    await page.getByText(TOPIC).first().waitFor();
    await page.getByText(NAME).first().waitFor();
    // The message content is the server's escaped Markdown: the markup is text.
    const contents = await page.getByTestId('message-content').allTextContents();
    expect(contents.join('\n')).toContain('<img src=x onerror="window.__xss=4"><script>window.__xss=4</script>');
    expect(contents.join('\n')).toContain('<img src=x onerror="window.__xss=7">');
    // Nothing became an element, and nothing ran.
    expect(await page.locator('img[src="x"], svg[onload], [onerror], [onload]').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    // Open the channel and its topic too (the narrow title and topic list show the names).
    await page.getByTestId(`channel-${CHANNEL}`).click();
    await page.getByTestId(`topic-${TOPIC}`).click();
    await expect.poll(() => page.getByTestId('narrow-title').textContent()).toContain(TOPIC);
    await page.getByText(NAME).first().hover();
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(errors).toEqual([]);
    await context.close();
  });
});

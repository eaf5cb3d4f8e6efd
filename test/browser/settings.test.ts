import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel } from '../support/messages.js';
import { launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

// Compose preview (server-rendered Markdown with KaTeX under the CSP), the
// password change that keeps its own session, and the dark theme.

let s: AppServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([startAppServer(), launchChromium()]);
  await createChannel(s.t, 'Elsinore', ['hamlet', 'othello']);
});
afterAll(async () => {
  await browser?.close();
  await s?.t.close();
});

describe('compose, settings and theme', () => {
  it('previews Markdown with math, rendered by the server, within the CSP', async () => {
    const { page, context, errors } = await newPage(browser);
    await signIn(page, s.url, s.t.users.hamlet);
    await page.getByTestId('compose-open-stream').click();
    await page.getByTestId('compose-channel').fill('Elsinore');
    await page.getByTestId('compose-topic').fill('math');
    await page.getByTestId('compose-content').fill('**bold** and $$e^{i\\pi} + 1 = 0$$');
    await page.getByTestId('compose-preview').click();
    const preview = page.getByTestId('compose-preview-content');
    await preview.locator('strong').waitFor();
    expect(await preview.locator('strong').textContent()).toBe('bold');
    // KaTeX's layout lives in style attributes, which the CSP allows (style-src-attr).
    const styled = preview.locator('.katex-html [style]').first();
    await styled.waitFor({ state: 'attached' });
    expect(await styled.evaluate((el) => (el as HTMLElement).style.length)).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a password change in settings keeps this browser signed in and signs the others out', async () => {
    const first = await newPage(browser);
    const other = await newPage(browser);
    await signIn(first.page, s.url, s.t.users.othello);
    await signIn(other.page, s.url, s.t.users.othello);
    const page = first.page;
    await page.getByTestId('settings').click();
    await page.getByTestId('settings-tab-password').click();
    await page.getByTestId('settings-old-password').fill(s.t.users.othello.password);
    await page.getByTestId('settings-new-password').fill('a-Brand-new-passw0rd');
    await page.getByTestId('settings-change-password').click();
    await expect.poll(async () => (await page.getByTestId('info-toast').allTextContents()).join(' ')).toContain('Password changed.');
    await page.reload();
    await page.getByTestId('logout').waitFor();
    // The other browser's session ended: its next request shows the login page.
    await other.page.reload();
    await other.page.getByTestId('login-form').waitFor();
    // The new password signs in; the old one does not.
    const fresh = await newPage(browser);
    await signIn(fresh.page, s.url, { email: s.t.users.othello.email, password: 'a-Brand-new-passw0rd' });
    expect([...first.errors, ...other.errors, ...fresh.errors]).toEqual([]);
    await Promise.all([first.context.close(), other.context.close(), fresh.context.close()]);
  });

  it('follows the dark color scheme', async () => {
    const luminance = async (scheme: 'light' | 'dark'): Promise<number> => {
      const { page, context, errors } = await newPage(browser, { colorScheme: scheme });
      await signIn(page, s.url, s.t.users.hamlet);
      // The background behind the feed: the first ancestor of <main> (or itself) that paints one.
      const rgb = await page.evaluate(() => {
        for (let el: Element | null = document.querySelector('main'); el; el = el.parentElement) {
          const bg = getComputedStyle(el).backgroundColor;
          if (bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') return bg;
        }
        return 'rgb(255, 255, 255)';
      });
      await context.close();
      expect(errors).toEqual([]);
      const [r, g, b] = (rgb.match(/\d+/g) ?? ['0', '0', '0']).map(Number);
      return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
    };
    expect(await luminance('light')).toBeGreaterThan(0.7);
    expect(await luminance('dark')).toBeLessThan(0.3);
  });
});

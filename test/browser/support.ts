import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { BROWSER_WEB_DIR } from './global-setup.js';
import type { Config } from '../../src/config.js';

/**
 * Browser tests (issue 14): a full test server listening on a loopback port,
 * serving the app built by global-setup.ts, and Debian's chromium driven by
 * playwright-core (which downloads no browser of its own). Each launch gets a
 * fresh temporary profile (playwright's launch() makes one and removes it);
 * each user gets a context of its own, which has its own cookies, exactly as a
 * second browser would.
 */

export const CHROMIUM = process.env.PARLEY_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export interface AppServer {
  readonly t: TestServer;
  readonly url: string;
}

export async function startAppServer(overrides: Partial<Config> = {}): Promise<AppServer> {
  const t = await startTestServer({ webDir: BROWSER_WEB_DIR, ...overrides });
  const url = await t.listen();
  return { t, url };
}

/** A new browser context (own cookies) with a page, errors collected so a test can assert none happened. */
export async function newPage(browser: Browser, opts: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ colorScheme: opts.colorScheme ?? 'light', viewport: opts.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    // A CSP violation or a script error shows up here; the tests assert there were none.
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  return { context, page, errors };
}

/** Signs in through the login page and waits for the app (its first view is the inbox). */
export async function signIn(page: Page, url: string, user: Pick<TestUser, 'email' | 'password'>, hash = ''): Promise<void> {
  await page.goto(url + '/' + hash);
  await page.getByTestId('login-username').fill(user.email);
  await page.getByTestId('login-password').fill(user.password);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('logout').waitFor();
}

/** The ids of the messages the feed shows, top to bottom. */
export async function feedIds(page: Page): Promise<number[]> {
  return page.getByTestId('feed').getByTestId('message').evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.messageId)));
}

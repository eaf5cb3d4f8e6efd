import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel, getMessage, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { feedIds, launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

// One user's views in the browser (issue 14): unread counts, narrowing by
// channel, topic and DM, search, loading older messages, private channels.

let s: AppServer;
let browser: Browser;
let page: Page;
let errors: string[];
const ids: Record<string, number[]> = { ghost: [], players: [], history: [] };
let dm: number;
let secretId: number;

beforeAll(async () => {
  [s, browser] = await Promise.all([startAppServer(), launchChromium()]);
  const t = s.t;
  await createChannel(t, 'Elsinore', ['cordelia', 'iago', 'hamlet']);
  await createChannel(t, 'History', ['cordelia', 'iago']);
  secretId = await createChannel(t, 'Secret', ['iago', 'hamlet'], { invite_only: true });
  for (let i = 1; i <= 150; i++) ids.history!.push(await sendChannelMessage(t, 'iago', 'History', 'annals', `history entry ${i}`));
  // The history is read; only what follows is unread for cordelia.
  await t.post('/messages/flags', { messages: ids.history!, op: 'add', flag: 'read' }, 'cordelia');
  for (let i = 1; i <= 5; i++) ids.ghost!.push(await sendChannelMessage(t, 'iago', 'Elsinore', 'ghost', `the ghost walks, night ${i}`));
  for (let i = 1; i <= 3; i++) ids.players!.push(await sendChannelMessage(t, 'hamlet', 'Elsinore', 'players', `the players arrive, act ${i}`));
  await sendChannelMessage(t, 'hamlet', 'Elsinore', 'players', 'Rosencrantz and Guildenstern are here');
  dm = await sendDirectMessage(t, 'othello', ['cordelia'], 'a private word from Othello');
  await sendChannelMessage(t, 'iago', 'Secret', 'plans', 'the secret plan of Iago');
  ({ page, errors } = await newPage(browser));
  await signIn(page, s.url, t.users.cordelia);
});
afterAll(async () => {
  await browser?.close();
  await s?.t.close();
});

const texts = (p: Page) => p.getByTestId('feed').getByTestId('message-content').allTextContents();
const unreadBadge = (p: Page, testId: string) => p.getByTestId(testId).getByTestId('unread-count');

describe('the views of one user', () => {
  it('shows unread counts, and they go down as the messages are seen', async () => {
    await expect.poll(() => unreadBadge(page, 'channel-Elsinore').textContent()).toBe('9');
    await page.getByTestId('channel-Elsinore').click();
    await page.getByTestId('feed').getByTestId('message').first().waitFor();
    await expect.poll(() => unreadBadge(page, 'channel-Elsinore').count(), { timeout: 10_000 }).toBe(0);
    // The server has them as read now.
    for (const id of ids.ghost!) expect((await getMessage(s.t, 'cordelia', id)).flags).toContain('read');
  });

  it('narrows to a channel', async () => {
    await expect.poll(() => page.getByTestId('narrow-title').textContent()).toContain('Elsinore');
    await expect.poll(() => feedIds(page)).toEqual([...ids.ghost!, ...ids.players!, expect.any(Number)]);
    const shown = await texts(page);
    expect(shown.some((x) => x.includes('history entry'))).toBe(false);
    expect(shown.some((x) => x.includes('Othello'))).toBe(false);
  });

  it('narrows to a topic', async () => {
    await page.getByTestId('topic-ghost').click();
    await expect.poll(() => feedIds(page)).toEqual(ids.ghost);
    await expect.poll(() => page.getByTestId('narrow-title').textContent()).toContain('ghost');
  });

  it('narrows to a DM conversation', async () => {
    await page.getByTestId(`dm-${s.t.users.othello.email}`).click();
    await expect.poll(() => feedIds(page)).toEqual([dm]);
    expect(await texts(page)).toEqual(['a private word from Othello']);
  });

  it('searches with free text and with operators', async () => {
    const search = page.getByTestId('search');
    await search.fill('Rosencrantz');
    await search.press('Enter');
    await expect.poll(() => texts(page)).toEqual([expect.stringContaining('Rosencrantz and Guildenstern are here')]);
    await search.fill('channel:Elsinore topic:players');
    await search.press('Enter');
    await expect.poll(() => feedIds(page)).toHaveLength(4);
    await search.fill(`sender:${s.t.users.othello.email}`);
    await search.press('Enter');
    await expect.poll(() => feedIds(page)).toEqual([dm]);
  });

  it('loads older messages when scrolled back', async () => {
    await page.getByTestId('channel-History').click();
    await expect.poll(async () => (await feedIds(page)).at(-1)).toBe(ids.history!.at(-1));
    const first = (await feedIds(page)).length;
    expect(first).toBeLessThan(150);
    for (let i = 0; i < 20 && (await feedIds(page))[0] !== ids.history![0]; i++) {
      await page.getByTestId('feed').evaluate((el) => (el.scrollTop = 0));
      await page.waitForTimeout(250);
    }
    expect(await feedIds(page)).toEqual(ids.history);
    expect((await texts(page))[0]).toBe('history entry 1');
  });

  it('a member does not see a private channel it is not in', async () => {
    expect(await page.getByTestId('channel-Secret').count()).toBe(0);
    expect(await page.getByText('Secret', { exact: true }).count()).toBe(0);
    const search = page.getByTestId('search');
    await search.fill('secret plan');
    await search.press('Enter');
    await page.getByTestId('feed-empty').waitFor();
    // Not even by its address.
    await page.goto(`${s.url}/#narrow/channel/${secretId}-Secret`);
    await page.getByTestId('logout').waitFor();
    await page.waitForTimeout(500);
    expect(await page.getByText('the secret plan of Iago').count()).toBe(0);
  });

  it('had no script errors or CSP violations', () => {
    expect(errors).toEqual([]);
  });
});

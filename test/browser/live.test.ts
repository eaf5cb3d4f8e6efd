import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel } from '../support/messages.js';
import { launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

// Two browsers as two users (issue 14): what one does, the other sees within a
// second, without a reload, through its event queue.

let s: AppServer;
let browser: Browser;
let hamlet: Page;
let cordelia: Page;
const pageErrors: string[][] = [];

beforeAll(async () => {
  [s, browser] = await Promise.all([startAppServer(), launchChromium()]);
  await createChannel(s.t, 'Denmark', ['hamlet', 'cordelia', 'iago']);
  const a = await newPage(browser);
  const b = await newPage(browser);
  hamlet = a.page;
  cordelia = b.page;
  pageErrors.push(a.errors, b.errors);
  await signIn(hamlet, s.url, s.t.users.hamlet, '#feed');
  await signIn(cordelia, s.url, s.t.users.cordelia, '#feed');
  await cordelia.getByTestId('feed').waitFor();
});
afterAll(async () => {
  await browser?.close();
  await s?.t.close();
});

const message = (page: Page, id: number) => page.locator(`[data-testid="message"][data-message-id="${id}"]`);

/** Clicks Send in the compose box and returns the new message's id once the server accepted it. */
async function send(page: Page): Promise<number> {
  const answer = page.waitForResponse((r) => r.url().endsWith('/json/messages') && r.request().method() === 'POST');
  await page.getByTestId('compose-send').click();
  const body = (await (await answer).json()) as { result: string; id: number };
  expect(body.result).toBe('success');
  return body.id;
}

/** Waits until `page` shows the message, at most `ms` after the sender's request finished. */
async function seenWithin(page: Page, id: number, ms: number): Promise<void> {
  await message(page, id).waitFor({ timeout: ms });
}

describe('two users in two browsers', () => {
  let channelMsg: number;
  let dmMsg: number;

  it('a channel message shows up in the other browser within a second, once', async () => {
    await hamlet.getByTestId('compose-open-stream').click();
    await hamlet.getByTestId('compose-channel').fill('Denmark');
    await hamlet.getByTestId('compose-topic').fill('castle');
    await hamlet.getByTestId('compose-content').fill('Something is rotten in the state of Denmark');
    channelMsg = await send(hamlet);
    await seenWithin(cordelia, channelMsg, 1000);
    await expect.poll(() => message(cordelia, channelMsg).getByTestId('message-content').textContent()).toBe('Something is rotten in the state of Denmark');
    await cordelia.waitForTimeout(300);
    expect(await cordelia.getByText('Something is rotten in the state of Denmark').count()).toBe(1);
    // The sender sees it too, from its own queue.
    await seenWithin(hamlet, channelMsg, 1000);
  });

  it('a direct message shows up within a second, once', async () => {
    await hamlet.getByTestId('compose-close').click();
    await hamlet.getByTestId('compose-open-dm').click();
    await hamlet.getByTestId('compose-to').fill(s.t.users.cordelia.email);
    await hamlet.getByTestId('compose-content').fill('Get thee to a nunnery');
    dmMsg = await send(hamlet);
    await seenWithin(cordelia, dmMsg, 1000);
    await cordelia.waitForTimeout(300);
    expect(await cordelia.getByText('Get thee to a nunnery').count()).toBe(1);
    expect(await message(cordelia, dmMsg).getByTestId('message-sender').textContent()).toContain('King Hamlet');
  });

  it('a reaction added in one browser is shown in the other', async () => {
    const m = message(cordelia, channelMsg);
    await m.hover();
    await m.getByTestId('react-button').click();
    await cordelia.getByTestId('emoji-search').fill('heart');
    await cordelia.getByTestId('emoji-heart').click();
    const r = message(hamlet, channelMsg).locator('[data-testid="reaction"][data-emoji="heart"]');
    await r.waitFor({ timeout: 3000 });
    expect(await r.getAttribute('data-count')).toBe('1');
    // And it is really stored.
    const stored = (await s.t.get(`/messages/${channelMsg}`, {}, 'hamlet')).body.message.reactions;
    expect(stored).toEqual([expect.objectContaining({ emoji_name: 'heart', user_id: s.t.users.cordelia.id })]);
  });

  it('an edit is shown in the other browser, marked as edited', async () => {
    const m = message(hamlet, channelMsg);
    await m.hover();
    await m.getByTestId('message-actions').click();
    await hamlet.getByTestId('action-edit').click();
    await hamlet.getByTestId('edit-content').fill('Something is rotten in the state of Denmark (edited by Hamlet)');
    await hamlet.getByTestId('edit-save').click();
    const other = message(cordelia, channelMsg);
    await expect.poll(() => other.getByTestId('message-content').textContent(), { timeout: 3000 }).toBe('Something is rotten in the state of Denmark (edited by Hamlet)');
    await other.getByTestId('edited').waitFor({ timeout: 3000 });
  });

  it('a deletion removes the message from the other browser', async () => {
    const m = message(hamlet, dmMsg);
    await m.hover();
    await m.getByTestId('message-actions').click();
    await hamlet.getByTestId('action-delete').click();
    await hamlet.getByTestId('confirm-delete').click();
    await message(cordelia, dmMsg).waitFor({ state: 'detached', timeout: 3000 });
    await message(hamlet, dmMsg).waitFor({ state: 'detached', timeout: 3000 });
    expect((await s.t.get(`/messages/${dmMsg}`, {}, 'cordelia')).status).toBe(400);
  });

  it('the typing indicator appears while the other user types', async () => {
    // The compose box may still be open from the last test.
    if (await hamlet.getByTestId('compose-open-dm').isVisible()) await hamlet.getByTestId('compose-open-dm').click();
    else await hamlet.getByTestId('compose-mode-dm').click();
    await hamlet.getByTestId('compose-to').fill(s.t.users.cordelia.email);
    await hamlet.getByTestId('compose-content').pressSequentially('To be, or not');
    const indicator = cordelia.getByTestId('typing-indicator');
    await expect.poll(() => indicator.textContent(), { timeout: 3000 }).toBe('King Hamlet is typing…');
    expect(await indicator.isVisible()).toBe(true);
  });

  it('no script errors and no CSP violations in either browser', () => {
    expect(pageErrors).toEqual([[], []]);
  });
});

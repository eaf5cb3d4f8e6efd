import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChannel } from '../support/messages.js';
import { pngImage } from '../support/uploads.js';
import { launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

// The compose box's file uploads (issue 15, point 5) in a real browser: the
// paperclip, paste and drop each POST one file to /json/user_uploads and put
// Zulip's "[name](url)" in the message; a reader downloads with its session
// cookie, someone who cannot see the message gets the missing-file 404, and
// refusals are shown in words with the placeholder gone.

let s: AppServer;
let browser: Browser;
let hamlet: Page;
let cordelia: Page;
let cordeliaCtx: BrowserContext;
const pageErrors: string[][] = [];
let png: Buffer;
const notes = Buffer.from('To be, or not to be: that is the question.\nÆ þ — “quoted”\n', 'utf8');

// 1 MiB, so "too large" needs only a small file.
beforeAll(async () => {
  [s, browser, png] = await Promise.all([startAppServer({ maxFileUploadSizeMib: 1 }), launchChromium(), pngImage(300, 200)]);
  await createChannel(s.t, 'Elsinore', ['hamlet', 'cordelia'], { invite_only: true });
  const a = await newPage(browser);
  const b = await newPage(browser);
  hamlet = a.page;
  cordelia = b.page;
  cordeliaCtx = b.context;
  pageErrors.push(a.errors, b.errors);
  await signIn(hamlet, s.url, s.t.users.hamlet, '#feed');
  await signIn(cordelia, s.url, s.t.users.cordelia, '#feed');
  await cordelia.getByTestId('feed').waitFor();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await s?.t.close();
});

const content = (page: Page) => page.getByTestId('compose-content');
const linkRe = (name: string) => `\\[${name.replace(/[.]/g, '\\.')}\\]\\((/user_uploads/\\d+/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/${name.replace(/[.]/g, '\\.')})\\)`;
const toastText = (page: Page) => page.getByTestId('error-toast').last().locator('span').textContent();

/** Holds every upload request of `page` until release() is called; records their headers. */
async function holdUploads(page: Page) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen: Record<string, string>[] = [];
  const passed: Promise<void>[] = [];
  const handler = async (route: Route) => {
    seen.push(route.request().headers());
    const p = gate.then(() => route.continue());
    passed.push(p);
    await p;
  };
  await page.route('**/json/user_uploads', handler);
  return {
    seen,
    release: async () => {
      release();
      // Unrouted only once the held requests went on (unrouting earlier would settle them itself).
      await Promise.all(passed);
      await page.unroute('**/json/user_uploads', handler);
    },
  };
}

/** Counts the upload requests `page` makes from now on. */
function countUploads(page: Page): { n: number } {
  const c = { n: 0 };
  page.on('request', (r) => {
    if (r.url().endsWith('/json/user_uploads')) c.n++;
  });
  return c;
}

/** Dispatches a paste (or a drop) carrying files onto the element, as the browser would. */
async function dispatchFiles(page: Page, testId: string, kind: 'paste' | 'drop', files: { name: string; type: string; b64: string }[]) {
  await page.getByTestId(testId).evaluate((el, { kind, files }) => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.b64), (ch) => ch.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: f.type }));
    }
    const ev = kind === 'paste'
      ? new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true })
      : new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
    el.dispatchEvent(ev);
  }, { kind, files });
}

describe('uploading files from the compose box', () => {
  let msgId: number;
  let urls: { notes: string; png: string };

  it('the paperclip uploads several files: placeholders while uploading, then one link per line', async () => {
    await hamlet.getByTestId('compose-open-stream').click();
    await hamlet.getByTestId('compose-channel').fill('Elsinore');
    await hamlet.getByTestId('compose-topic').fill('players');
    await content(hamlet).fill('The play is the thing:');
    const held = await holdUploads(hamlet);
    const chooser = hamlet.waitForEvent('filechooser');
    await hamlet.getByTestId('compose-attach').click();
    const fc = await chooser;
    expect(fc.isMultiple()).toBe(true);
    await fc.setFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: notes },
      { name: 'red.png', mimeType: 'image/png', buffer: png },
    ]);
    // Zulip's placeholders, each on a line of its own, while the requests are held.
    await expect.poll(() => content(hamlet).inputValue()).toBe('The play is the thing:\n[Uploading notes.txt…]()\n[Uploading red.png…]()');
    await expect.poll(() => held.seen.length).toBe(2);
    for (const h of held.seen) {
      expect(h['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(h['x-csrftoken']).toBeTruthy();
    }
    // Sending waits for the uploads.
    await hamlet.getByTestId('compose-send').click();
    await expect.poll(() => toastText(hamlet)).toBe('Cannot send message while files are being uploaded.');
    await held.release();
    const re = new RegExp(`^The play is the thing:\\n${linkRe('notes.txt')}\\n${linkRe('red.png')}$`);
    await expect.poll(() => content(hamlet).inputValue(), { timeout: 5000 }).toMatch(re);
    const m = re.exec(await content(hamlet).inputValue())!;
    urls = { notes: m[1]!, png: m[2]! };
  });

  it('the message is sent; a reader sees the image thumbnail and downloads the file with its cookie', async () => {
    const answer = hamlet.waitForResponse((r) => r.url().endsWith('/json/messages') && r.request().method() === 'POST');
    await hamlet.getByTestId('compose-send').click();
    const body = (await (await answer).json()) as { result: string; id: number };
    expect(body.result).toBe('success');
    msgId = body.id;
    expect(await content(hamlet).inputValue()).toBe('');

    const msg = cordelia.locator(`[data-testid="message"][data-message-id="${msgId}"]`);
    await msg.waitFor({ timeout: 3000 });
    const link = msg.getByTestId('message-content').locator(`a[href="${urls.notes}"]`);
    expect(await link.textContent()).toBe('notes.txt');
    // The image is shown inline from its thumbnail (same-origin, cookie-authenticated, allowed by the CSP).
    const img = msg.locator('.message_inline_image img');
    await expect
      .poll(() => img.evaluate((el: HTMLImageElement) => (el.complete && el.getAttribute('src')!.startsWith('/user_uploads/thumbnail/') ? el.naturalWidth : 0)), { timeout: 10_000 })
      .toBeGreaterThan(0);
    // Shown as a thumbnail, not at full size.
    const box = (await img.boundingBox())!;
    expect(box.height).toBeGreaterThan(0);
    expect(box.height).toBeLessThanOrEqual(150);

    // The bytes, exactly, with the reader's session cookie.
    for (const [url, bytes] of [[urls.notes, notes], [urls.png, png]] as const) {
      const res = await cordeliaCtx.request.get(s.url + url);
      expect(res.status()).toBe(200);
      expect(Buffer.compare(await res.body(), bytes)).toBe(0);
    }

    // Clicking the link opens the file (in a new tab, as every message link does).
    const [tab] = await Promise.all([cordeliaCtx.waitForEvent('page'), link.click()]);
    await tab.waitForLoadState();
    expect(tab.url()).toBe(s.url + urls.notes);
    expect(await tab.evaluate(() => document.body.innerText)).toContain('To be, or not to be: that is the question.');
    await tab.close();
  });

  it('a user who cannot see the message gets the missing-file answer', async () => {
    const o = await newPage(browser);
    try {
      await signIn(o.page, s.url, s.t.users.othello, '#feed');
      for (const url of [urls.notes, urls.png]) {
        const res = await o.context.request.get(s.url + url);
        expect(res.status()).toBe(404);
        expect(await res.text()).toBe('<p>File not found.</p>');
      }
      // Without any credentials the request is not even considered.
      expect((await fetch(s.url + urls.notes)).status).toBe(401);
      expect(o.errors).toEqual([]);
    } finally {
      await o.context.close();
    }
  });

  it('pasting an image uploads it and inserts a link at the caret', async () => {
    await content(hamlet).fill('Look: ');
    await dispatchFiles(hamlet, 'compose-content', 'paste', [{ name: 'pasted.png', type: 'image/png', b64: png.toString('base64') }]);
    await expect.poll(() => content(hamlet).inputValue(), { timeout: 5000 }).toMatch(new RegExp(`^Look: \\n${linkRe('pasted.png')}$`));
    const url = new RegExp(linkRe('pasted.png')).exec(await content(hamlet).inputValue())![1]!;
    const res = await hamlet.context().request.get(s.url + url);
    expect(res.status()).toBe(200);
    expect(Buffer.compare(await res.body(), png)).toBe(0);
  });

  it('a paste in the middle of the text puts the link on a line of its own there, the caret after it', async () => {
    await content(hamlet).fill('before after');
    await content(hamlet).evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(7, 7));
    await dispatchFiles(hamlet, 'compose-content', 'paste', [{ name: 'mid.png', type: 'image/png', b64: png.toString('base64') }]);
    const re = new RegExp(`^before \\n${linkRe('mid.png')}\\nafter$`);
    await expect.poll(() => content(hamlet).inputValue(), { timeout: 5000 }).toMatch(re);
    const value = await content(hamlet).inputValue();
    expect(await content(hamlet).evaluate((el: HTMLTextAreaElement) => el.selectionStart)).toBe(value.indexOf('\nafter'));
  });

  it('dropping files on the compose box uploads them', async () => {
    await content(hamlet).fill('');
    await dispatchFiles(hamlet, 'compose', 'drop', [{ name: 'dropped.txt', type: 'text/plain', b64: Buffer.from('dropped\n').toString('base64') }]);
    await expect.poll(() => content(hamlet).inputValue(), { timeout: 5000 }).toMatch(new RegExp(`^${linkRe('dropped.txt')}$`));
  });

  it('a file over the realm limit is refused before any request, in Zulip words, leaving the text as it was', async () => {
    await content(hamlet).fill('Too big:');
    const count = countUploads(hamlet);
    await hamlet.getByTestId('compose-file-input').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1024 * 1024 + 1, 7) });
    await expect.poll(() => toastText(hamlet)).toBe("'big.bin' exceeds the maximum file size for attachments (1 MB).");
    expect(await content(hamlet).inputValue()).toBe('Too big:');
    expect(count.n).toBe(0);
  });

  it("the server's refusal is shown in its words and the placeholder removed", async () => {
    // A client that believes the limit is higher (a stale /register) still gets the server's answer.
    const i = await newPage(browser);
    try {
      await i.page.route('**/json/register', async (route) => {
        const res = await route.fetch();
        const json = (await res.json()) as Record<string, unknown>;
        // (The first try, before signing in, is a 401 without the key.)
        if (json.max_file_upload_size_mib === 1) json.max_file_upload_size_mib = 5;
        await route.fulfill({ response: res, json });
      });
      await signIn(i.page, s.url, s.t.users.iago, '#feed');
      await i.page.getByTestId('compose-open-stream').click();
      await content(i.page).fill('Before');
      const answer = i.page.waitForResponse((r) => r.url().endsWith('/json/user_uploads'));
      await i.page.getByTestId('compose-file-input').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1536 * 1024, 7) });
      expect((await answer).status()).toBe(400);
      await expect.poll(() => toastText(i.page)).toBe("File is larger than this server's configured maximum upload size (1 MiB).");
      await expect.poll(() => content(i.page).inputValue()).toBe('Before');
      expect(i.errors).toEqual([]);
    } finally {
      await i.context.close();
    }
  });

  it('a network failure is shown in words and the placeholder removed', async () => {
    await content(hamlet).fill('Offline:');
    await hamlet.route('**/json/user_uploads', (route) => route.abort('internetdisconnected'));
    try {
      await hamlet.getByTestId('compose-file-input').setInputFiles({ name: 'lost.txt', mimeType: 'text/plain', buffer: Buffer.from('lost\n') });
      await expect.poll(() => toastText(hamlet)).toBe("Failed to upload 'lost.txt'. Cannot reach the server. Check your connection; retrying may help.");
      await expect.poll(() => content(hamlet).inputValue()).toBe('Offline:');
    } finally {
      await hamlet.unroute('**/json/user_uploads');
    }
  });

  it('no script errors and no CSP violations in either browser', () => {
    expect(pageErrors).toEqual([[], []]);
  });
});

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newPage, signIn, startAppServer, type AppServer } from './support.js';

let s: AppServer;
let browser: Browser;
beforeAll(async () => {
  [s, browser] = await Promise.all([startAppServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await s?.t.close();
});

describe('signing in and out', () => {
  it('a wrong password shows the server error on the login page', async () => {
    const { page, context, errors } = await newPage(browser);
    await page.goto(s.url + '/');
    await page.getByTestId('login-username').fill(s.t.users.hamlet.email);
    await page.getByTestId('login-password').fill('not the password');
    await page.getByTestId('login-submit').click();
    await expect.poll(() => page.getByTestId('login-error').textContent()).toContain('Your username or password is incorrect');
    expect(await context.cookies()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('signs in with the session cookie, survives a reload, and signs out', async () => {
    const { page, context, errors } = await newPage(browser);
    await signIn(page, s.url, s.t.users.hamlet);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'sessionid')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookies.find((c) => c.name === 'csrftoken')).toMatchObject({ httpOnly: false, sameSite: 'Lax' });
    // Scripts cannot read the session cookie.
    expect(await page.evaluate(() => document.cookie)).not.toContain('sessionid');

    await page.reload();
    await page.getByTestId('logout').waitFor();
    expect(await page.getByTestId('login-form').count()).toBe(0);

    await page.getByTestId('logout').click();
    await page.getByTestId('login-form').waitFor();
    expect((await context.cookies()).map((c) => c.name)).toEqual([]);
    // The old session no longer works on the server.
    const res = await fetch(s.url + '/json/users/me', { headers: { cookie: `sessionid=${session.value}` } });
    expect(res.status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('fixed-name static images', () => {
  it('serves the inaccessible-user avatar and the thumbnail-pending image that the API refers to', async () => {
    const { INACCESSIBLE_USER_AVATAR } = await import('../../src/domain/access/user-access.js');
    const { PLACEHOLDER_SRC } = await import('../../src/domain/rules/markdown/previews.js');
    const avatar = await fetch(s.url + INACCESSIBLE_USER_AVATAR);
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await avatar.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const loader = await fetch(s.url + PLACEHOLDER_SRC);
    expect(loader.status).toBe(200);
    expect(loader.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await loader.text()).toContain('<svg');
  });
});

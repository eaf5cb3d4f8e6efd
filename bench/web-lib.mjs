// Shared by bench/w1-web.mjs and tools/screenshots.mjs: Debian's chromium through
// playwright-core, API calls as any user, users made through the API, and a
// signed-in browser context (the session cookies of POST /accounts/login).
import { chromium } from 'playwright-core';
import { call } from './events-lib.mjs';

export { call };

export const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium() {
  return chromium.launch({ executablePath: process.env.PARLEY_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

export const basic = (email, key) => 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

export async function ok(promise, what) {
  const r = await promise;
  if (r.result !== 'success') throw new Error(`${what}: ${JSON.stringify(r)}`);
  return r;
}

/** Creates a user through the API (as the owner) and returns { id, email, password, name, auth }. */
export async function createUser(server, email, name, password = 'a-Realistic-passw0rd') {
  const made = await ok(call(server.base, server.auth, 'POST', '/users', { email, password, full_name: name }), `create ${email}`);
  const key = await ok(call(server.base, '', 'POST', '/fetch_api_key', { username: email, password }), `key of ${email}`);
  return { id: made.user_id, email, password, name, auth: basic(email, key.api_key) };
}

/** The two cookies of a sign-in, ready for context.addCookies. */
export async function sessionCookies(base, email, password) {
  const res = await fetch(`${base}/accounts/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: email, password }),
  });
  if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
  const url = new URL(base);
  return res.headers.getSetCookie().map((c) => {
    const [pair] = c.split(';');
    const eq = pair.indexOf('=');
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), domain: url.hostname, path: '/', httpOnly: /HttpOnly/.test(c), sameSite: 'Lax' };
  });
}

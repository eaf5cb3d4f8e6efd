#!/usr/bin/env node
// Screenshots of the web app's main screens, light and dark, into docs/screenshots/
// (shown in the README). Starts a built server on a fresh data dir, seeds a small
// realistic organization through the API, and drives Debian's chromium.
// Run: npm run screenshots   (builds first)
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, startParley } from '../bench/lib.mjs';
import { call, createUser, launchChromium, ok, sessionCookies } from '../bench/web-lib.mjs';

const OUT = path.join(ROOT, 'docs', 'screenshots');

async function seed(server) {
  const api = (who, method, p, params) => ok(call(server.base, who.auth, method, p, params), `${method} ${p}`);
  const owner = { auth: server.auth };
  await api(owner, 'PATCH', '/settings', { full_name: 'Morgan Reyes' });
  const people = {};
  for (const [key, name] of [
    ['maya', 'Maya Patel'],
    ['jonas', 'Jonas Berg'],
    ['amara', 'Amara Okafor'],
    ['lucas', 'Lucas Silva'],
    ['yuki', 'Yuki Tanaka'],
    ['sofia', 'Sofia Rossi'],
  ]) people[key] = await createUser(server, `${key}@example.com`, name);
  const everyone = Object.values(people).map((p) => p.id);
  const channels = {};
  for (const [name, description] of [
    ['general', 'Everything that concerns everyone'],
    ['engineering', 'Builds, releases and code review'],
    ['design', 'Mock-ups and critique'],
    ['random', 'Off-topic'],
  ]) channels[name] = (await api(owner, 'POST', '/channels/create', { name, description, subscribers: everyone })).id;
  const say = async (who, channel, topic, content) => (await api(people[who], 'POST', '/messages', { type: 'stream', to: channel, topic, content })).id;
  await say('jonas', 'general', 'office move', 'The move to the new office is on **Friday**. Boxes are in the hall; label yours with your name.');
  await say('amara', 'general', 'office move', 'Will the meeting rooms have screens from day one?');
  const screens = await say('jonas', 'general', 'office move', '@**Amara Okafor** yes, all four rooms. :tada:');
  await say('maya', 'engineering', 'release 2.4', 'Release checklist for 2.4:\n- [x] changelog\n- [x] migration tested on a copy of production\n- [ ] tag and announce');
  const ci = await say('lucas', 'engineering', 'release 2.4', 'CI is green on `main`. The flaky test was a timezone issue:\n```ts\nconst day = new Date(Date.UTC(2026, 0, 1));\n```');
  await say('yuki', 'engineering', 'release 2.4', '> The flaky test was a timezone issue\n\nClassic. Thanks for tracking it down!');
  await say('sofia', 'engineering', 'latency', 'p95 of message delivery is now $$\\frac{38}{50}$$ of what it was last month.');
  await say('amara', 'design', 'new sidebar', 'First draft of the new sidebar is up for critique. Unread counts move to the right edge.');
  await say('maya', 'design', 'new sidebar', 'Looks clean.\n```spoiler What about the icons?\nThe old ones can finally go.\n```');
  await say('lucas', 'random', 'lunch', 'Anyone up for ramen at 12:30? :ramen:');
  await api(people.maya, 'POST', `/messages/${ci}/reactions`, { emoji_name: 'thumbs_up' });
  await api(people.jonas, 'POST', `/messages/${ci}/reactions`, { emoji_name: 'thumbs_up' });
  await api(people.yuki, 'POST', `/messages/${screens}/reactions`, { emoji_name: 'heart' });
  await api(people.jonas, 'POST', '/messages', { type: 'direct', to: JSON.stringify([people.maya.id]), content: 'Could you review the release notes before lunch?' });
  await api(people.maya, 'POST', '/messages', { type: 'direct', to: JSON.stringify([people.jonas.id]), content: 'Sure, on it.' });
  await api(people.yuki, 'POST', '/users/me/status', { status_text: 'In a meeting', emoji_name: 'calendar' });
  return { people, channels };
}

async function main() {
  const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast' });
  const browser = await launchChromium();
  try {
    const { people } = await seed(server);
    fs.mkdirSync(OUT, { recursive: true });
    const shots = [];
    for (const scheme of ['light', 'dark']) {
      const opts = { colorScheme: scheme, viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };
      const shot = async (page, name) => {
        const file = path.join(OUT, `${name}-${scheme}.png`);
        await page.waitForTimeout(300);
        await page.screenshot({ path: file });
        shots.push(path.relative(ROOT, file));
      };
      // The login page, signed out.
      const anon = await browser.newContext(opts);
      const login = await anon.newPage();
      await login.goto(server.base + '/');
      await login.getByTestId('login-form').waitFor();
      await shot(login, 'login');
      await anon.close();

      const ctx = await browser.newContext(opts);
      await ctx.addCookies(await sessionCookies(server.base, people.maya.email, people.maya.password));
      const page = await ctx.newPage();
      await page.goto(server.base + '/#feed');
      await page.getByTestId('feed').getByTestId('message').first().waitFor();
      await shot(page, 'feed');

      await page.getByTestId('channel-engineering').click();
      await page.getByTestId('topic-release 2.4').click();
      await page.getByTestId('feed').getByTestId('message').first().waitFor();
      await shot(page, 'narrow');

      await page.getByTestId('compose-open-stream').click();
      await page.getByTestId('compose-content').fill('Tagged **2.4.0** :tada:\n\n- notes: see #**engineering>release 2.4**\n- math check: $$e^{i\\pi} + 1 = 0$$');
      await page.getByTestId('compose-preview').click();
      await page.getByTestId('compose-preview-content').waitFor();
      await shot(page, 'compose-preview');
      await page.getByTestId('compose-close').click();

      await page.getByTestId('settings').click();
      await page.getByTestId('settings-panel').waitFor();
      await shot(page, 'settings');
      await ctx.close();
    }
    console.log(`wrote ${shots.length} screenshots:\n  ${shots.join('\n  ')}`);
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

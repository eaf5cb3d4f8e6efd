import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDir, buildOnce, freePort, spawnServer, waitForAnswer } from '../support/built-server.js';
import { storeKind } from '../support/server.js';

/**
 * The built server's first start on an empty data dir (`node <build>/src/main.js`):
 * the organization, its owner and the system bots exist before it answers, and
 * the first channels and Welcome Bot's messages are posted right after it starts
 * listening (src/app.ts, bootstrapRealm's 'after-listen'; P10 in
 * docs/performance.md). A client that registered meanwhile hears every message
 * it was not given as an event; a stop right after the start waits for them.
 * Runs in the sqlite project only, on a build of its own.
 */

let MAIN = '';
const skip = storeKind() !== 'sqlite';

const WELCOME_TOPICS = [
  ['Parley', 'moving messages'],
  ['Parley', 'moving messages'],
  ['sandbox', 'experiments'],
  ['sandbox', 'experiments'],
  ['sandbox', 'start a conversation'],
  ['sandbox', 'start a conversation'],
  ['sandbox', 'start a conversation'],
  ['general', 'greetings'],
  ['general', 'greetings'],
  ['Parley', 'welcome to Parley!'],
  ['Parley', 'welcome to Parley!'],
  ['Parley', 'welcome to Parley!'],
];

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly base: string;
  readonly auth: string;
}

const started: Running[] = [];
const dirs: string[] = [];

/** Starts the server and resolves at its first 200 on /server_settings (polled every 2 ms, as bench/p7-p10 does). */
async function start(dataDir: string): Promise<Running> {
  const port = await freePort();
  const { child, exited } = spawnServer(MAIN, { PARLEY_PORT: String(port), PARLEY_DATA_DIR: dataDir, PARLEY_OWNER_PASSWORD: 'first-Start-pa55', PARLEY_PASSWORD_HASH_COST: 'fast' });
  const base = `http://127.0.0.1:${port}/api/v1`;
  await waitForAnswer(child, `${base}/server_settings`, 2);
  const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  const auth = 'Basic ' + Buffer.from(`${/email=(.*)/.exec(rc)![1]!.trim()}:${/key=(.*)/.exec(rc)![1]!.trim()}`).toString('base64');
  const running = { child, exited, base, auth };
  started.push(running);
  return running;
}

async function api(r: Running, method: string, url: string, params: Record<string, unknown> = {}): Promise<any> {
  const enc = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const res = await fetch(`${r.base}${url}` + (method === 'GET' ? `?${enc}` : ''), {
    method,
    headers: { authorization: r.auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: method === 'GET' ? undefined : enc.toString(),
  });
  return res.json();
}

/** Every message the owner has, oldest first, as [channel or 'dm', topic, sender, starred]. */
async function ownerMessages(r: Running): Promise<{ id: number; row: [string, string, string, boolean] }[]> {
  const got = await api(r, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, apply_markdown: false });
  expect(got.result).toBe('success');
  return got.messages.map((m: any) => ({
    id: m.id,
    row: [m.type === 'stream' ? m.display_recipient : 'dm', m.subject, m.sender_email, m.flags.includes('starred')],
  }));
}

const EXPECTED = [
  ...WELCOME_TOPICS.map(([channel, topic]) => [channel, topic, 'welcome-bot@zulip.com', false]),
  // The owner's welcome: a direct message from Welcome Bot, starred (onboarding.ts).
  ['dm', '', 'welcome-bot@zulip.com', true],
];

async function waitForContent(r: Running): Promise<{ id: number; row: [string, string, string, boolean] }[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const msgs = await ownerMessages(r);
    if (msgs.length >= EXPECTED.length || Date.now() > deadline) return msgs;
    await new Promise((res) => setTimeout(res, 20));
  }
}

beforeAll(() => {
  if (!skip) MAIN = buildOnce(buildDir('parley-first-start-build'));
}, 300_000);

afterAll(async () => {
  for (const r of started) {
    if (r.child.exitCode === null) {
      r.child.kill('SIGKILL');
      await r.exited;
    }
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const newDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-first-start-'));
  dirs.push(d);
  return d;
};

describe.skipIf(skip)('first start', () => {
  it('answers with the owner in place; Welcome Bot posts right after, and a queue registered meanwhile hears every message its snapshot lacked', async () => {
    const r = await start(newDir());
    // Registered at once: the snapshot holds whatever Welcome Bot had posted by then, the queue the rest.
    const reg = await api(r, 'POST', '/register', { event_types: ['message'], fetch_event_types: ['message'] });
    expect(reg.result).toBe('success');
    const msgs = await waitForContent(r);
    expect(msgs.map((m) => m.row)).toEqual(EXPECTED);
    expect((await api(r, 'GET', '/users/me/subscriptions')).subscriptions.map((s: any) => s.name).sort()).toEqual(['Parley', 'general', 'sandbox']);

    const later = msgs.filter((m) => m.id > reg.max_message_id).map((m) => m.id);
    const heard: number[] = [];
    let last = -1;
    const deadline = Date.now() + 10_000;
    while (heard.length < later.length && Date.now() < deadline) {
      const got = await api(r, 'GET', '/events', { queue_id: reg.queue_id, last_event_id: last, dont_block: true });
      expect(got.result).toBe('success');
      for (const e of got.events) {
        last = e.id;
        if (e.type === 'message') heard.push(e.message.id);
      }
      if (heard.length < later.length) await new Promise((res) => setTimeout(res, 20));
    }
    expect(heard).toEqual(later);

    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
  }, 60_000);

  it('a stop right after the first answer waits for Welcome Bot: the next start finds every message, once', async () => {
    const dir = newDir();
    const first = await start(dir);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const second = await start(dir);
    expect((await ownerMessages(second)).map((m) => m.row)).toEqual(EXPECTED);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});

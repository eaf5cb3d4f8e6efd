import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDir, buildOnce, freePort } from '../support/built-server.js';
import { createPgDatabase, storeKind } from '../support/server.js';

/**
 * Crash safety: the built server (`node <dist>/src/main.js`) takes a write
 * load from several concurrent clients and is killed with SIGKILL at a random
 * moment, again and again. After each kill the database must pass an integrity
 * check (SQLite: PRAGMA integrity_check and foreign_key_check; PostgreSQL: no
 * invalid index or unvalidated constraint), the server must start on it, and
 * every write that got a success response must read back.
 *
 * The build goes to its own outDir per store (under node_modules/.cache, so
 * packages still resolve), so it never races with test/e2e/restart.test.ts
 * building dist/. CRASH_CYCLES (default 20) sets the number of kills.
 */
const CYCLES = Number(process.env.CRASH_CYCLES ?? 20);
const WORKERS = 4;
const OUT = buildDir(`parley-crash-dist-${storeKind()}`);
const MAIN = path.join(OUT, 'src/main.js');

let dataDir = '';
let databaseUrl: string | undefined;
let dropDb: (() => Promise<void>) | undefined;
let port = 0;
let auth = '';
let child: ChildProcess | undefined;
let exited: Promise<unknown> = Promise.resolve();

async function start(): Promise<void> {
  const started = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PARLEY_PORT: String(port),
      PARLEY_DATA_DIR: dataDir,
      PARLEY_DATABASE_URL: databaseUrl ?? '',
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_OWNER_PASSWORD: 'crash-Owner-pa55',
      PARLEY_PASSWORD_HASH_COST: 'fast',
      PARLEY_RATE_LIMIT_PER_USER: '0',
      PARLEY_RATE_LIMIT_PER_IP: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  started.stderr!.on('data', (d) => (stderr += d));
  child = started;
  exited = new Promise((r) => started.once('exit', r));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (started.exitCode !== null) throw new Error(`server exited while starting: ${stderr}`);
    if (Date.now() > deadline) {
      started.kill('SIGKILL');
      throw new Error(`server did not start: ${stderr}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/server_settings`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function kill(): Promise<void> {
  child?.kill('SIGKILL');
  await exited;
  child = undefined;
}

async function api(method: string, url: string, params: Record<string, unknown> = {}): Promise<any> {
  const enc = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const res = await fetch(`http://127.0.0.1:${port}/api/v1${url}` + (method === 'GET' ? `?${enc}` : ''), {
    method,
    headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: method === 'GET' ? undefined : enc.toString(),
    signal: AbortSignal.timeout(10_000),
  });
  return res.json();
}

/** Writes that got a success response, by kind. */
const acked = {
  alertWords: new Set<string>(),
  drafts: new Set<number>(),
  snippets: new Map<number, string>(),
  groups: new Set<string>(),
  users: new Map<number, string>(),
  messages: new Map<number, string>(),
};
let messagesRouted = false;
let ownerId = 0;
let serial = 0;

/** One random write; records it if the server said it succeeded. A cut connection is not a success. */
async function oneWrite(): Promise<void> {
  const n = `${process.pid}-${serial++}`;
  const pick = Math.floor(Math.random() * (messagesRouted ? 6 : 5));
  try {
    if (pick === 0) {
      const word = `word-${n}`;
      if ((await api('POST', '/users/me/alert_words', { alert_words: [word] })).result === 'success') acked.alertWords.add(word);
    } else if (pick === 1) {
      const r = await api('POST', '/drafts', { drafts: [{ type: '', to: [], topic: '', content: `draft ${n}`, timestamp: 1_700_000_000 }] });
      if (r.result === 'success') for (const id of r.ids) acked.drafts.add(id);
    } else if (pick === 2) {
      const r = await api('POST', '/saved_snippets', { title: `t ${n}`, content: `snippet ${n}` });
      if (r.result === 'success') acked.snippets.set(r.saved_snippet_id, `snippet ${n}`);
    } else if (pick === 3) {
      const name = `group-${n}`;
      if ((await api('POST', '/user_groups/create', { name, description: 'crash test', members: [ownerId] })).result === 'success') acked.groups.add(name);
    } else if (pick === 4) {
      const email = `user-${n}@example.com`;
      const r = await api('POST', '/users', { email, password: `crash-User-pa55-${n}`, full_name: `User ${n}` });
      if (r.result === 'success') acked.users.set(r.user_id, email);
    } else {
      const content = `message ${n}`;
      const r = await api('POST', '/messages', { type: 'stream', to: 'crash test', topic: 'kills', content });
      if (r.result === 'success') acked.messages.set(r.id, content);
    }
  } catch {
    /* killed mid-request: outcome unknown, not recorded */
  }
}

async function checkIntegrity(): Promise<void> {
  if (!databaseUrl) {
    const db = new SQLite(path.join(dataDir, 'parley.sqlite3'));
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
    return;
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    expect((await c.query('SELECT indexrelid::regclass::text AS i FROM pg_index WHERE NOT indisvalid OR NOT indisready')).rows).toEqual([]);
    expect((await c.query('SELECT conname FROM pg_constraint WHERE NOT convalidated')).rows).toEqual([]);
    // Every table reads back in full.
    const tables = await c.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()");
    for (const { tablename } of tables.rows) await c.query(`SELECT * FROM "${tablename}"`);
  } finally {
    await c.end();
  }
}

/** Every acknowledged write reads back through the API. */
async function checkAcked(): Promise<void> {
  const words = new Set<string>((await api('GET', '/users/me/alert_words')).alert_words);
  for (const w of acked.alertWords) expect(words.has(w), `alert word ${w}`).toBe(true);
  const drafts = new Set<number>((await api('GET', '/drafts')).drafts.map((d: { id: number }) => d.id));
  for (const id of acked.drafts) expect(drafts.has(id), `draft ${id}`).toBe(true);
  const snippets = new Map<number, string>((await api('GET', '/saved_snippets')).saved_snippets.map((s: { id: number; content: string }) => [s.id, s.content]));
  for (const [id, content] of acked.snippets) expect(snippets.get(id), `snippet ${id}`).toBe(content);
  const groups = new Set<string>((await api('GET', '/user_groups')).user_groups.map((g: { name: string }) => g.name));
  for (const name of acked.groups) expect(groups.has(name), `group ${name}`).toBe(true);
  const users = new Map<number, string>((await api('GET', '/users')).members.map((u: { user_id: number; delivery_email?: string; email: string }) => [u.user_id, u.delivery_email ?? u.email]));
  for (const [id, email] of acked.users) expect(users.get(id), `user ${id}`).toBe(email);
  for (const [id, content] of acked.messages) {
    const r = await api('GET', `/messages/${id}`, { apply_markdown: false });
    expect(r.message?.content, `message ${id}`).toBe(content);
  }
}

beforeAll(async () => {
  buildOnce(OUT);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-crash-'));
  if (storeKind() === 'postgres') {
    const created = await createPgDatabase('parley_crash');
    databaseUrl = created.url;
    dropDb = created.drop;
  }
  port = await freePort();
}, 300_000);

afterAll(async () => {
  await kill();
  if (dropDb) await dropDb();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('crash safety', () => {
  it(`${CYCLES} kill -9 cycles under write load lose no acknowledged write and leave a sound database`, async () => {
    const started = Date.now();
    await start();
    const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
    const email = /email=(.*)/.exec(rc)![1]!.trim();
    const key = /key=(.*)/.exec(rc)![1]!.trim();
    auth = 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');
    ownerId = (await api('GET', '/users/me')).user_id;
    // Sends join the load when POST /messages is routed (issue 6).
    const sub = await api('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'crash test' }] });
    expect(sub.result).toBe('success');
    messagesRouted = (await api('POST', '/messages', { type: 'stream', to: 'crash test', topic: 'kills', content: 'first' })).result === 'success';

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      let stop = false;
      const workers = Array.from({ length: WORKERS }, async () => {
        while (!stop) await oneWrite();
      });
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 600));
      await kill();
      stop = true;
      await Promise.all(workers);
      await checkIntegrity();
      await start();
      await checkAcked();
    }
    const total = Object.values(acked).reduce((s, v) => s + v.size, 0);
    console.info(`crash (${storeKind()}): ${CYCLES} kills, ${total} acknowledged writes (${JSON.stringify(Object.fromEntries(Object.entries(acked).map(([k, v]) => [k, v.size])))}), messages routed: ${messagesRouted}, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // The load must have done real work between kills.
    expect(total).toBeGreaterThan(CYCLES * 5);
    await kill();
    await checkIntegrity();
  }, 300_000);
});

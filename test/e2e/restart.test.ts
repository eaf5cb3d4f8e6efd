import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer, waitForAnswer } from '../support/built-server.js';
import { storeKind } from '../support/server.js';

/**
 * A graceful restart keeps event queues: the built server (`node
 * dist/src/main.js`) is stopped with SIGTERM, which answers parked polls and
 * saves the queues to the data dir, and started again on the same data dir.
 * Runs in the sqlite project only (one build of dist/ per test run).
 */

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const MAIN = path.join(ROOT, 'dist/src/main.js');
const skip = storeKind() !== 'sqlite';

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
}

let dataDir = '';
let port = 0;
let auth = '';

async function start(): Promise<Running> {
  const { child, exited } = spawnServer(MAIN, {
    PARLEY_PORT: String(port),
    PARLEY_DATA_DIR: dataDir,
    PARLEY_OWNER_PASSWORD: 'restart-Owner-pa55',
    PARLEY_PASSWORD_HASH_COST: 'fast',
    PARLEY_HEARTBEAT_MS: '20000',
    PARLEY_HEARTBEAT_JITTER_MS: '0',
  });
  await waitForAnswer(child, `http://127.0.0.1:${port}/api/v1/server_settings`, 50);
  return { child, exited };
}

async function api(method: string, url: string, params: Record<string, unknown> = {}): Promise<any> {
  const enc = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const full = `http://127.0.0.1:${port}/api/v1${url}` + (method === 'GET' ? `?${enc}` : '');
  const res = await fetch(full, {
    method,
    headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: method === 'GET' ? undefined : enc.toString(),
  });
  return res.json();
}

let running: Running | undefined;

beforeAll(async () => {
  if (skip) return;
  // Build dist/ (type errors elsewhere in a shared tree do not stop tsc from emitting).
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore', timeout: 240_000 });
  } catch {
    /* checked below */
  }
  if (!fs.existsSync(MAIN)) throw new Error('dist/src/main.js was not built');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-restart-'));
  port = await freePort();
}, 300_000);

afterAll(async () => {
  if (running && running.child.exitCode === null) {
    running.child.kill('SIGKILL');
    await running.exited;
  }
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(skip)('restart', () => {
  it('SIGTERM answers parked polls and keeps queues and their pending events across a restart', async () => {
    running = await start();
    const rc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
    const email = /email=(.*)/.exec(rc)![1]!.trim();
    const key = /key=(.*)/.exec(rc)![1]!.trim();
    auth = 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

    const pendingQueue = await api('POST', '/register', { event_types: ['alert_words'] });
    expect(pendingQueue.result).toBe('success');
    expect((await api('POST', '/users/me/alert_words', { alert_words: ['survives'] })).result).toBe('success');
    const parkedQueue = await api('POST', '/register', { event_types: ['alert_words'] });
    expect(parkedQueue.alert_words).toEqual(['survives']);
    const parked = api('GET', '/events', { queue_id: parkedQueue.queue_id, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 300));

    running.child.kill('SIGTERM');
    // The parked poll gets an answer (a heartbeat) rather than a cut connection.
    const answer = await parked;
    expect(answer).toEqual({ result: 'success', msg: '', events: [{ type: 'heartbeat', id: 0 }], queue_id: parkedQueue.queue_id });
    expect(await running.exited).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'event-queues.json'))).toBe(true);

    running = await start();
    expect(await api('GET', '/events', { queue_id: pendingQueue.queue_id, last_event_id: -1, dont_block: true })).toEqual({
      result: 'success',
      msg: '',
      events: [{ type: 'alert_words', alert_words: ['survives'], id: 0 }],
    });
    // The other queue resumes after what it acknowledged; new events keep their ids increasing.
    expect(await api('GET', '/events', { queue_id: parkedQueue.queue_id, last_event_id: 0, dont_block: true })).toEqual({ result: 'success', msg: '', events: [] });
    await api('POST', '/users/me/alert_words', { alert_words: ['after restart'] });
    const after = await api('GET', '/events', { queue_id: parkedQueue.queue_id, last_event_id: 0, dont_block: true });
    expect(after.events).toEqual([{ type: 'alert_words', alert_words: ['survives', 'after restart'], id: 1 }]);

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  }, 60_000);
});

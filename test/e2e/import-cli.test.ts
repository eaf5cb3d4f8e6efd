import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.js';
import { expectSuccess, startTestServer, storeKind, type TestServer } from '../support/server.js';
import { sendChannelMessage, createChannel } from '../support/messages.js';

/**
 * Issue 19: `npx parley import <tarball>` as an operator runs it: the built
 * CLI (bin/parley.js -> dist/) on its own data directory. Runs in the sqlite
 * project only (one build of dist/ per run, as test/e2e/restart.test.ts).
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/parley.js');
const skip = storeKind() !== 'sqlite';

let t: TestServer;
let work = '';
let tarball = '';

function parley(dataDir: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_LOG_LEVEL: 'warn', PARLEY_SCHEDULER: '0' }, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function counts(dataDir: string): Promise<Record<string, number>> {
  const store = openStore({ databaseUrl: undefined, dataDir });
  try {
    const out: Record<string, number> = {};
    for (const tb of ['realms', 'users', 'channels', 'messages'] as const) {
      const r = await store.db.selectFrom(tb).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      out[tb] = Number(r.n);
    }
    return out;
  } finally {
    await store.close();
  }
}

describe.skipIf(skip)('parley import', () => {
  beforeAll(async () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore', timeout: 240_000 });
    } catch {
      /* checked below */
    }
    if (!fs.existsSync(path.join(ROOT, 'dist/src/cli/main.js'))) throw new Error('dist/ was not built');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-import-cli-'));
    t = await startTestServer({ schedulerEnabled: false });
    await createChannel(t, 'Denmark', ['hamlet', 'cordelia']);
    await sendChannelMessage(t, 'hamlet', 'Denmark', 'castle', 'Something is rotten');
    const { id } = expectSuccess(await t.post('/export/realm', { export_type: 1 }, 'iago'));
    await t.app.scheduler.runDueNow();
    const row = await t.app.ctx.db.selectFrom('realm_exports').select('export_path').where('id', '=', id).executeTakeFirstOrThrow();
    const f = await t.app.ctx.files.storage.open(row.export_path!);
    const chunks: Buffer[] = [];
    for await (const c of f!.stream) chunks.push(c as Buffer);
    tarball = path.join(work, 'export.tar.gz');
    fs.writeFileSync(tarball, Buffer.concat(chunks));
  }, 300_000);
  afterAll(async () => {
    await t?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('imports into an empty data directory, then refuses a second import', async () => {
    const dir = path.join(work, 'a');
    const first = parley(dir, 'import', tarball);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^imported the organization: 8 users, 1 channels, 2 subscriptions, 1 messages, 0 reactions, 0 uploads\n/);
    const after = await counts(dir);
    expect(after).toEqual({ realms: 2, users: 10, channels: 1, messages: 1 });
    const again = parley(dir, 'import', tarball);
    expect([again.status, again.stderr]).toEqual([2, 'parley: the database already holds an organization: import needs an empty database (a new PARLEY_DATABASE_URL or data directory)\n']);
    expect(await counts(dir)).toEqual(after);
    // The imported organization is the one the server starts with: set a password and it signs in.
    const pw = parley(dir, 'set-password', '--email', 'hamlet@zulip.com', '--password', 'imported-Pa55word!');
    expect([pw.status, pw.stdout]).toEqual([0, 'password=imported-Pa55word!\n']);
  });

  it('refuses a file that is not an export, writing nothing', async () => {
    const dir = path.join(work, 'b');
    const junk = path.join(work, 'junk.tar.gz');
    fs.writeFileSync(junk, 'not a tarball');
    const r = parley(dir, 'import', junk);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^parley: malformed export: not a gzip file/);
    expect(await counts(dir)).toEqual({ realms: 0, users: 0, channels: 0, messages: 0 });
    const missing = parley(dir, 'import', path.join(work, 'nope.tar.gz'));
    expect([missing.status, missing.stderr]).toEqual([2, `parley: cannot read ${path.join(work, 'nope.tar.gz')}: ENOENT: no such file or directory, open '${path.join(work, 'nope.tar.gz')}'\n`]);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrapRealm, buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { verifyPassword } from '../../src/domain/rules/credentials.js';
import { userById } from '../../src/store/users.js';

/**
 * On an empty database buildApp starts the owner's password hash while it builds the server
 * (P10), and bootstrapRealm uses that hash. The password it announces, generated or
 * configured, must be the one stored; a database that already has its organization keeps
 * its owner as they were.
 */
const dirs: string[] = [];
const apps: App[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(dataDir: string, ownerPassword: string | undefined): Promise<App> {
  const config = loadConfig({}, { dataDir, passwordHashCost: 'fast', ownerPassword, logLevel: 'silent', schedulerEnabled: false });
  const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
  apps.push(app);
  return app;
}

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-owner-hash-'));
  dirs.push(d);
  return d;
}

describe("the owner's password hash on a new database", () => {
  it('a generated password: the one announced is the one stored', async () => {
    const app = await start(tempDir(), undefined);
    const boot = await bootstrapRealm(app.ctx, { announce: false, initialContent: false });
    expect(boot.created).toBe(true);
    expect(boot.ownerPassword).toMatch(/^\S{12,}$/);
    const owner = await userById(app.ctx.db, boot.realmId, 1);
    expect(await verifyPassword(owner!.password_hash, boot.ownerPassword!)).toBe(true);
    expect(await verifyPassword(owner!.password_hash, `${boot.ownerPassword}x`)).toBe(false);
  });

  it('a configured password is stored; a second start on the same database keeps the owner as created', async () => {
    const dir = tempDir();
    const first = await start(dir, 'Configured-owner-pass-1');
    const boot = await bootstrapRealm(first.ctx, { announce: false, initialContent: false });
    expect(boot).toMatchObject({ created: true, ownerPassword: 'Configured-owner-pass-1' });
    const before = await userById(first.ctx.db, boot.realmId, 1);
    expect(await verifyPassword(before!.password_hash, 'Configured-owner-pass-1')).toBe(true);
    await apps.pop()!.close();

    const second = await start(dir, 'Another-owner-pass-2');
    expect(await bootstrapRealm(second.ctx, { announce: false, initialContent: false })).toEqual({ realmId: boot.realmId, created: false });
    const after = await userById(second.ctx.db, boot.realmId, 1);
    expect(after!.password_hash).toBe(before!.password_hash);
  });
});

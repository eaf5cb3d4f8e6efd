import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// zulip-js ships no types; it is the real npm client Zulip users run.
// @ts-expect-error no declaration file
import zulipInit from 'zulip-js';
import { startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
let site: string;
beforeAll(async () => {
  t = await startTestServer();
  site = await t.listen();
});
afterAll(async () => t.close());

describe('zulip-js against Parley', () => {
  it('configured from a zuliprc: lists users and fetches its own profile', async () => {
    const rc = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'zuliprc-')), 'zuliprc');
    fs.writeFileSync(rc, `[api]\nemail=${t.users.owner.email}\nkey=${t.users.owner.apiKey}\nsite=${site}\n`);
    const client = await zulipInit({ zuliprc: rc });
    const users = await client.users.retrieve();
    expect(users.result).toBe('success');
    expect(users.members.map((m: { email: string }) => m.email)).toContain('hamlet@zulip.com');
    const me = await client.users.me.getProfile();
    expect(me.result).toBe('success');
    expect(me.user_id).toBe(t.users.owner.id);
    expect(me.email).toBe(t.users.owner.email);
  });

  it('fetches an API key with username and password', async () => {
    const client = await zulipInit({ username: 'hamlet@zulip.com', password: t.users.hamlet.password, realm: site });
    expect(client.config.apiKey).toBe(t.users.hamlet.apiKey);
  });

  it('a wrong key gets 401 UNAUTHORIZED', async () => {
    const client = await zulipInit({ username: t.users.owner.email, apiKey: 'x'.repeat(32), realm: site });
    const res = await client.users.me.getProfile();
    expect(res).toEqual({ result: 'error', msg: 'Invalid API key', code: 'UNAUTHORIZED' });
  });
});

import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
// zulip-js ships no types; it is the real npm client Zulip users run.
// @ts-expect-error no declaration file
import zulipInit from 'zulip-js';
import { startTestServer, type TestServer } from '../support/server.js';

// zulip-js's callOnEachEvent loops forever; its HTTP goes through this helper,
// which the test swaps for a never-settling fetch when done so the loop stops quietly.
const zulipHelper = createRequire(import.meta.url)('zulip-js/lib/helper') as { fetch: (...a: unknown[]) => Promise<unknown> };

let t: TestServer;
let site: string;
beforeAll(async () => {
  t = await startTestServer();
  site = await t.listen();
});
afterAll(async () => {
  zulipHelper.fetch = () => new Promise(() => {});
  await t.close();
});

async function until<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('zulip-js callOnEachEvent', () => {
  it('receives the user_settings event caused by PATCH /settings from another zulip-js client', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const config = { username: t.users.hamlet.email, apiKey: t.users.hamlet.apiKey, realm: site };
    const listener = await zulipInit(config);
    const changer = await zulipInit(config);
    const received: Record<string, unknown>[] = [];
    const queuesBefore = await t.app.ctx.queues.store.count();
    void listener.callOnEachEvent((event: Record<string, unknown>) => received.push(event), ['user_settings']);
    // Wait until its queue exists and its first long poll is parked.
    await until(() => (t.app.ctx.queues.parkedPolls > 0 ? true : undefined));
    expect(await t.app.ctx.queues.store.count()).toBe(queuesBefore + 1);
    const res = await changer.callEndpoint('/settings', 'PATCH', { twenty_four_hour_time: true });
    expect(res).toEqual({ result: 'success', msg: '' });
    const event = await until(() => received.find((e) => e.type === 'user_settings'));
    expect(event).toEqual({ type: 'user_settings', op: 'update', property: 'twenty_four_hour_time', value: true, id: expect.any(Number) });
  });
});

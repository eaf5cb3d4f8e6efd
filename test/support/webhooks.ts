import { expect } from 'vitest';
import { expectSuccess, type Res, type TestServer } from './server.js';

/** An incoming-webhook bot (bot_type 2) owned by hamlet, and a public channel it posts to. */
export interface Hook {
  readonly key: string;
  readonly botId: number;
  readonly channel: string;
  readonly channelId: number;
}

export async function setupHook(t: TestServer, short: string, channel: string): Promise<Hook> {
  const bot = expectSuccess(await t.post('/bots', { full_name: `${short} bot`, short_name: short, bot_type: 2 }, 'hamlet'));
  const created = expectSuccess(await t.post('/channels/create', { name: channel, subscribers: [t.users.hamlet.id] }, 'iago'));
  return { key: bot.api_key, botId: bot.user_id, channel, channelId: created.id };
}

/** POSTs a webhook payload (an object is sent as JSON; a string as is) to /api/v1/external/{name}. */
export async function postHook(t: TestServer, name: string, query: Record<string, string>, payload: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const res = await t.app.http.inject({
    method: 'POST',
    url: `/api/v1/external/${name}?${new URLSearchParams(query).toString()}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers as Res['headers'] };
}

export interface Sent {
  readonly channel: string | null;
  readonly topic: string;
  readonly content: string;
  readonly sender_id: number;
  readonly dm_to: number[] | null;
}

async function newestId(t: TestServer): Promise<number> {
  const row = await t.app.ctx.db.selectFrom('messages').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
  return Number(row?.m ?? 0);
}

/** Runs fn and returns the messages it sent (raw Markdown), read back through GET /messages as hamlet. */
export async function messagesSentBy(t: TestServer, fn: () => Promise<Res>): Promise<{ res: Res; sent: Sent[] }> {
  const before = await newestId(t);
  const res = await fn();
  const after = await newestId(t);
  if (after === before) return { res, sent: [] };
  const got = expectSuccess(await t.get('/messages', { anchor: before + 1, num_before: 0, num_after: 50, apply_markdown: false, narrow: [] }, 'hamlet'));
  const sent = (got.messages as any[])
    .filter((m) => m.id > before)
    .map((m) => ({
      channel: m.type === 'stream' ? (m.display_recipient as string) : null,
      topic: m.subject as string,
      content: m.content as string,
      sender_id: m.sender_id as number,
      dm_to: m.type === 'stream' ? null : (m.display_recipient as { id: number }[]).map((r) => r.id).sort((a, b) => a - b),
    }));
  return { res, sent };
}

/** Posts the payload and expects exactly one channel message with this topic and content. */
export async function expectChannelMessage(t: TestServer, hook: Hook, name: string, query: Record<string, string>, payload: unknown, headers: Record<string, string>, topic: string, content: string): Promise<void> {
  const { res, sent } = await messagesSentBy(t, () => postHook(t, name, { api_key: hook.key, stream: hook.channel, ...query }, payload, headers));
  expect(res.body).toEqual({ result: 'success', msg: '' });
  expect(res.status).toBe(200);
  expect(sent).toEqual([{ channel: hook.channel, topic, content, sender_id: hook.botId, dm_to: null }]);
}

/** Posts the payload and expects success with no message at all (filtered event). */
export async function expectNoMessage(t: TestServer, hook: Hook, name: string, query: Record<string, string>, payload: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const { res, sent } = await messagesSentBy(t, () => postHook(t, name, { api_key: hook.key, stream: hook.channel, ...query }, payload, headers));
  expect(res.status).toBe(200);
  expect(sent).toEqual([]);
  return res;
}

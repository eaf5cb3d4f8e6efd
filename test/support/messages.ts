import { expectSuccess, type FixtureName, type TestServer, type TestUser } from './server.js';

/**
 * Message fixtures, all through the HTTP API (POST /channels/create and
 * POST /messages), as real clients create them.
 */
type Who = TestUser | FixtureName;

const idOf = (t: TestServer, who: Who): number => (typeof who === 'string' ? t.users[who].id : who.id);

/** Creates a channel (as `as`, default the owner) with these subscribers; returns its id. */
export async function createChannel(
  t: TestServer,
  name: string,
  subscribers: readonly Who[],
  opts: Record<string, unknown> = {},
  as: Who = 'owner',
): Promise<number> {
  const body = expectSuccess(await t.post('/channels/create', { name, subscribers: subscribers.map((w) => idOf(t, w)), ...opts }, as));
  return body.id;
}

export async function sendChannelMessage(t: TestServer, who: Who, channel: string | number, topic: string, content: string, extra: Record<string, unknown> = {}): Promise<number> {
  const body = expectSuccess(await t.post('/messages', { type: 'stream', to: String(channel), topic, content, ...extra }, who));
  return body.id;
}

export async function sendDirectMessage(t: TestServer, who: Who, to: readonly Who[], content: string, extra: Record<string, unknown> = {}): Promise<number> {
  const body = expectSuccess(await t.post('/messages', { type: 'direct', to: to.map((w) => idOf(t, w)), content, ...extra }, who));
  return body.id;
}

/** GET /messages/{id} as `who`; the message object. */
export async function getMessage(t: TestServer, who: Who, id: number, params: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await t.get(`/messages/${id}`, params, who)).message;
}

/** GET /messages with the newest `n` messages of a narrow. */
export async function newestMessages(t: TestServer, who: Who, narrow: unknown[] = [], n = 100, params: Record<string, unknown> = {}): Promise<any[]> {
  return expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: n, num_after: 0, narrow, ...params }, who)).messages;
}

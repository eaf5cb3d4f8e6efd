import { deleteMessages, firstMessageIdOf } from '../../src/store/messages.js';
import { expectSuccess, type FixtureName, type TestServer, type TestUser } from './server.js';

/**
 * Message fixtures, all through the HTTP API (POST /channels/create and
 * POST /messages), as real clients create them.
 */
type Who = TestUser | FixtureName;

const idOf = (t: TestServer, who: Who): number => (typeof who === 'string' ? t.users[who].id : who.id);

/**
 * Creates a channel (as `as`, default the owner) with these subscribers; returns its id.
 * Notification Bot's "channel events" message, which every new channel gets (as in
 * Zulip), is deleted again through the API unless `keepNotice`, so that message
 * fixtures hold only the messages a test sends (test/http/notifications.test.ts
 * covers the notice itself).
 */
export async function createChannel(
  t: TestServer,
  name: string,
  subscribers: readonly Who[],
  opts: Record<string, unknown> = {},
  as: Who = 'owner',
  keepNotice = false,
): Promise<number> {
  const body = expectSuccess(await t.post('/channels/create', { name, subscribers: subscribers.map((w) => idOf(t, w)), ...opts }, as));
  if (!keepNotice) await deleteChannelNotices(t, body.id);
  return body.id;
}

/**
 * Removes Notification Bot's messages from a channel (store level: a private channel's
 * notice is visible to nobody who could delete it through the API), and resets the
 * channel's first_message_id as deleting through the API would.
 */
export async function deleteChannelNotices(t: TestServer, channelId: number): Promise<void> {
  const db = t.app.ctx.db;
  const rows = await db
    .selectFrom('messages')
    .innerJoin('users', 'users.id', 'messages.sender_id')
    .select('messages.id')
    .where('messages.stream_id', '=', channelId)
    .where('users.email_lower', '=', 'notification-bot@zulip.com')
    .execute();
  if (rows.length === 0) return;
  await db.transaction().execute(async (tx) => {
    await deleteMessages(tx, rows.map((r) => r.id));
    const ch = await tx.selectFrom('channels').select('recipient_id').where('id', '=', channelId).executeTakeFirstOrThrow();
    await tx.updateTable('channels').set({ first_message_id: (await firstMessageIdOf(tx, ch.recipient_id!)) ?? null }).where('id', '=', channelId).execute();
  });
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

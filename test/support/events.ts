import { expect } from 'vitest';
import type { Caller } from '../../src/domain/context.js';
import type { ParleyEvent } from '../../src/events/types.js';
import { applyEventsForClient, clientView, effectiveFetchTypes, NO_CAPABILITIES } from '../../src/state/register.js';
import type { ClientCapabilities } from '../../src/state/types.js';
import { expectSuccess, type FixtureName, type TestServer, type TestUser } from './server.js';

/**
 * Event-queue helpers for tests, all through the HTTP API:
 *
 *   const q = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
 *   await t.post('/users/me/alert_words', { alert_words: ['x'] }, 'hamlet');
 *   const events = await getEvents(t, 'hamlet', q.queue_id, q.last_event_id);
 *   // -> [{ type: 'alert_words', alert_words: ['x'], id: 0 }]
 *
 *   // Stale /register state + the events since == a fresh /register state:
 *   const events = await expectStateConsistent(t, 'hamlet', () => t.patch('/settings', { ... }, 'hamlet'));
 *
 * Actions publish after commit and the HTTP response waits for delivery
 * into queues, so events are there as soon as the action's request returns.
 */

type Who = TestUser | FixtureName;

/** POST /register as `who`; params as a client sends them (values JSON-encoded by the test server). Returns the success body. */
export async function registerQueue(t: TestServer, who: Who, params: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await t.post('/register', params, who));
}

/**
 * GET /events: everything after lastEventId (acknowledging up to it).
 * Non-blocking by default; `{ block: true }` long-polls (until an event or
 * the test server's 1 s heartbeat).
 */
export async function getEvents(t: TestServer, who: Who, queueId: string, lastEventId = -1, opts: { block?: boolean } = {}): Promise<any[]> {
  const body = expectSuccess(await t.get('/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: !opts.block }, who));
  return body.events;
}

/** Events without their queue ids, for exact comparisons. */
export const withoutIds = (events: readonly any[]): any[] => events.map(({ id: _id, ...rest }) => rest);

async function callerOf(t: TestServer, who: Who): Promise<Caller> {
  const u = typeof who === 'string' ? t.users[who] : who;
  const row = await t.row(u.id);
  return {
    id: row.id,
    realmId: row.realm_id,
    role: row.role,
    isBot: row.is_bot === 1,
    botType: row.bot_type,
    email: row.delivery_email,
    deliveryEmail: row.delivery_email,
    fullName: row.full_name,
  };
}

/** Keys that legitimately differ between two registrations. */
const VOLATILE = ['queue_id', 'last_event_id', 'server_timestamp'];

/**
 * The consistency check of architecture.md convention 7: registers a queue
 * for `who` with `params`, runs the action, applies the events that reached
 * the queue to the stale state with the state modules' apply(), registers
 * again and expects both states to be equal (apart from queue ids and
 * `ignore`d keys). Returns the events (with ids) so the caller can assert
 * that the action did send what it should.
 */
export async function expectStateConsistent(
  t: TestServer,
  who: Who,
  action: () => Promise<unknown>,
  params: Record<string, unknown> = {},
  opts: { ignore?: readonly string[] } = {},
): Promise<any[]> {
  const before = await registerQueue(t, who, params);
  await action();
  const events = await getEvents(t, who, before.queue_id, before.last_event_id);
  const caps = { ...NO_CAPABILITIES, ...((params.client_capabilities as Partial<ClientCapabilities> | undefined) ?? {}) };
  const view = clientView(await callerOf(t, who), {
    narrow: (params.narrow as [string, string][] | undefined) ?? [],
    allPublicStreams: (params.all_public_streams as boolean | undefined) ?? false,
    includeSubscribers: params.include_subscribers === 'partial' ? 'partial' : params.include_subscribers === true || params.include_subscribers === 'true',
    capabilities: caps,
    applyMarkdown: (params.apply_markdown as boolean | undefined) ?? false,
    clientGravatar: (params.client_gravatar as boolean | undefined) ?? true,
    slimPresence: (params.slim_presence as boolean | undefined) ?? false,
  });
  const fetchTypes = effectiveFetchTypes(
    (params.event_types as string[] | undefined) ?? null,
    (params.fetch_event_types as string[] | undefined) ?? null,
  );
  const state = structuredClone(before);
  applyEventsForClient(state, withoutIds(events) as ParleyEvent[], view, fetchTypes);
  const after = await registerQueue(t, who, params);
  await t.delete('/events', { queue_id: after.queue_id }, who);
  await t.delete('/events', { queue_id: before.queue_id }, who);
  for (const k of [...VOLATILE, ...(opts.ignore ?? [])]) {
    delete state[k];
    delete after[k];
  }
  expect(state).toEqual(after);
  return events;
}

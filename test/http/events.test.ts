import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_CAPABILITIES } from '../../src/state/register.js';
import { EventQueues, newQueueId } from '../../src/events/queues.js';
import { MemoryQueueStore } from '../../src/events/queue-store.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { getEvents, registerQueue, withoutIds } from '../support/events.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const addWord = (word: string, who = 'hamlet' as const) => t.post('/users/me/alert_words', { alert_words: [word] }, who);
const badQueue = (id: string) => ({ queue_id: id });

describe('GET /events', () => {
  it('dont_block returns at once; last_event_id acknowledges; ids increase per queue', async () => {
    const q = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    expect(q.last_event_id).toBe(-1);
    const empty = expectSuccess(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'hamlet'));
    // queue_id is only added when the request named no queue or had to wait.
    expect(empty).toEqual({ result: 'success', msg: '', events: [] });
    await addWord('apple');
    await addWord('pear');
    const events = await getEvents(t, 'hamlet', q.queue_id, -1);
    expect(events).toEqual([
      { type: 'alert_words', alert_words: ['apple'], id: 0 },
      { type: 'alert_words', alert_words: ['apple', 'pear'], id: 1 },
    ]);
    // Acknowledging 0 leaves 1; acknowledging 1 empties the queue.
    expect((await getEvents(t, 'hamlet', q.queue_id, 0)).map((e) => e.id)).toEqual([1]);
    expect(await getEvents(t, 'hamlet', q.queue_id, 1)).toEqual([]);
    await addWord('plum');
    expect((await getEvents(t, 'hamlet', q.queue_id, 1)).map((e) => e.id)).toEqual([2]);
  });

  it('acknowledging out of order: pruned and unknown ids', async () => {
    const q = await registerQueue(t, 'cordelia', { event_types: ['alert_words'] });
    await addWord('a1', 'cordelia' as never);
    await addWord('a2', 'cordelia' as never);
    await getEvents(t, 'cordelia', q.queue_id, 0);
    expectError(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'cordelia'), 400, 'BAD_REQUEST', 'An event newer than -1 has already been pruned!');
    expectError(await t.get('/events', { queue_id: q.queue_id, last_event_id: 7, dont_block: true }, 'cordelia'), 400, 'BAD_REQUEST', 'Event 7 was not in this queue');
  });

  it('long-polls until an event arrives, then answers with it and the queue id', async () => {
    const q = await registerQueue(t, 'othello', { event_types: ['alert_words'] });
    const poll = t.get('/events', { queue_id: q.queue_id, last_event_id: -1 }, 'othello');
    await new Promise((r) => setTimeout(r, 50));
    await t.post('/users/me/alert_words', { alert_words: ['waited'] }, 'othello');
    const body = expectSuccess(await poll);
    expect(body).toEqual({ result: 'success', msg: '', events: [{ type: 'alert_words', alert_words: ['waited'], id: 0 }], queue_id: q.queue_id });
  });

  it('a blocking poll with nothing to say gets a heartbeat event, which uses an id', async () => {
    const q = await registerQueue(t, 'shiva', { event_types: ['alert_words'] });
    const started = Date.now();
    const body = expectSuccess(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1 }, 'shiva'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // the test server's heartbeat is 1 s
    expect(body.events).toEqual([{ type: 'heartbeat', id: 0 }]);
    expect(body.queue_id).toBe(q.queue_id);
    await t.post('/users/me/alert_words', { alert_words: ['after'] }, 'shiva');
    expect(await getEvents(t, 'shiva', q.queue_id, 0)).toEqual([{ type: 'alert_words', alert_words: ['after'], id: 1 }]);
  });

  it('a new poll on a queue ends the poll still waiting on it', async () => {
    const q = await registerQueue(t, 'iago', { event_types: ['alert_words'] });
    const first = t.get('/events', { queue_id: q.queue_id, last_event_id: -1 }, 'iago');
    await new Promise((r) => setTimeout(r, 50));
    const second = await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'iago');
    expect(expectSuccess(second).events).toEqual([]);
    expect(expectSuccess(await first)).toEqual({ result: 'success', msg: '', events: [], queue_id: q.queue_id });
  });

  it('parameter errors', async () => {
    expectError(await t.get('/events', {}, 'hamlet'), 400, 'BAD_REQUEST', "Missing 'queue_id' argument");
    const q = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    expectError(await t.get('/events', { queue_id: q.queue_id }, 'hamlet'), 400, 'BAD_REQUEST', "Missing 'last_event_id' argument");
    expectError(await t.get('/events', { queue_id: q.queue_id, last_event_id: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'last_event_id is not valid JSON');
    expectError(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: 'yes' }, 'hamlet'), 400, 'BAD_REQUEST', 'dont_block is not valid JSON');
    expectError(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1 }, null), 401, 'UNAUTHORIZED', 'Not logged in: API authentication or user session required');
  });

  it('without queue_id and with dont_block, registers a queue (with the registration parameters)', async () => {
    const body = expectSuccess(await t.get('/events', { dont_block: true, event_types: ['alert_words'] }, 'hamlet'));
    expect(body.events).toEqual([]);
    expect(body.queue_id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    await t.post('/users/me/alert_words', { alert_words: ['new queue'] }, 'hamlet');
    const events = await getEvents(t, 'hamlet', body.queue_id, -1);
    expect(withoutIds(events)).toEqual([{ type: 'alert_words', alert_words: expect.arrayContaining(['new queue']) }]);
  });
});

describe('queue ids', () => {
  it('are 16 characters of base64url (96 random bits), none repeated', () => {
    const ids = Array.from({ length: 10_000 }, newQueueId);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('BAD_EVENT_QUEUE_ID', () => {
  it('unknown queue, another user\'s queue, deleted queue', async () => {
    expectError(await t.get('/events', { queue_id: 'nope', last_event_id: -1, dont_block: true }, 'hamlet'), 400, 'BAD_EVENT_QUEUE_ID', 'Bad event queue ID: nope', badQueue('nope'));
    const q = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    expectError(
      await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'cordelia'),
      400,
      'BAD_EVENT_QUEUE_ID',
      `Bad event queue ID: ${q.queue_id}`,
      badQueue(q.queue_id),
    );
    expectError(await t.delete('/events', { queue_id: q.queue_id }, 'cordelia'), 400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${q.queue_id}`, badQueue(q.queue_id));
    // The refused requests changed nothing: the owner still polls it.
    expectSuccess(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'hamlet'));
    expect(expectSuccess(await t.delete('/events', { queue_id: q.queue_id }, 'hamlet'))).toEqual({ result: 'success', msg: '' });
    expectError(await t.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'hamlet'), 400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${q.queue_id}`, badQueue(q.queue_id));
    expectError(await t.delete('/events', { queue_id: q.queue_id }, 'hamlet'), 400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${q.queue_id}`, badQueue(q.queue_id));
    expectError(await t.delete('/events', {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'queue_id' argument", { var_name: 'queue_id' });
  });

  it('DELETE /events answers a parked poll before the queue goes', async () => {
    const q = await registerQueue(t, 'othello', { event_types: ['alert_words'] });
    const poll = t.get('/events', { queue_id: q.queue_id, last_event_id: -1 }, 'othello');
    await new Promise((r) => setTimeout(r, 50));
    expectSuccess(await t.delete('/events', { queue_id: q.queue_id }, 'othello'));
    expect(expectSuccess(await poll).events).toEqual([]);
  });
});

describe('fan-out and filters', () => {
  it('two queues of one user both get the event; a queue for other types gets nothing; other users nothing', async () => {
    const a = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    const b = await registerQueue(t, 'hamlet');
    const other = await registerQueue(t, 'hamlet', { event_types: ['realm_user'] });
    const cordelia = await registerQueue(t, 'cordelia');
    const deliveries = await t.captureEvents(() => addWord('fanout'));
    expect(deliveries.map((d) => d.userIds)).toEqual([[t.users.hamlet.id]]);
    const ea = await getEvents(t, 'hamlet', a.queue_id, a.last_event_id);
    const eb = await getEvents(t, 'hamlet', b.queue_id, b.last_event_id);
    expect(withoutIds(ea)).toEqual(withoutIds(eb));
    expect(ea).toHaveLength(1);
    expect(ea[0].type).toBe('alert_words');
    expect(await getEvents(t, 'hamlet', other.queue_id, other.last_event_id)).toEqual([]);
    expect(await getEvents(t, 'cordelia', cordelia.queue_id, cordelia.last_event_id)).toEqual([]);
  });

  it('client_gravatar is applied per queue at delivery (realm_user add)', async () => {
    const withGravatar = await registerQueue(t, 'iago', { event_types: ['realm_user'], client_gravatar: true });
    const withUrls = await registerQueue(t, 'iago', { event_types: ['realm_user'], client_gravatar: false });
    const u = await t.createUser({ email: 'gravatar-add@zulip.com', fullName: 'Gravatar Add' });
    const [g] = await getEvents(t, 'iago', withGravatar.queue_id, -1);
    const [plain] = await getEvents(t, 'iago', withUrls.queue_id, -1);
    expect(g.person.user_id).toBe(u.id);
    expect(g.person.avatar_url).toBeNull();
    expect(plain.person.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
    expect({ ...g.person, avatar_url: 'x' }).toEqual({ ...plain.person, avatar_url: 'x' });
  });

  it('hints are stripped; user_list_incomplete clients get no add stubs for inaccessible users', async () => {
    const full = await registerQueue(t, 'polonius', { event_types: ['realm_user'] });
    const incomplete = await registerQueue(t, 'polonius', {
      event_types: ['realm_user'],
      client_capabilities: { notification_settings_null: true, user_list_incomplete: true },
    });
    const person = { user_id: 4242, full_name: 'Unknown user', email: 'user4242@zulip.testserver', delivery_email: null, avatar_url: 'https://x/y', is_active: true };
    await t.app.ctx.bus.publish([{ realmId: t.realmId, event: { type: 'realm_user', op: 'add', person, __inaccessible_user: true }, userIds: [t.users.polonius.id] }]);
    expect(withoutIds(await getEvents(t, 'polonius', full.queue_id, -1))).toEqual([{ type: 'realm_user', op: 'add', person }]);
    expect(await getEvents(t, 'polonius', incomplete.queue_id, -1)).toEqual([]);
  });

  it('narrowed queues get only matching message events; all_public_streams queues see public channel messages', async () => {
    const narrowed = await registerQueue(t, 'hamlet', { event_types: ['message'], narrow: [['stream', 'Denmark']] });
    const all = await registerQueue(t, 'othello', { event_types: ['message'], all_public_streams: true });
    const msg = (id: number, stream: string) => ({
      type: 'message',
      message: { id, type: 'stream', display_recipient: stream, subject: 'topic', sender_email: 'iago@zulip.com' },
      flags: [],
      __public_stream_message: true,
    });
    await t.app.ctx.bus.publish([
      { realmId: t.realmId, event: msg(1, 'Denmark'), userIds: [t.users.hamlet.id] },
      { realmId: t.realmId, event: msg(2, 'Verona'), userIds: [t.users.hamlet.id] },
    ]);
    expect((await getEvents(t, 'hamlet', narrowed.queue_id, -1)).map((e) => e.message.id)).toEqual([1]);
    const seen = await getEvents(t, 'othello', all.queue_id, -1);
    expect(seen.map((e) => e.message.id)).toEqual([1, 2]);
    expect(seen[0]).not.toHaveProperty('__public_stream_message');
  });

  it('register refuses narrows a queue cannot filter by', async () => {
    expectError(await t.post('/register', { narrow: [['search', 'x']] }, 'hamlet'), 400, 'BAD_REQUEST', 'Operator search not supported.');
    expectError(await t.post('/register', { narrow: [['is', 'followed']] }, 'hamlet'), 400, 'BAD_REQUEST', 'Operand followed not supported.');
  });

  it('clients without bulk_message_deletion get one delete_message event per message', async () => {
    const bulk = await registerQueue(t, 'cordelia', { event_types: ['delete_message'], client_capabilities: { notification_settings_null: true, bulk_message_deletion: true } });
    const single = await registerQueue(t, 'cordelia', { event_types: ['delete_message'] });
    const event = { type: 'delete_message', message_ids: [5, 6], message_type: 'stream', stream_id: 1, topic: '' };
    await t.app.ctx.bus.publish([{ realmId: t.realmId, event, userIds: [t.users.cordelia.id] }]);
    expect(withoutIds(await getEvents(t, 'cordelia', bulk.queue_id, -1))).toEqual([{ ...event, topic: 'general chat' }]);
    expect(withoutIds(await getEvents(t, 'cordelia', single.queue_id, -1))).toEqual([
      { type: 'delete_message', message_id: 5, message_type: 'stream', stream_id: 1, topic: 'general chat' },
      { type: 'delete_message', message_id: 6, message_type: 'stream', stream_id: 1, topic: 'general chat' },
    ]);
  });
});

describe('queue lifetime', () => {
  it('idle queues expire after 10 minutes; queue_lifespan_secs extends that; a parked poll keeps a queue', async () => {
    const queues = t.app.ctx.queues;
    const short = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    const long = await registerQueue(t, 'hamlet', { event_types: ['alert_words'], queue_lifespan_secs: 3600 });
    const parked = await registerQueue(t, 'hamlet', { event_types: ['alert_words'] });
    const poll = t.get('/events', { queue_id: parked.queue_id, last_event_id: -1 }, 'hamlet');
    await new Promise((r) => setTimeout(r, 50));
    const past = Date.now() - 601_000;
    for (const q of [short, long, parked]) await queues.store.touch(q.queue_id, past);
    await queues.gc();
    expectError(await t.get('/events', { queue_id: short.queue_id, last_event_id: -1, dont_block: true }, 'hamlet'), 400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${short.queue_id}`, badQueue(short.queue_id));
    expectSuccess(await t.get('/events', { queue_id: long.queue_id, last_event_id: -1, dont_block: true }, 'hamlet'));
    expect((await queues.store.get(parked.queue_id))?.id).toBe(parked.queue_id);
    expectSuccess(await poll);
    await queues.store.touch(long.queue_id, Date.now() - 3601_000);
    await queues.gc();
    expect(await queues.store.get(long.queue_id)).toBeUndefined();
  });

  it('queue_lifespan_secs is capped at a week', async () => {
    const q = await registerQueue(t, 'hamlet', { event_types: ['alert_words'], queue_lifespan_secs: 10 ** 9 });
    expect((await t.app.ctx.queues.store.get(q.queue_id))?.timeoutSecs).toBe(7 * 24 * 3600);
  });

  it('deactivating a user drops their queues; a parked poll is answered, not cut', async () => {
    const u = await t.createUser({ email: 'leaving@zulip.com', fullName: 'Leaving User' });
    const q = await registerQueue(t, u, { event_types: ['realm_user'] });
    const q2 = await registerQueue(t, u);
    const poll = t.get('/events', { queue_id: q.queue_id, last_event_id: -1 }, u);
    await new Promise((r) => setTimeout(r, 50));
    expectSuccess(await t.delete(`/users/${u.id}`, {}, 'iago'));
    // The deactivation event goes to the remaining active users, as in Zulip.
    expect(expectSuccess(await poll)).toEqual({ result: 'success', msg: '', events: [], queue_id: q.queue_id });
    expect(await t.app.ctx.queues.store.get(q.queue_id)).toBeUndefined();
    expect(await t.app.ctx.queues.store.get(q2.queue_id)).toBeUndefined();
  });
});

describe('backlog cap', () => {
  it('a queue past its backlog cap is dropped; its client gets BAD_EVENT_QUEUE_ID and re-registers', async () => {
    const small = await startTestServer({ eventQueueMaxEvents: 3 });
    try {
      const q = await registerQueue(small, 'hamlet', { event_types: ['alert_words'] });
      for (const w of ['a', 'b', 'c']) await small.post('/users/me/alert_words', { alert_words: [w] }, 'hamlet');
      expect(await getEvents(small, 'hamlet', q.queue_id, -1)).toHaveLength(3);
      await small.post('/users/me/alert_words', { alert_words: ['d'] }, 'hamlet');
      expectError(await small.get('/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true }, 'hamlet'), 400, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${q.queue_id}`, badQueue(q.queue_id));
      // Acknowledged events free room: a queue that keeps up is never dropped.
      const q2 = await registerQueue(small, 'hamlet', { event_types: ['alert_words'] });
      let last = -1;
      for (const w of ['e', 'f', 'g', 'h', 'i']) {
        await small.post('/users/me/alert_words', { alert_words: [w] }, 'hamlet');
        const ev = await getEvents(small, 'hamlet', q2.queue_id, last);
        last = ev[ev.length - 1].id;
      }
      expect(last).toBe(4);
    } finally {
      await small.close();
    }
  });
});

describe('shutdown and restart', () => {
  function spec(userId: number) {
    return {
      userId,
      realmId: 1,
      eventTypes: null,
      narrow: [],
      capabilities: NO_CAPABILITIES,
      applyMarkdown: false,
      clientGravatar: true,
      slimPresence: false,
      allPublicStreams: false,
      includeSubscribers: false as const,
      clientName: 'test',
      lifespanSecs: 0,
    };
  }

  it('drain answers parked polls with a heartbeat; persist + restore keeps queues and pending events', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-queues-'));
    try {
      const opts = { heartbeatMinMs: 60_000, heartbeatJitterMs: 0, dataDir: dir };
      const a = new EventQueues(new MemoryQueueStore(100), opts);
      const q1 = await a.register(spec(7));
      const q2 = await a.register(spec(8));
      await a.dispatch([{ realmId: 1, event: { type: 'alert_words', alert_words: ['kept'] }, userIds: [7] }]);
      const parked = a.poll(8, q2.id, -1, false);
      await new Promise((r) => setTimeout(r, 20));
      await a.drain();
      expect(await parked).toEqual({ events: [{ type: 'heartbeat', id: 0 }], queue_id: q2.id });
      expect(await a.persist()).toBe(2);

      const b = new EventQueues(new MemoryQueueStore(100), opts);
      expect(await b.restore()).toBe(2);
      expect(await b.poll(7, q1.id, -1, true)).toEqual({ events: [{ type: 'alert_words', alert_words: ['kept'], id: 0 }] });
      expect(await b.poll(8, q2.id, 0, true)).toEqual({ events: [] });
      await b.dispatch([{ realmId: 1, event: { type: 'alert_words', alert_words: ['after'] }, userIds: [8] }]);
      expect(await b.poll(8, q2.id, 0, true)).toEqual({ events: [{ type: 'alert_words', alert_words: ['after'], id: 1 }] });
      // The snapshot is read once: a later start does not bring these queues back.
      expect(await new EventQueues(new MemoryQueueStore(100), opts).restore()).toBe(0);
      await b.drain();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

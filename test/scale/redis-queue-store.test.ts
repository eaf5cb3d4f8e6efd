import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { QueueDescriptor } from '../../src/events/delivery.js';
import type { AppendedEvents } from '../../src/events/queue-store.js';
import { EventQueues, type PollAnswer } from '../../src/events/queues.js';
import { QUEUE_LAYOUT, RedisQueueStore } from '../../src/events/redis-queue-store.js';
import type { ParleyEvent } from '../../src/events/types.js';
import { purgeRedisPrefix } from '../../src/scale/redis.js';
import { TEST_REDIS_URL } from '../support/server.js';

/**
 * The Redis queue store as two processes use it: two stores (each with its
 * own command and subscriber connections) on one prefix. Covers the batched
 * poll steps and the parked poll answered from the append's notification.
 */

const prefix = `parley:test:rqs:${randomBytes(4).toString('hex')}:`;
/** Where the stores' keys start (the layout's name after the prefix). */
const keys = prefix + QUEUE_LAYOUT;
const conns: Redis[] = [];
const connect = (): Redis => {
  const r = new Redis(TEST_REDIS_URL, { enableAutoPipelining: true });
  conns.push(r);
  return r;
};
async function process2(): Promise<RedisQueueStore> {
  const s = new RedisQueueStore(connect(), connect(), prefix, 100);
  await s.ready();
  return s;
}
afterAll(async () => {
  for (const c of conns) c.disconnect();
  await purgeRedisPrefix(TEST_REDIS_URL, prefix);
});

const desc = (id: string, userId = 1): QueueDescriptor =>
  ({ id, userId, realmId: 1, eventTypes: null, narrow: [], capabilities: {}, applyMarkdown: false, clientGravatar: false, slimPresence: false, allPublicStreams: false, includeSubscribers: false, clientName: 'test', timeoutSecs: 600 }) as unknown as QueueDescriptor;
const qid = (name: string): string => `${name}-${randomBytes(4).toString('hex')}`;
/** Resolves when `store` hears an append notification naming queue `id` (its listeners have run). */
const heard = (store: RedisQueueStore, id: string): Promise<AppendedEvents | undefined> =>
  new Promise((resolve) => {
    const off = store.subscribe((grown, _dropped, appended) => {
      if (!grown.includes(id)) return;
      off();
      resolve(appended);
    });
  });
const queues = (store: RedisQueueStore): EventQueues => new EventQueues(store, { heartbeatMinMs: 60_000, heartbeatJitterMs: 0, dataDir: null });

/** Two processes and a new queue of user 1 with a poll parked on A (its first poll step: A is o). */
async function parkedOnA(): Promise<{ a: RedisQueueStore; b: RedisQueueStore; qa: EventQueues; qb: EventQueues; d: QueueDescriptor; first: Promise<PollAnswer> }> {
  const a = await process2();
  const b = await process2();
  const [qa, qb] = [queues(a), queues(b)];
  const d = await qa.register({ ...desc(''), lifespanSecs: 0 });
  const first = qa.pollAnswer(1, d.id, -1, false);
  await vi.waitFor(() => expect(qa.parkedPolls).toBe(1));
  return { a, b, qa, qb, d, first };
}

/**
 * Records the commands a process sends on its command connection from now on, in order; with
 * `replies`, each reply too, as it arrives ("reply <name>").
 */
const commands = (store: RedisQueueStore, { replies = false } = {}): { names: string[] } => {
  const r = (store as unknown as { r: Redis }).r;
  const seen = { names: [] as string[] };
  const send = r.sendCommand.bind(r);
  vi.spyOn(r, 'sendCommand').mockImplementation((c, ...rest) => {
    const { name, promise } = c as { name: string; promise: Promise<unknown> };
    seen.names.push(name);
    if (replies) {
      promise.then(
        () => seen.names.push('reply ' + name),
        () => seen.names.push('failed ' + name),
      );
    }
    return send(c, ...rest);
  });
  return seen;
};

describe('Redis queue store across two processes', () => {
  it('runs the poll steps of one turn as one script, in order, each with its own answer', async () => {
    const a = await process2();
    const [q1, q2, q3] = [qid('a'), qid('b'), qid('c')];
    await a.create(desc(q1), 0);
    await a.create(desc(q2, 2), 0);
    await a.create(desc(q3), 0);
    const ev = (n: number): ParleyEvent => ({ type: 'x', n });
    await a.append(new Map([[q1, [ev(0), ev(1), ev(2)]], [q3, [{ type: 'own', id: 'k' } as ParleyEvent]]]));
    const cmd = (a as unknown as { r: { parleyPollMany: (...args: unknown[]) => Promise<unknown> } }).r;
    const script = vi.spyOn(cmd, 'parleyPollMany');
    const steps = await Promise.all([
      a.pollStep(q1, 1, 0, true, 1000), // acknowledges 0: 1 and 2 pending
      a.pollStep(q1, 1, 1, false, 1000), // after the first, in order: acknowledges 1
      a.pollStep(q2, 1, -1, true, 1000), // another user's queue
      a.pollStep(q1, 1, -1, false, 1000), // already pruned by the steps before it
      a.pollStep(q1, 1, 7, false, 1000), // beyond the newest event
      a.pollStep('nope', 1, -1, true, 1000),
      a.pollStep(q3, 1, -1, true, 1000), // an event with its own id key
    ]);
    // One script call carrying all seven steps (ioredis's auto-pipeline may invoke the method object twice for it).
    const calls = new Set(script.mock.calls.map((c) => JSON.stringify(c)));
    expect(calls.size).toBe(1);
    // Prefix, time, process, no write-back records (0), then four arguments per step.
    expect(script.mock.calls[0]).toHaveLength(4 + 4 * 7);
    expect(steps).toEqual([
      { status: 'ok', eventsJson: '[{"type":"x","n":1,"id":1},{"type":"x","n":2,"id":2}]', nextEventId: 3 },
      { status: 'ok', eventsJson: '[{"type":"x","n":2,"id":2}]', nextEventId: 3 },
      { status: 'missing' },
      { status: 'pruned' },
      { status: 'not_in_queue' },
      { status: 'missing' },
      { status: 'ok', eventsJson: '[{"type":"own","id":0}]', nextEventId: 1 },
    ]);
    // The acknowledgements were stored (the last one, past the newest event, still pruned all): another process sees them.
    const b = await process2();
    expect(await b.pendingJson(q1)).toBe('[]');
  });

  it("the notification carries the appended events, and gives them only for the first id they really have", async () => {
    const a = await process2();
    const b = await process2();
    const [q1, q2] = [qid('d'), qid('e')];
    await a.create(desc(q1), 0);
    await a.create(desc(q2), 0);
    // B parks polls on both (a blocking poll step makes B the process notified of their growth).
    await b.pollStep(q1, 1, -1, true, 0);
    await b.pollStep(q2, 1, -1, true, 0);
    const first = heard(b, q2);
    await a.append(new Map([[q2, [{ type: 'x', n: 0 }]]]));
    await first;
    const seen: { grown: readonly string[]; appended?: AppendedEvents }[] = [];
    b.subscribe((grown, _dropped, appended) => seen.push({ grown, appended }));
    const got = heard(b, q1);
    const shared: ParleyEvent = { type: 'message', message: { content: 'line\nbreak "quoted" é' } };
    await a.append(new Map([[q1, [shared, { type: 'own', id: 'k' } as ParleyEvent]], [q2, [shared]]]));
    await got;
    expect(seen).toHaveLength(1);
    const { grown, appended } = seen[0]!;
    expect([...grown].sort()).toEqual([q1, q2].sort());
    const i1 = grown.indexOf(q1);
    const i2 = grown.indexOf(q2);
    // Byte for byte what reading the queue back gives.
    expect(appended!.json(i1, 0)).toBe(await b.pendingJson(q1));
    expect(appended!.json(i1, 0)).toBe('[{"type":"message","message":{"content":"line\\nbreak \\"quoted\\" é"},"id":0},{"type":"own","id":1}]');
    expect(appended!.json(i2, 1)).toBe('[{"type":"message","message":{"content":"line\\nbreak \\"quoted\\" é"},"id":1}]');
    // Another first id: a poll that expected it must read its queue instead.
    expect(appended!.json(i1, 1)).toBeUndefined();
    expect(appended!.json(i2, 0)).toBeUndefined();
    expect(appended!.json(5, 0)).toBeUndefined();
  });

  it('a poll parked on process B answers from the append made by process A, without reading its queue back', async () => {
    const a = await process2();
    const b = await process2();
    const qa = queues(a);
    const qb = queues(b);
    const desc1 = await qa.register({ ...desc(''), lifespanSecs: 0 });
    // No poll has parked on it yet: this growth is published to no process.
    await a.append(new Map([[desc1.id, [{ type: 'x', n: 0 }]]]));
    // Acknowledges event 0 and parks on B (nothing pending; the next id is 1).
    const reads = vi.spyOn(b, 'pendingJsonMany');
    const parked = qb.pollAnswer(1, desc1.id, 0, false);
    await vi.waitFor(() => expect(qb.parkedPolls).toBe(1));
    const notifiedA: string[] = [];
    const offA = a.subscribe((grown, _d, appended) => {
      if (appended !== undefined) notifiedA.push(...grown);
    });
    await a.append(new Map([[desc1.id, [{ type: 'x', n: 1 }, { type: 'x', n: 2 }]]]));
    const answer = await parked;
    // Only B, where the poll is parked, was notified (A appended, but holds no poll on the queue).
    await a.append(new Map([[desc1.id, []]]));
    offA();
    expect(notifiedA).toEqual([]);
    expect(answer.eventsJson).toBe('[{"type":"x","n":1,"id":1},{"type":"x","n":2,"id":2}]');
    expect(answer.queue_id).toBe(desc1.id);
    expect(reads).not.toHaveBeenCalled();
    // The next poll (on A this time) acknowledges them; a later append answers a poll parked there.
    const next = qa.pollAnswer(1, desc1.id, 2, false);
    await vi.waitFor(() => expect(qa.parkedPolls).toBe(1));
    await b.append(new Map([[desc1.id, [{ type: 'heartbeat' }]]]));
    expect((await next).eventsJson).toBe('[{"type":"heartbeat","id":3}]');
    expect(await a.pending(desc1.id)).toEqual([{ id: 3, event: { type: 'heartbeat' } }]);
  });

  it('a parked poll whose expected append it did not see reads its queue (no event is skipped)', async () => {
    const a = await process2();
    const b = await process2();
    const qb = queues(b);
    const d = await queues(a).register({ ...desc(''), lifespanSecs: 0 });
    const parked = qb.pollAnswer(1, d.id, -1, false);
    await vi.waitFor(() => expect(qb.parkedPolls).toBe(1));
    // B stops hearing notifications for a moment: the append of id 0 is missed, the one of id 1 is heard.
    const sub = (b as unknown as { sub: Redis }).sub;
    const channel = (b as unknown as { channel: string }).channel;
    await sub.unsubscribe(channel);
    await a.append(new Map([[d.id, [{ type: 'x', n: 0 }]]]));
    await sub.subscribe(channel);
    const reads = vi.spyOn(b, 'pendingJsonMany');
    await a.append(new Map([[d.id, [{ type: 'x', n: 1 }]]]));
    expect((await parked).eventsJson).toBe('[{"type":"x","n":0,"id":0},{"type":"x","n":1,"id":1}]');
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('acknowledges, prunes, reports and snapshots with the ids of the in-process store (ids follow from the position)', async () => {
    const a = await process2();
    const q = qid('ids');
    await a.create(desc(q), 0);
    const ev = (n: number): ParleyEvent => ({ type: 'x', n });
    expect(await a.append(new Map([[q, [ev(0), ev(1), ev(2)]]]))).toEqual({ grown: 1, dropped: [] });
    expect(await a.pending(q)).toEqual([0, 1, 2].map((n) => ({ id: n, event: ev(n) })));
    expect(await a.acknowledge(q, 0)).toBe('ok');
    expect(await a.pendingJson(q)).toBe('[{"type":"x","n":1,"id":1},{"type":"x","n":2,"id":2}]');
    expect(await a.acknowledge(q, -1)).toBe('pruned');
    expect(await a.acknowledge(q, 1)).toBe('ok');
    // Past the newest event: everything goes, and the id was not in the queue.
    expect(await a.acknowledge(q, 9)).toBe('not_in_queue');
    expect(await a.pending(q)).toEqual([]);
    await a.append(new Map([[q, [ev(3)]]]));
    expect(await a.pending(q)).toEqual([{ id: 3, event: ev(3) }]);
    expect(await a.acknowledge(q, 2)).toBe('ok');
    expect(await a.acknowledge(q, 3)).toBe('ok');
    // An event with an id key of its own is kept whole (":" entry); the wire id is the queue's.
    await a.append(new Map([[q, [ev(4), { type: 'odd', id: 'mine' } as ParleyEvent]]]));
    expect(await a.pendingJsonMany([q, qid('none')])).toEqual(['[{"type":"x","n":4,"id":4},{"type":"odd","id":5}]', '[]']);
    const snap = (await a.snapshot()).find((s) => s.descriptor.id === q)!;
    expect([snap.nextEventId, snap.newestPrunedId, snap.events]).toEqual([6, 3, [{ id: 4, event: ev(4) }, { id: 5, event: { type: 'odd', id: 'mine' } }]]);
    await a.remove([q]);
    await a.restore([snap]);
    expect(await a.pendingJson(q)).toBe('[{"type":"x","n":4,"id":4},{"type":"odd","id":5}]');
    expect(await a.acknowledge(q, 4)).toBe('ok');
    await a.append(new Map([[q, [ev(6)]]]));
    expect((await a.pending(q)).map((e) => e.id)).toEqual([5, 6]);
    // A blocking poll step reads the same ids and reports the next one.
    expect(await a.pollStep(q, 1, 5, true, 1_000)).toEqual({ status: 'ok', eventsJson: '[{"type":"x","n":6,"id":6}]', nextEventId: 7 });
  });

  it("the last connection (kept only in the expiry deadline) moves with a blocking poll and survives snapshot and restore", async () => {
    const a = await process2();
    const q = qid('l');
    await a.create(desc(q), 5_000);
    const mine = async (): Promise<number | undefined> => (await a.snapshot()).find((s) => s.descriptor.id === q)?.lastConnection;
    expect(await mine()).toBe(5_000);
    await a.pollStep(q, 1, -1, false, 7_000); // not blocking: no connection recorded
    expect(await mine()).toBe(5_000);
    await a.pollStep(q, 1, -1, true, 9_000);
    expect(await mine()).toBe(9_000);
    await a.touch(q, 11_000);
    const snap = (await a.snapshot()).find((s) => s.descriptor.id === q)!;
    expect(snap.lastConnection).toBe(11_000);
    await a.remove([q]);
    await a.restore([snap]);
    expect(await mine()).toBe(11_000);
    expect(await a.expired(11_000 + 600_000 - 1, new Set())).not.toContain(q);
    expect(await a.expired(11_000 + 600_000, new Set())).toContain(q);
  });

  /** Records the notifications `store` hears from Redis (those that carry the appended events). */
  const notified = (store: RedisQueueStore): string[] => {
    const ids: string[] = [];
    store.subscribe((grown, _d, appended) => {
      if (appended !== undefined) ids.push(...grown);
    });
    return ids;
  };

  it("a process hears only the growth of queues it parked polls on", async () => {
    const a = await process2();
    const b = await process2();
    const [qa, qb] = [queues(a), queues(b)];
    const d1 = await qa.register({ ...desc(''), lifespanSecs: 0 });
    const d2 = await qa.register({ ...desc(''), lifespanSecs: 0 });
    const d3 = await qa.register({ ...desc(''), lifespanSecs: 0 });
    const [onA, onB] = [notified(a), notified(b)];
    const p1 = qa.pollAnswer(1, d1.id, -1, false);
    const p2 = qb.pollAnswer(1, d2.id, -1, false);
    await vi.waitFor(() => expect([qa.parkedPolls, qb.parkedPolls]).toEqual([1, 1]));
    const e: ParleyEvent = { type: 'x', n: 0 };
    // d3 has no parked poll anywhere: its growth reaches no process, and its next poll reads it.
    await b.append(new Map([[d1.id, [e]], [d2.id, [e]], [d3.id, [e]]]));
    expect((await p1).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
    expect((await p2).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
    expect(onA).toEqual([d1.id]);
    expect(onB).toEqual([d2.id]);
    expect((await qb.pollAnswer(1, d3.id, -1, false)).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
  });

  it('a poll moving to another process ends the one parked on the first, and later growth reaches the second only', async () => {
    const a = await process2();
    const b = await process2();
    const [qa, qb] = [queues(a), queues(b)];
    const d = await qa.register({ ...desc(''), lifespanSecs: 0 });
    const onA = notified(a);
    const first = qa.pollAnswer(1, d.id, -1, false);
    await vi.waitFor(() => expect(qa.parkedPolls).toBe(1));
    // The client polls again through B: A's poll ends (with what is pending, nothing), as a new poll does in one process.
    const second = qb.pollAnswer(1, d.id, -1, false);
    expect((await first).eventsJson).toBe('[]');
    await vi.waitFor(() => expect([qa.parkedPolls, qb.parkedPolls]).toEqual([0, 1]));
    const before = onA.length;
    await a.append(new Map([[d.id, [{ type: 'x', n: 0 }]]]));
    expect((await second).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
    expect(onA.slice(before)).toEqual([]);
  });

  it("a poll left parked on a process that missed the move is woken by that process's own append", async () => {
    const { a, qa, qb, d, first } = await parkedOnA();
    const sub = (a as unknown as { sub: Redis }).sub;
    const channel = (a as unknown as { channel: string }).channel;
    await sub.unsubscribe(channel);
    const second = qb.pollAnswer(1, d.id, -1, false);
    await vi.waitFor(() => expect(qb.parkedPolls).toBe(1));
    await sub.subscribe(channel);
    expect(qa.parkedPolls).toBe(1);
    // A's heartbeat for it (an append by A, whose notification goes to B) answers A's stale poll too.
    await a.append(new Map([[d.id, [{ type: 'heartbeat' }]]]));
    expect((await first).eventsJson).toBe('[{"type":"heartbeat","id":0}]');
    expect((await second).eventsJson).toBe('[{"type":"heartbeat","id":0}]');
  });

  it('drops a queue past its backlog cap, counting only the entries still held (acknowledged ones are gone)', async () => {
    // The append script takes the backlog's length from the list (RPUSH's answer): acknowledged entries are trimmed.
    const a = new RedisQueueStore(connect(), connect(), prefix, 3);
    await a.ready();
    const [q, other] = [qid('cap'), qid('cap-other')];
    await a.create(desc(q, 5), 0);
    await a.create(desc(other, 5), 0);
    const ev = (n: number): ParleyEvent => ({ type: 'x', n });
    expect(await a.append(new Map([[q, [ev(0), ev(1), ev(2)]]]))).toEqual({ grown: 1, dropped: [] });
    expect(await a.acknowledge(q, 1)).toBe('ok');
    // One held (id 2) + two appended = 3: at the cap, kept.
    expect(await a.append(new Map([[q, [ev(3), ev(4)]]]))).toEqual({ grown: 1, dropped: [] });
    expect(await a.pendingJson(q)).toBe('[{"type":"x","n":2,"id":2},{"type":"x","n":3,"id":3},{"type":"x","n":4,"id":4}]');
    // One more: past the cap, the queue is dropped (its descriptor returned), the other queue of the same append grows.
    const r = await a.append(new Map([[q, [ev(5)]], [other, [ev(5)]]]));
    expect(r).toEqual({ grown: 1, dropped: [desc(q, 5)] });
    expect(await a.get(q)).toBeUndefined();
    expect(await a.pendingJson(other)).toBe('[{"type":"x","n":5,"id":0}]');
    // Gone from the user's set and the expiry index too.
    const r0 = connect();
    expect(await r0.smembers(keys + 'u:5')).toEqual([other]);
    expect(await r0.zscore(keys + 'exp', q)).toBeNull();
  });

  it('a process that disappears with a parked poll leaves no event undelivered: the next poll on another process reads them', async () => {
    const a = await process2();
    const b = await process2();
    const c = await process2();
    const [qa, qb] = [queues(a), queues(b)];
    const d = await qa.register({ ...desc(''), lifespanSecs: 0 });
    void qa.pollAnswer(1, d.id, -1, false).catch(() => undefined);
    await vi.waitFor(() => expect(qa.parkedPolls).toBe(1));
    // A dies (its connections close); C appends: the notification goes to A's channel, which nobody hears.
    (a as unknown as { sub: Redis }).sub.disconnect();
    (a as unknown as { r: Redis }).r.disconnect();
    await c.append(new Map([[d.id, [{ type: 'x', n: 0 }]]]));
    expect((await qb.pollAnswer(1, d.id, -1, false)).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
    // B's next poll parks and takes the queue over: C's next append reaches it.
    const next = qb.pollAnswer(1, d.id, 0, false);
    await vi.waitFor(() => expect(qb.parkedPolls).toBe(1));
    await c.append(new Map([[d.id, [{ type: 'x', n: 1 }]]]));
    expect((await next).eventsJson).toBe('[{"type":"x","n":1,"id":1}]');
  });
  it("looks up the queues of every delivery of a dispatch at once: one round trip, not one per delivery and watcher set", async () => {
    const a = await process2();
    const qa = queues(a);
    // Users and a realm of this test's own (the other tests' queues share the prefix).
    const one = await qa.register({ ...desc('', 901), realmId: 9, lifespanSecs: 0 });
    const two = await qa.register({ ...desc('', 902), realmId: 9, lifespanSecs: 0 });
    const watcher = await qa.register({ ...desc('', 903), realmId: 9, allPublicStreams: true, lifespanSecs: 0 });
    const sent = commands(a, { replies: true });
    await qa.dispatch([
      { realmId: 9, event: { type: 'x', n: 0, __public_stream_message: true }, userIds: [901] },
      { realmId: 9, event: { type: 'x', n: 1 }, userIds: [902] },
    ]);
    // User 901's queues, the realm's watchers, user 902's queues: asked together; then the one append.
    expect(sent.names).toEqual(['smembers', 'smembers', 'smembers', 'reply smembers', 'reply smembers', 'reply smembers', 'evalsha', 'reply evalsha']);
    expect(await a.pendingJson(one.id)).toBe('[{"type":"x","n":0,"id":0}]');
    expect(await a.pendingJson(two.id)).toBe('[{"type":"x","n":1,"id":0}]');
    // The watcher of all public channels (not a recipient) gets the public message only.
    expect(await a.pendingJson(watcher.id)).toBe('[{"type":"x","n":0,"id":0}]');
  });

  describe('copies of owned queues (re-polls without a Redis command)', () => {
    const at = (store: RedisQueueStore, t: () => number): EventQueues => new EventQueues(store, { heartbeatMinMs: 60_000, heartbeatJitterMs: 0, dataDir: null, now: t });
    const ev = (n: number): ParleyEvent => ({ type: 'x', n });
    const r0 = (): Redis => connect();
    /** After the poll steps of this turn (setImmediate) and the microtasks of an answer from a copy. */
    const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

    it('answers and parks re-polls from the copy, and writes the acknowledgement and connection time back within a second', async () => {
      const a = await process2();
      const b = await process2();
      let now = 1_000_000;
      const qa = at(a, () => now);
      const d = await qa.register({ ...desc(''), lifespanSecs: 0 });
      const first = qa.pollAnswer(1, d.id, -1, false); // a poll step: A becomes o and seeds its copy
      await vi.waitFor(() => expect(qa.parkedPolls).toBe(1));
      await b.append(new Map([[d.id, [ev(0), ev(1)]]]));
      expect((await first).eventsJson).toBe('[{"type":"x","n":0,"id":0},{"type":"x","n":1,"id":1}]');
      const sent = commands(a);
      now = 2_000_000;
      // Acknowledges 0 only: 1 is still pending, answered at once (with the queue id, as a poll that waited).
      const again = await qa.pollAnswer(1, d.id, 0, false);
      expect([again.eventsJson, again.queue_id]).toEqual(['[{"type":"x","n":1,"id":1}]', d.id]);
      now = 3_000_000;
      await parksThenAnswers({ b, qa, d }, 1);
      // Neither re-poll nor the answer sent a command from A.
      expect(sent.names).toEqual([]);
      const redis = r0();
      // Written back by the timer: one script with the newest acknowledgement (1) and connection time.
      await vi.waitFor(async () => expect(await redis.hget(keys + 'q:' + d.id, 'p')).toBe('1'), { timeout: 3000, interval: 20 });
      expect(sent.names).toEqual(['evalsha']);
      expect(await redis.zscore(keys + 'exp', d.id)).toBe(String(3_000_000 + 600_000));
      // Entries carry no id (id 2 is p + 1) and the hash no next id.
      expect(await redis.lrange(keys + 'e:' + d.id, 0, -1)).toEqual([';{"type":"x","n":2}']);
      expect(Object.keys(await redis.hgetall(keys + 'q:' + d.id)).sort()).toEqual(['d', 'o', 'p', 'r', 't', 'u', 'w']);
      // Another process reading the queue sees exactly what A's client has not acknowledged.
      expect(await b.pendingJson(d.id)).toBe('[{"type":"x","n":2,"id":2}]');
    });

    /**
     * Two processes and a queue whose copy A holds: A's first poll (a script step) parks, and
     * B's append of `events` answers it.
     */
    const owned = async (events: ParleyEvent[]): Promise<{ a: RedisQueueStore; b: RedisQueueStore; qa: EventQueues; qb: EventQueues; d: QueueDescriptor }> => {
      const { first, ...rest } = await parkedOnA();
      await rest.b.append(new Map([[rest.d.id, events]]));
      await first;
      return rest;
    };

    /**
     * A holds no copy and event last + 1 waits: A's poll acknowledging `last` is one script step
     * answering it, which seeds the copy again, so the re-poll parks with no command and the next
     * append answers it.
     */
    const reseeds = async (o: { a: RedisQueueStore; b: RedisQueueStore; qa: EventQueues; d: QueueDescriptor }, last: number): Promise<void> => {
      const sent = commands(o.a);
      const wire = (n: number): string => `[{"type":"x","n":${n},"id":${n}}]`;
      expect((await o.qa.pollAnswer(1, o.d.id, last, false)).eventsJson).toBe(wire(last + 1));
      expect(sent.names).toEqual(['evalsha']);
      await parksThenAnswers(o, last + 1);
      expect(sent.names).toEqual(['evalsha']);
    };

    /** A's poll acknowledging `last` parks at once (nothing pending), and B's append of event last + 1 answers it. */
    const parksThenAnswers = async (o: { b: RedisQueueStore; qa: EventQueues; d: QueueDescriptor }, last: number): Promise<void> => {
      const parked = o.qa.pollAnswer(1, o.d.id, last, false);
      await tick();
      expect(o.qa.parkedPolls).toBe(1);
      await o.b.append(new Map([[o.d.id, [ev(last + 1)]]]));
      expect((await parked).eventsJson).toBe(`[{"type":"x","n":${last + 1},"id":${last + 1}}]`);
    };

    it('a command on the queue writes back first, so Redis never answers from behind the copy', async () => {
      const { a, b, qa, d } = await owned([ev(0), ev(1)]);
      const parked = qa.pollAnswer(1, d.id, 1, false); // acknowledged in the copy only
      await tick();
      expect(qa.parkedPolls).toBe(1);
      // Read back through A before the timer: the acknowledgement goes first, in order on the connection.
      expect(await a.pendingJson(d.id)).toBe('[]');
      expect(await a.pending(d.id)).toEqual([]);
      // Acknowledging backwards is refused as in one process: the copy cannot judge it, the script (after the write-back) does.
      await expect(qa.pollAnswer(1, d.id, 0, false)).rejects.toMatchObject({ message: 'An event newer than 0 has already been pruned!' });
      // The refused poll left the parked one alone (as in one process); it still gets the next event.
      await b.append(new Map([[d.id, [ev(2)]]]));
      expect((await parked).eventsJson).toBe('[{"type":"x","n":2,"id":2}]');
    });

    it("another process's blocking poll drops the copy: a poll back here reads what was appended meanwhile", async () => {
      const { a, b, qa, qb, d } = await owned([ev(0)]);
      const onA = qa.pollAnswer(1, d.id, 0, false); // parked from the copy (next id 1)
      await tick();
      expect(qa.parkedPolls).toBe(1);
      // The client moves to B: A's poll ends (B's notice reached A, which dropped its copy).
      const onB = qb.pollAnswer(1, d.id, 0, false);
      expect((await onA).eventsJson).toBe('[]');
      await vi.waitFor(() => expect(qb.parkedPolls).toBe(1));
      await b.append(new Map([[d.id, [ev(1)]]])); // published to B only (an append by A would itself tell A the queue is elsewhere)
      expect((await onB).eventsJson).toBe('[{"type":"x","n":1,"id":1}]');
      // Back on A without acknowledging 1: A's copy (next id 1) would have parked; event 1 is answered at once.
      const sent = commands(a);
      expect((await qa.pollAnswer(1, d.id, 0, false)).eventsJson).toBe('[{"type":"x","n":1,"id":1}]');
      expect(sent.names).toEqual(['evalsha']);
    });

    it("another process's non-blocking poll ends the poll parked on the owner and drops its copy", async () => {
      const { a, b, qa, qb, d } = await owned([ev(0), ev(1)]);
      const parked = qa.pollAnswer(1, d.id, 0, false); // answered from the copy: event 1
      expect((await parked).eventsJson).toBe('[{"type":"x","n":1,"id":1}]');
      const parked2 = qa.pollAnswer(1, d.id, 1, false);
      await tick();
      expect(qa.parkedPolls).toBe(1);
      // dont_block on B: acknowledges 1 in Redis (after A's write-back of 1, harmless) and ends A's poll, as a new poll does in one process.
      expect((await qb.pollAnswer(1, d.id, 1, true)).eventsJson).toBe('[]');
      expect((await parked2).eventsJson).toBe('[]');
      await b.append(new Map([[d.id, [ev(2)]]]));
      // A's copy is gone: its next poll is a step of the script again, which re-seeds it.
      await reseeds({ a, b, qa, d }, 1);
    });

    it('an append heard while the seeding step is in flight extends the copy (its notification may be read before the reply)', async () => {
      const a = await process2();
      const b = await process2();
      const qa = queues(a);
      const d = await qa.register({ ...desc(''), lifespanSecs: 0 });
      const cmd = (a as unknown as { r: { parleyPollMany: (...args: unknown[]) => Promise<unknown> } }).r;
      const original = cmd.parleyPollMany;
      // The step runs in Redis (A becomes o); before A reads its reply, B appends and A hears it.
      vi.spyOn(cmd, 'parleyPollMany').mockImplementationOnce(async function (this: unknown, ...args: unknown[]) {
        const out = await original.apply(this, args);
        const got = heard(a, d.id);
        await b.append(new Map([[d.id, [ev(0)]]]));
        await got;
        return out;
      });
      // The step found the queue empty (next id 0); the event heard meanwhile is read and answered.
      expect((await qa.pollAnswer(1, d.id, -1, false)).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
      // The copy holds it too (next id 1): the re-poll that acknowledges it parks with no command.
      const sent = commands(a);
      await parksThenAnswers({ b, qa, d }, 0);
      expect(sent.names).toEqual([]);
    });

    it('the subscriber connection closing drops every copy; after it is back, a poll step seeds again', async () => {
      const { a, b, qa, d } = await owned([ev(0)]);
      const sub = (a as unknown as { sub: Redis }).sub;
      const closed = new Promise((resolve) => sub.once('close', resolve));
      sub.disconnect(true); // reconnects by itself
      await closed;
      // Appended while A hears nothing: a copy kept through this would park a poll on a queue with an event.
      await b.append(new Map([[d.id, [ev(1)]]]));
      await vi.waitFor(() => expect((a as unknown as { live: boolean }).live).toBe(true), { timeout: 5000, interval: 20 });
      await reseeds({ a, b, qa, d }, 0);
    });

    it('a copy whose client does not re-poll applies what it heard in batches, and still answers every event', async () => {
      const { a, b, qa, d } = await owned([ev(0)]);
      // 20 appends while no poll is parked (more than the 16 notifications a copy holds unapplied).
      for (let n = 1; n <= 20; n++) {
        const got = heard(a, d.id);
        await b.append(new Map([[d.id, [ev(n)]]]));
        await got;
      }
      const sent = commands(a);
      const answer = await qa.pollAnswer(1, d.id, 0, false);
      expect(JSON.parse(answer.eventsJson)).toEqual(Array.from({ length: 20 }, (_, k) => ({ type: 'x', n: k + 1, id: k + 1 })));
      expect(sent.names).toEqual([]);
      expect(await a.pendingJson(d.id)).toBe(answer.eventsJson);
    });

    /** Every message published on `store`'s own channel from now on (a connection of its own subscribed to it). */
    const channelLog = async (store: RedisQueueStore): Promise<{ messages: string[]; settled: () => Promise<void> }> => {
      const channel = (store as unknown as { channel: string }).channel;
      const listener = r0();
      const messages: string[] = [];
      let marks = 0;
      const seen = new Map<number, () => void>();
      // Markers go on a channel of their own (the store would take them for notifications): one connection
      // receives what is published to its channels in the order Redis ran the publishes.
      const marker = channel + ':mark';
      listener.on('message', (c: string, m: string) => {
        if (c === marker) seen.get(Number(m))?.();
        else messages.push(m);
      });
      await listener.subscribe(channel, marker);
      // Resolves once a marker published after everything before it has been heard.
      const settled = async (): Promise<void> => {
        const n = ++marks;
        const got = new Promise<void>((resolve) => seen.set(n, resolve));
        await r0().publish(marker, String(n));
        await got;
      };
      return { messages, settled };
    };

    it("a process's own append to a queue it is o of comes back in the script's reply: nothing on its channel, the parked poll answered and the copy extended with no other command", async () => {
      const { a, b, qa, qb, d, first } = await parkedOnA();
      // A second queue of the same user, its poll parked on B: B hears A's append to it on B's channel.
      const d2 = await qb.register({ ...desc(''), lifespanSecs: 0 });
      const onB = qb.pollAnswer(1, d2.id, -1, false);
      await vi.waitFor(() => expect(qb.parkedPolls).toBe(1));
      const [logA, logB] = [await channelLog(a), await channelLog(b)];
      const heardOnA: { grown: readonly string[]; appended?: AppendedEvents }[] = [];
      a.subscribe((grown, _dropped, appended) => heardOnA.push({ grown, appended }));
      const sent = commands(a);
      const shared: ParleyEvent = { type: 'message', message: { content: 'line\nbreak "quoted" é' } };
      expect(await a.append(new Map([[d.id, [ev(0), shared]], [d2.id, [shared]]]))).toEqual({ grown: 2, dropped: [] });
      const both = '[{"type":"x","n":0,"id":0},{"type":"message","message":{"content":"line\\nbreak \\"quoted\\" é"},"id":1}]';
      expect((await first).eventsJson).toBe(both);
      expect((await onB).eventsJson).toBe('[{"type":"message","message":{"content":"line\\nbreak \\"quoted\\" é"},"id":0}]');
      // A's listeners heard B's queue as grown elsewhere (no events: a stale poll here would read it), then its own
      // queue once, with the events under their ids (byte for byte what a read gives).
      expect(heardOnA.map((h) => [h.grown, h.appended === undefined])).toEqual([
        [[d2.id], true],
        [[d.id], false],
      ]);
      expect(heardOnA[1]!.appended!.json(0, 0)).toBe(both);
      expect(heardOnA[1]!.appended!.json(0, 1)).toBeUndefined();
      // The append was A's only command: the answer came from the reply, not from reading the queue back.
      expect(sent.names).toEqual(['evalsha']);
      await logA.settled();
      await logB.settled();
      expect(logA.messages).toEqual([]);
      expect(logB.messages).toHaveLength(1);
      expect(logB.messages[0]!.split('\n')[0]).toBe(`{"g":["${d2.id}"],"d":[]}`);
      // The copy has both events: the re-poll acknowledging them parks with no command, and A's next append answers it.
      const parked = qa.pollAnswer(1, d.id, 1, false);
      await tick();
      expect(qa.parkedPolls).toBe(1);
      expect(sent.names).toEqual(['evalsha']);
      await a.append(new Map([[d.id, [ev(2)]]]));
      expect((await parked).eventsJson).toBe('[{"type":"x","n":2,"id":2}]');
      expect(sent.names).toEqual(['evalsha', 'evalsha']);
      // Read through A (its acknowledgement of 1, taken in the copy, is written first): only event 2 is left.
      expect(await a.pendingJson(d.id)).toBe('[{"type":"x","n":2,"id":2}]');
      await logA.settled();
      expect(logA.messages).toEqual([]);
    });

    it("another process's earlier append, heard after the reply of A's own: the poll reads its queue, the copy is dropped and seeded again, no event skipped or reordered", async () => {
      const { a, b, qa, d, first } = await parkedOnA();
      await a.append(new Map([[d.id, [ev(0)]]]));
      expect((await first).eventsJson).toBe('[{"type":"x","n":0,"id":0}]');
      const parked = qa.pollAnswer(1, d.id, 0, false); // parked from the copy (next id 1)
      await tick();
      expect(qa.parkedPolls).toBe(1);
      // A's subscriber connection holds back what it hears until A's own append has been answered.
      const sub = (a as unknown as { sub: Redis }).sub;
      const held: unknown[][] = [];
      const emit = sub.emit.bind(sub);
      const hold = vi.spyOn(sub, 'emit').mockImplementation((event: string | symbol, ...args: unknown[]) => {
        if (event === 'message') {
          held.push(args);
          return true;
        }
        return emit(event, ...args);
      });
      const withheld = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (held.length > 0) {
            clearInterval(check);
            resolve();
          }
        }, 5);
      });
      await b.append(new Map([[d.id, [ev(1)]]])); // id 1: published to A, not yet read there
      await withheld;
      const reads = vi.spyOn(a, 'pendingJsonMany');
      await a.append(new Map([[d.id, [ev(2)]]])); // id 2: A's reply says so first
      // The reply's first id (2) is not the one the poll waits for (1): it reads the queue and gets both, in order.
      expect((await parked).eventsJson).toBe('[{"type":"x","n":1,"id":1},{"type":"x","n":2,"id":2}]');
      expect(reads).toHaveBeenCalledTimes(1);
      hold.mockRestore();
      for (const args of held) emit('message', ...args);
      // The copy saw 2 before 1: it is dropped, and the next poll is a script step that seeds it again.
      const sent = commands(a);
      const next = qa.pollAnswer(1, d.id, 2, false);
      await vi.waitFor(() => expect(qa.parkedPolls).toBe(1));
      expect(sent.names).toEqual(['evalsha']);
      await b.append(new Map([[d.id, [ev(3)]]]));
      expect((await next).eventsJson).toBe('[{"type":"x","n":3,"id":3}]');
      const again = qa.pollAnswer(1, d.id, 3, false);
      await tick();
      expect(qa.parkedPolls).toBe(1);
      await a.append(new Map([[d.id, [ev(4)]]]));
      expect((await again).eventsJson).toBe('[{"type":"x","n":4,"id":4}]');
      // One poll step, then B's append heard and A's own append: A sent only its append.
      expect(sent.names).toEqual(['evalsha', 'evalsha']);
    });

    it("a removed queue's copy goes with it", async () => {
      const { a, b, qa, d } = await owned([ev(0)]);
      const parked = qa.pollAnswer(1, d.id, 0, false);
      await tick();
      expect(qa.parkedPolls).toBe(1);
      await b.remove([d.id]); // another process deletes it (DELETE /events, expiry)
      expect((await parked).eventsJson).toBe('[]');
      await expect(qa.pollAnswer(1, d.id, 0, false)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    });
  });
});

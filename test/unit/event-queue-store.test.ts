import { describe, expect, it } from 'vitest';
import { MemoryQueueStore, wireEvent, wireEventsJson, wireListJson } from '../../src/events/queue-store.js';
import type { QueueDescriptor } from '../../src/events/delivery.js';
import type { ParleyEvent } from '../../src/events/types.js';
import { EventQueues, type NewQueue } from '../../src/events/queues.js';

const desc = (id: string): QueueDescriptor =>
  ({ id, userId: 1, realmId: 1, eventTypes: null, narrow: [], capabilities: {}, applyMarkdown: false, clientGravatar: false, slimPresence: false, allPublicStreams: false, includeSubscribers: false, clientName: 'test', timeoutSecs: 600 }) as unknown as QueueDescriptor;

describe('event queue wire JSON', () => {
  it('splices the id into the shared JSON byte for byte, and keeps an own id key where the event has it', () => {
    const plain: ParleyEvent = { type: 'typing', op: 'start', sender: { user_id: 3 } };
    const ownId: ParleyEvent = { type: 'odd', id: 'mine', after: 1 };
    const empty = {} as ParleyEvent;
    const events = [plain, ownId, empty, plain];
    const expected = JSON.stringify(events.map((event, i) => wireEvent({ id: 7 + i, event })));
    expect(wireListJson(events, 0, 7)).toBe(expected);
    expect(wireEventsJson(events.map((event, i) => ({ id: 7 + i, event })))).toBe(expected);
    // The one-event answer shared between queues is keyed by event and id.
    expect(wireListJson([plain], 0, 3)).toBe('[{"type":"typing","op":"start","sender":{"user_id":3},"id":3}]');
    expect(wireListJson([plain], 0, 4)).toBe('[{"type":"typing","op":"start","sender":{"user_id":3},"id":4}]');
    expect(wireListJson([ownId], 0, 4)).toBe('[{"type":"odd","id":4,"after":1}]');
    expect(wireListJson([plain], 1, 4)).toBe('[]');
  });
});

describe('MemoryQueueStore: consecutive ids without a wrapper per event', () => {
  it('acknowledges, prunes and reports exactly as Zulip', async () => {
    const store = new MemoryQueueStore(100);
    await store.create(desc('q'), 0);
    const ev = (n: number): ParleyEvent => ({ type: 'x', n });
    await store.append(new Map([['q', [ev(0), ev(1), ev(2)]]]));
    expect(await store.pending('q')).toEqual([0, 1, 2].map((n) => ({ id: n, event: ev(n) })));
    expect(await store.acknowledge('q', 0)).toBe('ok');
    expect(await store.pendingJson('q')).toBe('[{"type":"x","n":1,"id":1},{"type":"x","n":2,"id":2}]');
    expect(await store.acknowledge('q', -1)).toBe('pruned');
    expect(await store.acknowledge('q', 1)).toBe('ok');
    // Past the newest event: everything goes, and the id was not in the queue.
    expect(await store.acknowledge('q', 9)).toBe('not_in_queue');
    expect(await store.pending('q')).toEqual([]);
    expect(store.hasPending('q')).toBe(false);
    await store.append(new Map([['q', [ev(3)]]]));
    expect(await store.pending('q')).toEqual([{ id: 3, event: ev(3) }]);
    expect(await store.acknowledge('q', 2)).toBe('ok');
    expect(await store.acknowledge('q', 3)).toBe('ok');
    // Snapshot and restore keep ids.
    await store.append(new Map([['q', [ev(4), ev(5)]]]));
    const snap = await store.snapshot();
    expect(snap[0]!.events).toEqual([{ id: 4, event: ev(4) }, { id: 5, event: ev(5) }]);
    const again = new MemoryQueueStore(100);
    await again.restore(snap);
    expect(await again.pendingJson('q')).toBe('[{"type":"x","n":4,"id":4},{"type":"x","n":5,"id":5}]');
    expect(await again.acknowledge('q', 4)).toBe('ok');
    await again.append(new Map([['q', [ev(6)]]]));
    expect((await again.pending('q')).map((e) => e.id)).toEqual([5, 6]);
  });

  it('drops a queue past its backlog cap', async () => {
    const store = new MemoryQueueStore(2);
    await store.create(desc('q'), 0);
    const seen: string[][] = [];
    store.subscribe((grown, dropped) => seen.push([...grown, ...dropped.map((d) => `-${d}`)]));
    await store.append(new Map([['q', [{ type: 'a' }, { type: 'b' }]]]));
    const r = await store.append(new Map([['q', [{ type: 'c' }]]]));
    expect(r.dropped.map((d) => d.id)).toEqual(['q']);
    expect(seen).toEqual([['q'], ['-q']]);
    expect(await store.get('q')).toBeUndefined();
  });
});

describe('EventQueues in process: woken polls answer on the next check phase', () => {
  /** A sink that records its answers (PollSink). */
  const recorder = () => {
    const got: { json: string; queueId: string | undefined }[] = [];
    return { got, sink: { answered: (json: string, queueId: string | undefined) => void got.push({ json, queueId }), failed: (err: unknown) => { throw err; } } };
  };
  const setup = async () => {
    const queues = new EventQueues(new MemoryQueueStore(100), { heartbeatMinMs: 60_000, heartbeatJitterMs: 0, dataDir: null });
    // The file's descriptor, as what register() takes: no id or timeout, a lifespan instead.
    const spec = (userId: number): NewQueue => {
      const { id: _id, timeoutSecs: _timeout, ...fields } = desc('');
      return { ...fields, userId, lifespanSecs: 0 };
    };
    const a = await queues.register(spec(1));
    const b = await queues.register(spec(2));
    return { queues, a: a.id, b: b.id };
  };
  const nextCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));
  const event = (n: number): ParleyEvent => ({ type: 'custom_test', n });

  it('the dispatch returns before any parked poll is answered; every append of the turn is in the one answer', async () => {
    const { queues, a, b } = await setup();
    const ra = recorder();
    const rb = recorder();
    queues.pollInto(1, a, -1, false, undefined, ra.sink);
    queues.pollInto(2, b, -1, false, undefined, rb.sink);
    expect(queues.parkedPolls).toBe(2);
    await queues.dispatch([{ realmId: 1, event: event(1), userIds: [1, 2] }]);
    await queues.dispatch([{ realmId: 1, event: event(2), userIds: [1] }]);
    // The events are queued, the parked polls not yet answered (the dispatching request answers first).
    expect(ra.got).toEqual([]);
    expect(rb.got).toEqual([]);
    expect(await queues.pending(a)).toEqual([{ id: 0, event: event(1) }, { id: 1, event: event(2) }]);
    await nextCheckPhase();
    expect(ra.got).toEqual([{ json: '[{"type":"custom_test","n":1,"id":0},{"type":"custom_test","n":2,"id":1}]', queueId: a }]);
    expect(rb.got).toEqual([{ json: '[{"type":"custom_test","n":1,"id":0}]', queueId: b }]);
    expect(queues.parkedPolls).toBe(0);
    await nextCheckPhase();
    expect(ra.got).toHaveLength(1);
    expect(rb.got).toHaveLength(1);
  });

  it('a poll that comes between the append and the check phase is answered at once, and its parked predecessor once', async () => {
    const { queues, a } = await setup();
    const first = recorder();
    const second = recorder();
    queues.pollInto(1, a, -1, false, undefined, first.sink);
    await queues.dispatch([{ realmId: 1, event: event(1), userIds: [1] }]);
    // A new poll on the queue ends the one still waiting on it, which answers with what is pending.
    queues.pollInto(1, a, -1, false, undefined, second.sink);
    const answer = { json: '[{"type":"custom_test","n":1,"id":0}]', queueId: a };
    expect(first.got).toEqual([answer]);
    expect(second.got).toEqual([answer]);
    await nextCheckPhase();
    expect(first.got).toHaveLength(1);
    expect(second.got).toHaveLength(1);
    expect(queues.parkedPolls).toBe(0);
  });
});

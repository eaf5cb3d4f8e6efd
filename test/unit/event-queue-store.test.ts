import { describe, expect, it } from 'vitest';
import { MemoryQueueStore, wireEvent, wireEventsJson, wireListJson } from '../../src/events/queue-store.js';
import type { QueueDescriptor } from '../../src/events/delivery.js';
import type { ParleyEvent } from '../../src/events/types.js';

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

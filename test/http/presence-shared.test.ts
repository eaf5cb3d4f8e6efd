import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presenceOf, type SharedPresence, type SharedPresenceChanges } from '../../src/domain/presence-state.js';
import type { PresenceEntry } from '../../src/domain/rules/presence.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';

/**
 * POST /users/me/presence when presence is shared with other processes (scale/redis-presence.ts
 * in Redis mode), against a stand-in for Redis that counts the calls and lets "another process"
 * store reports: a report looks at the shared state once, and an answer never reports an update
 * id above the ids this process holds every entry up to (or the client would never get the others).
 */

/** The shared state as Redis holds it, in memory, with the calls counted. */
class FakeShared implements SharedPresence {
  seq: number | null = null;
  readonly entries = new Map<number, PresenceEntry>();
  calls = { changes: 0, put: 0, seed: 0 };
  /** Runs inside the next put, before it takes its id (another process's report landing first). */
  beforePut: (() => void) | undefined;

  async changes(_realmId: number, since: number): Promise<SharedPresenceChanges | null> {
    this.calls.changes++;
    if (this.seq === null) return null;
    return { seq: this.seq, entries: [...this.entries].filter(([, e]) => e.lastUpdateId > since).map(([id, e]) => [id, { ...e }] as const) };
  }

  async put(_realmId: number, userId: number, entry: PresenceEntry): Promise<number | null> {
    this.calls.put++;
    if (this.seq === null) return null;
    const first = this.beforePut;
    this.beforePut = undefined;
    first?.();
    return this.store(userId, entry);
  }

  async seed(_realmId: number, seq: number, entries: readonly (readonly [number, PresenceEntry])[]): Promise<void> {
    this.calls.seed++;
    if (this.seq !== null) return;
    this.seq = seq;
    for (const [id, e] of entries) this.entries.set(id, { ...e });
  }

  /** A report stored by another process. */
  store(userId: number, entry: Omit<PresenceEntry, 'lastUpdateId'>): number {
    this.seq = (this.seq ?? 0) + 1;
    this.entries.set(userId, { ...entry, lastUpdateId: this.seq });
    return this.seq;
  }
}

let t: TestServer;
const shared = new FakeShared();
const clock = { now: 0 };
let T0: number;
beforeAll(async () => {
  t = await startTestServer();
  const state = presenceOf(t.app.ctx);
  state.share(shared);
  T0 = Math.floor(Date.now() / 1000) + 1000;
  clock.now = T0;
  state.now = () => clock.now;
});
afterAll(async () => t.close());

const modern = (ts: number) => ({ active_timestamp: ts, idle_timestamp: ts });
/** The whole answer of a report that asks for presence. */
const answer = (presences: Record<string, unknown>, ts: number, last: number) => ({ result: 'success', msg: '', presences, server_timestamp: ts, presence_last_update_id: last });

describe('POST /users/me/presence with presence shared across processes', () => {
  it('a report that changes nothing looks at the shared state once; one that changes stores it with one more call', async () => {
    const first = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: -1 }, 'hamlet'));
    const hamletId = shared.entries.get(t.users.hamlet.id)!.lastUpdateId;
    expect(first).toEqual(answer({ [t.users.hamlet.id]: modern(T0) }, T0, hamletId));

    // Ten seconds on: nothing to store (Zulip writes a connection at most every 55 s).
    clock.now = T0 + 10;
    shared.calls = { changes: 0, put: 0, seed: 0 };
    const again = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: hamletId }, 'hamlet'));
    expect(again).toEqual(answer({}, T0 + 10, hamletId));
    expect(shared.calls).toEqual({ changes: 1, put: 0, seed: 0 });

    // A minute on: the report is stored, and its own entry comes back.
    clock.now = T0 + 70;
    shared.calls = { changes: 0, put: 0, seed: 0 };
    const later = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: hamletId }, 'hamlet'));
    expect(shared.calls).toEqual({ changes: 1, put: 1, seed: 0 });
    expect(later).toEqual(answer({ [t.users.hamlet.id]: modern(T0 + 70) }, T0 + 70, hamletId + 1));
    expect(shared.seq).toBe(hamletId + 1);
  });

  it("a report from another process seen when it lands before the look, and not lost when it lands between the look and the store", async () => {
    const before = shared.seq!;
    // Cordelia's report, stored by another process before Othello's request looks: in Othello's answer.
    shared.store(t.users.cordelia.id, { lastActive: T0 + 70, lastConnected: T0 + 70 });
    clock.now = T0 + 80;
    const seen = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: before }, 'othello'));
    expect(seen).toEqual(answer({ [t.users.cordelia.id]: modern(T0 + 70), [t.users.othello.id]: modern(T0 + 80) }, T0 + 80, before + 2));

    // Iago's report lands in the shared state between Hamlet's look and Hamlet's store: Hamlet's entry
    // takes the id after Iago's, which this process has not taken in. The answer has Hamlet's entry
    // but reports the last id it holds every entry up to, so that the next answer has Iago's.
    const upTo = shared.seq!;
    clock.now = T0 + 140;
    shared.beforePut = () => shared.store(t.users.iago.id, { lastActive: T0 + 139, lastConnected: T0 + 139 });
    const raced = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: upTo }, 'hamlet'));
    expect(shared.seq).toBe(upTo + 2);
    expect(shared.entries.get(t.users.iago.id)!.lastUpdateId).toBe(upTo + 1);
    expect(raced).toEqual(answer({ [t.users.hamlet.id]: modern(T0 + 140) }, T0 + 140, upTo));

    clock.now = T0 + 150;
    const next = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: upTo }, 'hamlet'));
    expect(next).toEqual(answer({ [t.users.iago.id]: modern(T0 + 139), [t.users.hamlet.id]: modern(T0 + 140) }, T0 + 150, upTo + 2));

    // A client that holds everyone's presence from the start gets the same cap.
    clock.now = T0 + 210;
    shared.beforePut = () => shared.store(t.users.cordelia.id, { lastActive: T0 + 209, lastConnected: T0 + 209 });
    const full = expectSuccess(await t.post('/users/me/presence', { status: 'active', slim_presence: true }, 'othello'));
    expect(full.presence_last_update_id).toBe(upTo + 2);
    expect(full.presences[String(t.users.othello.id)]).toEqual(modern(T0 + 210));
    expect(full.presences[String(t.users.cordelia.id)]).toEqual(modern(T0 + 70));
    const after = expectSuccess(await t.post('/users/me/presence', { status: 'active', last_update_id: upTo + 2 }, 'othello'));
    expect(after.presences).toEqual({ [t.users.cordelia.id]: modern(T0 + 209), [t.users.othello.id]: modern(T0 + 210) });
    expect(after.presence_last_update_id).toBe(upTo + 4);
  });

  it('GET /realm/presence and a ping_only report still look at the shared state', async () => {
    shared.calls = { changes: 0, put: 0, seed: 0 };
    expectSuccess(await t.get('/realm/presence', {}, 'iago'));
    expect(shared.calls).toEqual({ changes: 1, put: 0, seed: 0 });
    shared.calls = { changes: 0, put: 0, seed: 0 };
    // Cordelia's entry is from 6 s before: nothing to store.
    clock.now = T0 + 215;
    expect(expectSuccess(await t.post('/users/me/presence', { status: 'active', ping_only: true }, 'cordelia'))).toEqual({ result: 'success', msg: '' });
    expect(shared.calls).toEqual({ changes: 1, put: 0, seed: 0 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presenceOf } from '../../src/domain/presence-state.js';
import { registerQueue } from '../support/events.js';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';

/** POST /register's presence_last_update_id and presence_history_limit_days (Zulip feature levels 263 and 288). */

let t: TestServer;
const clock = { now: 0 };
let T0: number;
beforeAll(async () => {
  t = await startTestServer();
  T0 = Math.floor(Date.now() / 1000) + 1000;
  clock.now = T0;
  presenceOf(t.app.ctx).now = () => clock.now;
});
afterAll(async () => t.close());

const modern = (ts: number) => ({ active_timestamp: ts, idle_timestamp: ts });

describe('POST /register: presence parameters', () => {
  it('presence_last_update_id gives only the newer changes; presence_history_limit_days the window', async () => {
    const first = expectSuccess(await t.post('/users/me/presence', { status: 'active', slim_presence: true }, 'hamlet')).presence_last_update_id as number;
    // Cordelia was last connected three days ago.
    clock.now = T0 - 3 * 86400;
    expectSuccess(await t.post('/users/me/presence', { status: 'active' }, 'cordelia'));
    clock.now = T0;
    expectSuccess(await t.post('/users/me/presence', { status: 'active' }, 'othello'));
    const cordelia = String(t.users.cordelia.id);
    const hamlet = String(t.users.hamlet.id);
    const othello = String(t.users.othello.id);

    const all = await registerQueue(t, 'iago', { fetch_event_types: ['presence'], slim_presence: true });
    expect(all.presences).toEqual({ [hamlet]: modern(T0), [cordelia]: modern(T0 - 3 * 86400), [othello]: modern(T0) });
    const last = all.presence_last_update_id as number;
    expect(last).toBeGreaterThan(first);

    const since = await registerQueue(t, 'iago', { fetch_event_types: ['presence'], slim_presence: true, presence_last_update_id: first });
    expect(since).toMatchObject({ presences: { [cordelia]: modern(T0 - 3 * 86400), [othello]: modern(T0) }, presence_last_update_id: last, server_timestamp: T0 });
    expect(Object.keys(since.presences)).toHaveLength(2);
    // Nothing newer: empty, and the client's own id back.
    const none = await registerQueue(t, 'iago', { fetch_event_types: ['presence'], slim_presence: true, presence_last_update_id: last });
    expect(none).toMatchObject({ presences: {}, presence_last_update_id: last });

    const recent = await registerQueue(t, 'iago', { fetch_event_types: ['presence'], slim_presence: true, presence_history_limit_days: 2 });
    expect(recent.presences).toEqual({ [hamlet]: modern(T0), [othello]: modern(T0) });
    expect(recent.ignored_parameters_unsupported).toBeUndefined();
    const legacy = await registerQueue(t, 'iago', { fetch_event_types: ['presence'], presence_history_limit_days: 2 });
    expect(Object.keys(legacy.presences).sort()).toEqual([t.users.hamlet.email, t.users.othello.email].sort());
  });
});

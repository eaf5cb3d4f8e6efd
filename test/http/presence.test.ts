import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transact } from '../../src/domain/context.js';
import { doCreateUser } from '../../src/domain/actions/users.js';
import { presenceEnabledChanged } from '../../src/domain/actions/presence.js';
import { PresenceState, presenceOf } from '../../src/domain/presence-state.js';
import { expectStateConsistent, getEvents, registerQueue, withoutIds } from '../support/events.js';
import { expectError, expectSuccess, startTestServer, type FixtureName, type TestServer, type TestUser } from '../support/server.js';

let t: TestServer;
let state: PresenceState;
const clock = { now: 0 };
let T0: number;
beforeAll(async () => {
  t = await startTestServer();
  state = presenceOf(t.app.ctx);
  T0 = Math.floor(Date.now() / 1000) + 1000;
  clock.now = T0;
  state.now = () => clock.now;
});
afterAll(async () => t.close());

const ALL: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot'];
const allIds = () => ALL.map((n) => t.users[n].id).sort((a, b) => a - b);
const email = (n: FixtureName) => t.users[n].email;
const id = (n: FixtureName) => t.users[n].id;
const website = (status: 'active' | 'idle', timestamp: number) => ({ client: 'website', status, timestamp, pushable: false });
const legacy = (status: 'active' | 'idle', timestamp: number) => ({ website: website(status, timestamp), aggregated: { client: 'website', status, timestamp } });
const joined = async (n: FixtureName) => (await t.row(id(n))).date_joined;
const report = (who: FixtureName | TestUser, params: Record<string, unknown>) => t.post('/users/me/presence', params, who);
const sortedIds = (ds: { userIds: readonly number[] }[]) => ds.map((d) => [...d.userIds].sort((a, b) => a - b));

describe('POST /users/me/presence', () => {
  it('refuses bad input and bots, changing nothing', async () => {
    const before = state.pending;
    const deliveries = await t.captureEvents(async () => {
      expectError(await report('hamlet', { status: 'away' }), 400, 'BAD_REQUEST', 'Invalid status: away');
      expectError(await report('hamlet', {}), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'status' argument", { var_name: 'status' });
      expectError(await report('hamlet', { status: 'active', ping_only: 'yes' }), 400, 'BAD_REQUEST', 'ping_only is not valid JSON');
      expectError(await report('hamlet', { status: 'active', last_update_id: 'x' }), 400, 'BAD_REQUEST', 'last_update_id is not valid JSON');
      expectError(await report('bot', { status: 'active' }), 400, 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    });
    expect(deliveries).toEqual([]);
    expect(state.pending).toBe(before);
    expect(state.realm(t.realmId).entries.size).toBe(0);
  });

  it("a user's first report: legacy answer keyed by email, and an event to every active user", async () => {
    let body: any;
    const deliveries = await t.captureEvents(async () => {
      body = expectSuccess(await report('hamlet', { status: 'active', new_user_input: true }));
    });
    expect(body).toEqual({
      result: 'success',
      msg: '',
      presences: { [email('hamlet')]: legacy('active', T0) },
      server_timestamp: T0,
      presence_last_update_id: 1,
    });
    expect(deliveries.map((d) => d.event)).toEqual([
      {
        type: 'presence',
        user_id: id('hamlet'),
        email: email('hamlet'),
        server_timestamp: T0,
        presence: { website: website('active', T0) },
        __modern: { active_timestamp: T0, idle_timestamp: T0 },
      },
    ]);
    expect(sortedIds(deliveries)).toEqual([allIds()]);
  });

  it('reports within 55 s change nothing; later ones move the times without an event', async () => {
    clock.now = T0 + 30;
    let deliveries = await t.captureEvents(async () => {
      expect(expectSuccess(await report('hamlet', { status: 'active' })).presence_last_update_id).toBe(1);
    });
    expect(deliveries).toEqual([]);
    // Idle after a minute: still "active" in the legacy form (activity within 70 s of the connection).
    clock.now = T0 + 60;
    deliveries = await t.captureEvents(async () => {
      const body = expectSuccess(await report('hamlet', { status: 'idle' }));
      expect(body.presences).toEqual({ [email('hamlet')]: legacy('active', T0) });
      expect(body.presence_last_update_id).toBe(2);
    });
    expect(deliveries).toEqual([]);
    clock.now = T0 + 200;
    const body = expectSuccess(await report('hamlet', { status: 'idle' }));
    expect(body.presences).toEqual({ [email('hamlet')]: legacy('idle', T0 + 200) });
    expect(body.presence_last_update_id).toBe(3);
    expect(state.realm(t.realmId).entries.get(id('hamlet'))).toEqual({ lastActive: T0, lastConnected: T0 + 200, lastUpdateId: 3 });
  });

  it('coming back online after missing check-ins sends the event again', async () => {
    clock.now = T0 + 331;
    const deliveries = await t.captureEvents(async () => {
      expect(expectSuccess(await report('hamlet', { status: 'active' })).presence_last_update_id).toBe(4);
    });
    expect(deliveries.map((d) => d.event)).toEqual([
      {
        type: 'presence',
        user_id: id('hamlet'),
        email: email('hamlet'),
        server_timestamp: T0 + 331,
        presence: { website: website('active', T0 + 331) },
        __modern: { active_timestamp: T0 + 331, idle_timestamp: T0 + 331 },
      },
    ]);
  });

  it('the modern protocol: last_update_id asks for id-keyed data, and only what changed since', async () => {
    const cordeliaJoined = await joined('cordelia');
    let body = expectSuccess(await report('cordelia', { status: 'idle', last_update_id: -1 }));
    expect(body).toEqual({
      result: 'success',
      msg: '',
      presences: {
        [String(id('hamlet'))]: { active_timestamp: T0 + 331, idle_timestamp: T0 + 331 },
        // Never active: the activity time is date_joined.
        [String(id('cordelia'))]: { active_timestamp: cordeliaJoined, idle_timestamp: T0 + 331 },
      },
      server_timestamp: T0 + 331,
      presence_last_update_id: 5,
    });
    body = expectSuccess(await report('cordelia', { status: 'idle', last_update_id: 5 }));
    expect(body.presences).toEqual({});
    expect(body.presence_last_update_id).toBe(5);
    clock.now = T0 + 340;
    expectSuccess(await report('othello', { status: 'active' }));
    body = expectSuccess(await report('cordelia', { status: 'idle', last_update_id: 5 }));
    expect(body.presences).toEqual({ [String(id('othello'))]: { active_timestamp: T0 + 340, idle_timestamp: T0 + 340 } });
    expect(body.presence_last_update_id).toBe(6);
    // slim_presence alone asks for the modern format too, for everything.
    body = expectSuccess(await report('cordelia', { status: 'idle', slim_presence: true }));
    expect(Object.keys(body.presences).sort()).toEqual([id('hamlet'), id('cordelia'), id('othello')].map(String).sort());
  });

  it('history_limit_days: 0 returns nothing; old users drop out of the default 14 days unless the client has data', async () => {
    let body = expectSuccess(await report('cordelia', { status: 'idle', history_limit_days: 0 }));
    expect(body.presences).toEqual({});
    expect(body.presence_last_update_id).toBe(-1);
    body = expectSuccess(await report('cordelia', { status: 'idle', history_limit_days: 0, last_update_id: 3 }));
    expect(body).toMatchObject({ presences: {}, presence_last_update_id: 3 });
    const later = T0 + 15 * 86400;
    clock.now = later;
    body = expectSuccess(await report('iago', { status: 'active', last_update_id: -1 }));
    expect(body.presences).toEqual({ [String(id('iago'))]: { active_timestamp: later, idle_timestamp: later } });
    expect(body.presence_last_update_id).toBe(7);
    body = expectSuccess(await report('iago', { status: 'active', history_limit_days: 30 }));
    expect(Object.keys(body.presences).sort()).toEqual([email('hamlet'), email('cordelia'), email('othello'), email('iago')].sort());
    // A client holding data (last_update_id > 0) gets every newer change, however old.
    body = expectSuccess(await report('iago', { status: 'active', last_update_id: 4 }));
    expect(Object.keys(body.presences).sort()).toEqual([id('cordelia'), id('othello'), id('iago')].map(String).sort());
    clock.now = T0 + 400;
  });

  it('everyone\'s presence is answered from one serialization, with the usual headers; unknown parameters are listed', async () => {
    const a = await report('hamlet', { status: 'active' });
    const b = await t.get('/users/me', {}, 'hamlet');
    for (const h of ['content-type', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'cache-control']) expect([h, a.headers[h]]).toEqual([h, b.headers[h]]);
    const again = expectSuccess(await report('hamlet', { status: 'active', zebra: 1 }));
    expect(again.ignored_parameters_unsupported).toEqual(['zebra']);
    expect(again.presences).toEqual(a.body.presences);
  });

  it('ping_only answers with nothing else', async () => {
    expect((await report('hamlet', { status: 'active', ping_only: true })).body).toEqual({ result: 'success', msg: '' });
  });

  it('presence_enabled: turning it off shows the user offline at once; their reports are then ignored; on again, active', async () => {
    const now = clock.now;
    let deliveries = await t.captureEvents(async () => expectSuccess(await t.patch('/settings', { presence_enabled: false }, 'shiva')));
    const presence = deliveries.filter((d) => d.event.type === 'presence');
    expect(presence.map((d) => (d.event.presence as any).website)).toEqual([website('idle', now - 320)]);
    expect(sortedIds(presence)).toEqual([allIds()]);
    const entry = { ...state.realm(t.realmId).entries.get(id('shiva'))! };
    expect(entry).toMatchObject({ lastActive: null, lastConnected: now - 320 });
    deliveries = await t.captureEvents(() => report('shiva', { status: 'active' }));
    expect(deliveries).toEqual([]);
    expect(state.realm(t.realmId).entries.get(id('shiva'))).toEqual(entry);
    deliveries = await t.captureEvents(async () => expectSuccess(await t.patch('/settings', { presence_enabled: true }, 'shiva')));
    expect(deliveries.filter((d) => d.event.type === 'presence').map((d) => (d.event.presence as any).website)).toEqual([website('active', now)]);
  });

  it('costs no SQL: served from memory once warm', async () => {
    // Warm: the auth cache (cleared by the settings changes above) and the realm's user directory.
    for (const who of ['hamlet', 'cordelia', 'othello'] as const) expectSuccess(await report(who, { status: 'active' }));
    expectSuccess(await t.get('/realm/presence', {}, 'hamlet'));
    const stats = t.app.ctx.store.stats;
    const before = stats.queries;
    clock.now = T0 + 500;
    for (const who of ['hamlet', 'cordelia', 'othello'] as const) {
      expectSuccess(await report(who, { status: 'active' }));
      expectSuccess(await report(who, { status: 'idle', last_update_id: 3 }));
    }
    expectSuccess(await t.get('/realm/presence', {}, 'hamlet'));
    expectSuccess(await t.get(`/users/${id('hamlet')}/presence`, {}, 'cordelia'));
    expect(stats.queries).toBe(before);
  });
});

describe('GET presence', () => {
  it('/users/{id or email}/presence: legacy without client keys, aggregated offline after 200 s; slim_presence', async () => {
    clock.now = T0 + 500;
    const e = state.realm(t.realmId).entries.get(id('hamlet'))!;
    expect(e).toMatchObject({ lastActive: T0 + 500, lastConnected: T0 + 500 });
    for (const key of [String(id('hamlet')), email('hamlet'), email('hamlet').toUpperCase()]) {
      expect(expectSuccess(await t.get(`/users/${key}/presence`, {}, 'cordelia'))).toEqual({
        result: 'success',
        msg: '',
        presence: { website: { status: 'active', timestamp: T0 + 500 }, aggregated: { status: 'active', timestamp: T0 + 500 } },
      });
    }
    clock.now = T0 + 701;
    expect(expectSuccess(await t.get(`/users/${id('hamlet')}/presence`, {}, 'cordelia')).presence).toEqual({
      website: { status: 'active', timestamp: T0 + 500 },
      aggregated: { status: 'offline', timestamp: T0 + 500 },
    });
    expect(expectSuccess(await t.get(`/users/${id('hamlet')}/presence`, { slim_presence: true }, 'bot')).presence).toEqual({
      active_timestamp: T0 + 500,
      idle_timestamp: T0 + 500,
    });
  });

  it('unknown, deactivated, bot and silent users', async () => {
    expectError(await t.get('/users/nobody@zulip.com/presence', {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.get('/users/999999/presence', {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    expectError(await t.get(`/users/${id('bot')}/presence`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Presence is not supported for bot users.');
    expectError(await t.get(`/users/${email('polonius')}/presence`, {}, 'hamlet'), 400, 'BAD_REQUEST', `No presence data for ${email('polonius')}`);
    const gone = await t.createUser({ email: 'presence-gone@zulip.com', fullName: 'Presence Gone' });
    expectSuccess(await report(gone, { status: 'active' }));
    expectSuccess(await t.get(`/users/${gone.id}/presence`, {}, 'hamlet'));
    expectSuccess(await t.delete(`/users/${gone.id}`, {}, 'iago'));
    expectError(await t.get(`/users/${gone.id}/presence`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'No such user');
    // Nor is a deactivated user in the realm's presences.
    expect(Object.keys(expectSuccess(await t.get('/realm/presence', {}, 'hamlet')).presences)).not.toContain('presence-gone@zulip.com');
  });

  it('GET /realm/presence: the legacy format, no presence_last_update_id; GET on /users/me/presence is 405', async () => {
    clock.now = T0 + 800;
    const body = expectSuccess(await t.get('/realm/presence', {}, 'polonius'));
    expect(Object.keys(body).sort()).toEqual(['msg', 'presences', 'result', 'server_timestamp']);
    expect(body.presences[email('hamlet')]).toEqual(legacy('active', T0 + 500));
    expect(body.server_timestamp).toBe(T0 + 800);
    const res = await t.get('/users/me/presence', {}, 'hamlet');
    expect(res.status).toBe(405);
  });
});

describe('presence in /register and events', () => {
  it('presences in the legacy and slim forms, with presence_last_update_id', async () => {
    const legacyState = await registerQueue(t, 'cordelia', { fetch_event_types: ['presence'], event_types: ['presence'] });
    expect(Object.keys(legacyState).sort()).toEqual(['last_event_id', 'msg', 'presence_last_update_id', 'presences', 'queue_id', 'result', 'server_timestamp', 'zulip_feature_level', 'zulip_merge_base', 'zulip_version']);
    expect(legacyState.presences[email('hamlet')]).toEqual(legacy('active', T0 + 500));
    // The newest update was the deactivated user's, which is left out.
    expect(legacyState.presence_last_update_id).toBe(state.realm(t.realmId).seq - 1);
    const slim = await registerQueue(t, 'cordelia', { fetch_event_types: ['presence'], slim_presence: true });
    expect(slim.presences[String(id('hamlet'))]).toEqual({ active_timestamp: T0 + 500, idle_timestamp: T0 + 500 });
  });

  it('each queue gets its form: legacy, slim (no email), simplified (modern, keyed by id)', async () => {
    const plain = await registerQueue(t, 'iago', { event_types: ['presence'] });
    const slim = await registerQueue(t, 'iago', { event_types: ['presence'], slim_presence: true });
    const simple = await registerQueue(t, 'iago', { event_types: ['presence'], client_capabilities: { notification_settings_null: false, simplified_presence_events: true } });
    const u = await t.createUser({ email: 'presence-new@zulip.com', fullName: 'Presence New' });
    clock.now = T0 + 900;
    expectSuccess(await report(u, { status: 'active' }));
    const legacyEvent = { type: 'presence', user_id: u.id, email: u.email, server_timestamp: T0 + 900, presence: { website: website('active', T0 + 900) } };
    expect(withoutIds(await getEvents(t, 'iago', plain.queue_id))).toEqual([legacyEvent]);
    const { email: _e, ...noEmail } = legacyEvent;
    expect(withoutIds(await getEvents(t, 'iago', slim.queue_id))).toEqual([noEmail]);
    expect(withoutIds(await getEvents(t, 'iago', simple.queue_id))).toEqual([
      { type: 'presence', presences: { [String(u.id)]: { active_timestamp: T0 + 900, idle_timestamp: T0 + 900 } } },
    ]);
  });

  for (const [label, params] of [
    ['legacy', { fetch_event_types: ['presence'], event_types: ['presence'] }],
    ['slim', { fetch_event_types: ['presence'], event_types: ['presence'], slim_presence: true }],
    ['simplified', { event_types: ['presence'], slim_presence: true, client_capabilities: { notification_settings_null: false, simplified_presence_events: true } }],
  ] as const) {
    it(`stale ${label} state + presence events == fresh state`, async () => {
      const u = await t.createUser({ email: `presence-${label}@zulip.com`, fullName: `Presence ${label}` });
      const w = await t.createUser({ email: `presence-${label}-2@zulip.com`, fullName: `Presence ${label} 2` });
      clock.now += 10;
      expectSuccess(await report(u, { status: 'active' }));
      clock.now += 1000;
      const events = await expectStateConsistent(
        t,
        'othello',
        async () => {
          expectSuccess(await report(u, { status: 'active' }));
          expectSuccess(await report(w, { status: 'active' }));
        },
        params,
        { ignore: ['presence_last_update_id'] },
      );
      expect(events.map((e) => e.type)).toEqual(['presence', 'presence']);
    });
  }
});

describe('write-through to the database', () => {
  it('flush writes every entry and the sequence; a fresh state reads the same back', async () => {
    await state.flush();
    expect(state.pending).toBe(0);
    const rows = await t.app.ctx.db.selectFrom('user_presences').selectAll().orderBy('user_id').execute();
    const mem = [...state.realm(t.realmId).entries].sort((a, b) => a[0] - b[0]);
    expect(rows).toEqual(mem.map(([userId, e]) => ({ user_id: userId, realm_id: t.realmId, last_active_time: e.lastActive, last_connected_time: e.lastConnected, last_update_id: e.lastUpdateId })));
    const seq = await t.app.ctx.db.selectFrom('presence_sequences').selectAll().execute();
    expect(seq).toEqual([{ realm_id: t.realmId, last_update_id: state.realm(t.realmId).seq }]);
    const fresh = new PresenceState(t.app.ctx);
    await fresh.ready();
    expect(fresh.realm(t.realmId)).toEqual(state.realm(t.realmId));
    await fresh.stop();
  });

  it('closing the server flushes what is pending (before the store closes)', async () => {
    const t2 = await startTestServer();
    try {
      expectSuccess(await t2.post('/users/me/presence', { status: 'active' }, 'hamlet'));
      const s2 = presenceOf(t2.app.ctx);
      expect(s2.pending).toBe(1);
      expect(await t2.app.ctx.db.selectFrom('user_presences').selectAll().execute()).toEqual([]);
      await t2.app.http.close();
      expect(s2.pending).toBe(0);
      const rows = await t2.app.ctx.db.selectFrom('user_presences').select(['user_id', 'last_update_id']).execute();
      expect(rows).toEqual([{ user_id: t2.users.hamlet.id, last_update_id: 1 }]);
    } finally {
      await t2.close();
    }
  });
});

describe('presence_enabled and large realms', () => {
  it('turning sharing off shows the user offline since a little before now; on, active now (forced events)', async () => {
    clock.now = T0 + 5000;
    const row = await t.row(id('hamlet'));
    let deliveries = await t.captureEvents(() => presenceEnabledChanged(t.app.ctx, row, false));
    expect(deliveries.map((d) => d.event)).toEqual([
      {
        type: 'presence',
        user_id: id('hamlet'),
        email: email('hamlet'),
        server_timestamp: T0 + 5000,
        presence: { website: website('idle', T0 + 5000 - 320) },
        __modern: { active_timestamp: row.date_joined, idle_timestamp: T0 + 5000 - 320 },
      },
    ]);
    expect(state.realm(t.realmId).entries.get(id('hamlet'))).toMatchObject({ lastActive: null, lastConnected: T0 + 5000 - 320 });
    deliveries = await t.captureEvents(() => presenceEnabledChanged(t.app.ctx, row, true));
    expect(deliveries.map((d) => (d.event.presence as any).website)).toEqual([website('active', T0 + 5000)]);
  });

  it('above 100 active users, coming online sends no event (forced ones still go)', async () => {
    const have = (await t.app.ctx.db.selectFrom('users').select('id').where('realm_id', '=', t.realmId).where('is_active', '=', 1).execute()).length;
    for (let i = have; i <= 100; i++) {
      await transact(t.app.ctx, (tx) => doCreateUser(t.app.ctx, tx, t.realmId, { email: `crowd${i}@zulip.com`, fullName: `Crowd ${i}`, passwordHash: null }));
    }
    const u = await t.createUser({ email: 'presence-crowd@zulip.com', fullName: 'Presence Crowd' });
    clock.now = T0 + 6000;
    expect(await t.captureEvents(() => report(u, { status: 'active' }))).toEqual([]);
    const deliveries = await t.captureEvents(() => presenceEnabledChanged(t.app.ctx, { id: u.id, realm_id: t.realmId }, true));
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.userIds.length).toBeGreaterThan(100);
  });
});

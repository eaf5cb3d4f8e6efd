import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_GUEST } from '../../src/domain/rules/users.js';
import { expectSuccess, startTestServer, type FixtureName, type TestServer, type TestUser } from '../support/server.js';
import { getEvents, registerQueue } from '../support/events.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

/**
 * POST /register is a hot path (architecture.md convention 10, performance.md
 * P3): its number of SQL statements is a constant, whatever the numbers of
 * users, channels, subscriptions, groups and messages of the realm.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const WHO: readonly FixtureName[] = ['iago', 'hamlet', 'polonius'];
const crowd: TestUser[] = [];
let channels = 0;
let groups = 0;
let lastGroup = 0;
let bots = 0;
let profileField = 0;
const deactivated = new Set<number>();

/**
 * Grows the realm to `users` users (fixtures included), `channelCount`
 * channels each with subscribers and messages (some private, some with
 * anonymous permission groups, some default), `groupCount` user groups
 * (with subgroups and anonymous settings), bots with default channels,
 * profile data, statuses, muted topics, drafts, stars and direct messages.
 */
async function growRealm(users: number, channelCount: number, groupCount: number, botCount: number): Promise<void> {
  if (!profileField) {
    profileField = expectSuccess(await t.post('/realm/profile_fields', { name: 'Team', field_type: 1 }, 'iago')).id;
  }
  const existing = Object.keys(t.users).length + crowd.length;
  for (let i = existing; i < users; i++) {
    const u = await t.createUser({ email: `crowd${i}@zulip.com`, fullName: `Crowd ${i}`, role: i % 10 === 0 ? ROLE_GUEST : undefined });
    crowd.push(u);
    expectSuccess(await t.patch('/users/me/profile_data', { data: [{ id: profileField, value: `team ${i % 7}` }] }, u));
    if (i % 8 === 0) {
      expectSuccess(await t.post('/users/me/status', { status_text: `busy ${u.id}`, emoji_name: 'car' }, u));
      await sendDirectMessage(t, u, ['hamlet'], `hi from ${u.id}`);
      await sendDirectMessage(t, u, ['hamlet', 'iago', 'polonius'], `hi all from ${u.id}`);
    }
  }
  // One deactivated user per growth step.
  const gone = crowd[crowd.length - 1]!;
  expectSuccess(await t.delete(`/users/${gone.id}`, {}, 'iago'));
  deactivated.add(gone.id);
  const active = crowd.filter((u) => u.role !== ROLE_GUEST && !deactivated.has(u.id));
  for (; channels < channelCount; channels++) {
    const i = channels;
    // Every 4th channel is private (the guest is not in it); every 3rd has an anonymous administrators group.
    const privateChannel = i % 4 === 3;
    const members = [...(privateChannel ? ['iago', 'hamlet'] : WHO), ...active.filter((_, k) => (k + i) % 3 === 0)] as (FixtureName | TestUser)[];
    const opts: Record<string, unknown> = { invite_only: privateChannel, is_default_stream: i % 10 === 0 && !privateChannel };
    if (i % 3 === 0) opts.can_administer_channel_group = { direct_members: [t.users.shiva.id, active[i % active.length]!.id], direct_subgroups: [] };
    const id = await createChannel(t, `channel ${i}`, members, opts);
    const m = await sendChannelMessage(t, 'iago', id, `topic ${i}`, `hello ${i} @**King Hamlet**`);
    if (i % 5 === 0) await sendChannelMessage(t, 'iago', id, `other ${i}`, `more ${i}`);
    expectSuccess(await t.post('/messages/flags', { messages: [m], op: 'add', flag: 'starred' }, 'hamlet'));
    for (const who of WHO) {
      if (privateChannel && who === 'polonius') continue;
      expectSuccess(await t.post('/user_topics', { stream_id: id, topic: `topic ${i}`, visibility_policy: 1 + (i % 2) }, who));
    }
    expectSuccess(await t.post('/drafts', { drafts: [{ type: 'stream', to: [id], topic: `draft ${i}`, content: 'later', timestamp: 1700000000 + i }] }, 'hamlet'));
  }
  for (; groups < groupCount; groups++) {
    const members = [t.users.hamlet.id, ...active.filter((_, k) => (k + groups) % 4 === 0).map((u) => u.id)];
    const settings: Record<string, unknown> = {};
    if (groups % 2 === 0) settings.can_mention_group = { direct_members: [t.users.othello.id], direct_subgroups: [] };
    const created = expectSuccess(await t.post('/user_groups/create', { name: `group ${groups}`, description: `Group ${groups}`, members, ...settings }, 'iago'));
    if (lastGroup) expectSuccess(await t.post(`/user_groups/${created.group_id}/subgroups`, { add: [lastGroup] }, 'iago'));
    lastGroup = created.group_id;
  }
  for (; bots < botCount; bots++) {
    expectSuccess(await t.post('/bots', { full_name: `Bot ${bots}`, short_name: `b${bots}`, default_sending_stream: `channel ${bots}` }, 'hamlet'));
  }
}

/** Statements of one POST /register with everything asked for (after one warm-up call for the caches). */
async function registerCost(who: FixtureName, params: Record<string, unknown> = {}): Promise<number> {
  const stats = t.app.ctx.store.stats;
  const warm = await registerQueue(t, who, params);
  await t.delete('/events', { queue_id: warm.queue_id }, who);
  const before = stats.queries;
  const body = await registerQueue(t, who, params);
  const n = stats.queries - before;
  await t.delete('/events', { queue_id: body.queue_id }, who);
  return n;
}

describe('POST /register: the number of SQL statements does not grow with the realm', () => {
  it('is the same for a small realm and for 100 users / 50 channels, for an admin, a member and a guest', async () => {
    await growRealm(12, 3, 2, 1);
    const small: Record<string, number> = {};
    for (const who of WHO) small[who] = await registerCost(who);
    const smallSubs: Record<string, number> = {};
    for (const who of WHO) smallSubs[who] = await registerCost(who, { include_subscribers: true, slim_presence: true });

    await growRealm(100, 50, 20, 10);
    const body = await registerQueue(t, 'hamlet', { include_subscribers: true });
    expect(body.realm_users.length + body.realm_non_active_users.length).toBeGreaterThanOrEqual(100);
    expect(body.subscriptions.length).toBe(50);
    expect(body.realm_user_groups.length).toBeGreaterThan(12);
    expect(body.subscriptions.every((s: { subscribers: number[] }) => s.subscribers.length > 2)).toBe(true);
    expect(body.unread_msgs.count).toBeGreaterThan(50);
    await t.delete('/events', { queue_id: body.queue_id }, 'hamlet');

    const large: Record<string, number> = {};
    for (const who of WHO) large[who] = await registerCost(who);
    const largeSubs: Record<string, number> = {};
    for (const who of WHO) largeSubs[who] = await registerCost(who, { include_subscribers: true, slim_presence: true });

    expect(large).toEqual(small);
    expect(largeSubs).toEqual(smallSubs);
    // The user row 1, realm 1 + groups 3 (rows, members, subgroups: shared with the realm's and channels'
    // group settings), users 2, the caller's lists 8 (muted users and devices since issue 18), realm-wide
    // lists 5, bots 2, channels 4 (recursive groups, subscription rows, channels, subscriber counts),
    // messages 4, scheduled messages and reminders 1 (one read for both), code playgrounds 1
    // (realm_playgrounds). The guest gets no default streams and owns no bots (so no bot channel names).
    // On SQLite the realm-wide reads (the user row, realm, users, channels, groups 3, subscriber counts)
    // come from the realm cache (state/realm-cache.ts) while PRAGMA data_version, one statement, says
    // no other connection committed; since 2026-11-27 also the custom profile fields and their values
    // (two statements fewer).
    const sqlite = t.app.ctx.store.dialect === 'sqlite';
    expect(small).toEqual(sqlite ? { iago: 23, hamlet: 23, polonius: 21 } : { iago: 32, hamlet: 32, polonius: 30 });
    // include_subscribers: one more, the realm's subscriber lists.
    expect(smallSubs).toEqual(sqlite ? { iago: 24, hamlet: 24, polonius: 22 } : { iago: 33, hamlet: 33, polonius: 31 });
  }, 240_000);
});

describe('GET /events', () => {
  it('runs no SQL for a queue with pending events', async () => {
    const q = await registerQueue(t, 'hamlet');
    expectSuccess(await t.post('/users/me/alert_words', { alert_words: ['pending'] }, 'hamlet'));
    expectSuccess(await t.get('/users/me', {}, 'hamlet')); // the auth cache is warm again after the write
    const stats = t.app.ctx.store.stats;
    const before = stats.queries;
    const events = await getEvents(t, 'hamlet', q.queue_id, q.last_event_id);
    expect(stats.queries - before).toBe(0);
    expect(events.map((e) => e.type)).toContain('alert_words');
  });
});

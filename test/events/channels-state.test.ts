import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type FixtureName, type TestServer } from '../support/server.js';
import { expectStateConsistent } from '../support/events.js';
import { group, mkChannel } from '../support/channels.js';

/**
 * /register + events == fresh /register for every event type the channel
 * work emits: stream (create, delete, update), subscription (add, remove,
 * update, peer_add, peer_remove), default_streams, channel_folder (add,
 * update, reorder), user_topic, muted_topics, realm_domains and realm.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const FETCH = ['subscription', 'stream', 'default_streams', 'channel_folders', 'user_topic', 'realm_domains', 'realm'];
const VARIANTS: Record<string, unknown>[] = [
  { fetch_event_types: FETCH, include_subscribers: true },
  { fetch_event_types: FETCH, include_subscribers: false, client_capabilities: { archived_channels: true, notification_settings_null: true, empty_topic_name: true } },
];
const WHO: FixtureName[] = ['hamlet', 'othello', 'iago', 'polonius'];

/** Runs `action` once per user and variant, each time checking the stale state + events against a fresh one. */
async function consistent(action: (i: number) => Promise<unknown>): Promise<void> {
  let i = 0;
  for (const who of WHO) {
    for (const params of VARIANTS) {
      const n = i++;
      await expectStateConsistent(t, who, () => action(n), params);
    }
  }
}

describe('channel state stays consistent with its events', () => {
  it('creating channels (public, private with subscribers, web-public)', async () => {
    await consistent((i) => t.post('/channels/create', { name: `c-pub-${i}`, subscribers: [t.users.hamlet.id] }, 'iago'));
    await consistent((i) => t.post('/channels/create', { name: `c-priv-${i}`, subscribers: [t.users.othello.id, t.users.polonius.id], invite_only: true }, 'cordelia'));
    expectSuccess(await t.patch('/realm', { enable_spectator_access: true }, 'owner'));
    await consistent((i) => t.post('/channels/create', { name: `c-web-${i}`, subscribers: [t.users.polonius.id], is_web_public: true }, 'owner'));
  });

  it('subscribing and unsubscribing (self, others, guests, private)', async () => {
    await mkChannel(t, 'sub-target', { subscribers: [t.users.iago.id] });
    await mkChannel(t, 'sub-private', { invite_only: true, subscribers: [t.users.othello.id] });
    await consistent(async (i) => {
      const who = i % 2 ? 'hamlet' : 'cordelia';
      expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-target' }] }, who));
      expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-target' }], principals: [t.users.polonius.id] }, 'iago'));
      expectSuccess(await t.post('/users/me/subscriptions', { subscriptions: [{ name: 'sub-private' }], principals: [t.users.hamlet.id] }, 'othello'));
      expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['sub-target'] }, who));
      expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['sub-target'] }, 'polonius'));
      expectSuccess(await t.delete('/users/me/subscriptions', { subscriptions: ['sub-private'], principals: [t.users.hamlet.id] }, 'iago'));
    });
  });

  it('subscription properties', async () => {
    const id = await mkChannel(t, 'props', { subscribers: WHO.map((w) => t.users[w].id) });
    await consistent(async (i) => {
      for (const who of WHO) {
        expectSuccess(
          await t.post(
            '/users/me/subscriptions/properties',
            { subscription_data: [{ stream_id: id, property: 'is_muted', value: i % 2 === 0 }, { stream_id: id, property: 'color', value: `#00000${i % 10}` }, { stream_id: id, property: 'push_notifications', value: true }] },
            who,
          ),
        );
      }
    });
  });

  it('channel administration: rename, description, privacy both ways, group settings, default, folder, archive and unarchive', async () => {
    const id = await mkChannel(t, 'admin-target', { subscribers: [t.users.othello.id, t.users.iago.id, t.users.polonius.id] });
    const mods = await group(t, 'role:moderators');
    const nobody = await group(t, 'role:nobody');
    const folder = expectSuccess(await t.post('/channel_folders/create', { name: 'F', description: '' }, 'iago')).channel_folder_id;
    await consistent(async (i) => {
      expectSuccess(await t.patch(`/streams/${id}`, { is_default_stream: false }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { new_name: `admin-target-${i}`, description: `d **${i}**` }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { is_private: true }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { can_subscribe_group: { new: { direct_members: [t.users.hamlet.id], direct_subgroups: [] } } }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { can_subscribe_group: { new: nobody } }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { is_private: false }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { can_send_message_group: { new: i % 2 ? mods : await group(t, 'role:everyone') }, folder_id: i % 2 ? folder : null }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { is_default_stream: i % 2 === 0 }, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { topics_policy: i % 2 ? 'disable_empty_topic' : 'inherit', message_retention_days: i % 2 ? 5 : 'realm_default' }, 'owner'));
    });
    await consistent(async () => {
      expectSuccess(await t.patch(`/streams/${id}`, { is_default_stream: false }, 'iago'));
      expectSuccess(await t.delete(`/streams/${id}`, {}, 'iago'));
      expectSuccess(await t.patch(`/streams/${id}`, { is_archived: false }, 'iago'));
    });
    await consistent(() => t.delete(`/streams/${id}`, {}, 'iago').then(() => t.patch(`/streams/${id}`, { is_archived: false }, 'iago')));
  });

  it('channel folders', async () => {
    await consistent(async (i) => {
      const id = expectSuccess(await t.post('/channel_folders/create', { name: `Folder ${i}`, description: 'x' }, 'iago')).channel_folder_id;
      expectSuccess(await t.patch(`/channel_folders/${id}`, { name: `Folder ${i}!`, description: '*y*', is_archived: true }, 'iago'));
      const all = (expectSuccess(await t.get('/channel_folders', { include_archived: true }, 'iago')).channel_folders as any[]).map((f) => f.id);
      expectSuccess(await t.patch('/channel_folders', { order: [...all].reverse() }, 'iago'));
    });
  });

  it('topic preferences (user_topic and the legacy muted_topics)', async () => {
    const id = await mkChannel(t, 'topics', { subscribers: [t.users.polonius.id] });
    for (const who of WHO) {
      for (const params of [...VARIANTS, { fetch_event_types: ['muted_topics'] }, { fetch_event_types: ['muted_topics', 'user_topic'] }]) {
        await expectStateConsistent(t, who, async () => {
          expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'one', visibility_policy: 1 }, who));
          expectSuccess(await t.post('/user_topics', { stream_id: id, topic: '', visibility_policy: 3 }, who));
          expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'ONE', visibility_policy: 2 }, who));
          expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'two', visibility_policy: 1 }, who));
          expectSuccess(await t.post('/user_topics', { stream_id: id, topic: 'one', visibility_policy: 0 }, who));
        }, params);
      }
    }
  });

  it('allowed domains and realm settings', async () => {
    await consistent(async (i) => {
      expectSuccess(await t.post('/realm/domains', { domain: `d${i}.example.com`, allow_subdomains: false }, 'owner'));
      expectSuccess(await t.patch(`/realm/domains/d${i}.example.com`, { allow_subdomains: true }, 'owner'));
      if (i > 0) expectSuccess(await t.delete(`/realm/domains/d${i - 1}.example.com`, {}, 'owner'));
      expectSuccess(await t.patch('/realm', { name: `Realm ${i}`, message_edit_history_visibility_policy: i % 2 ? 'none' : 'all', allow_message_editing: i % 2 === 0 }, 'iago'));
      expectSuccess(await t.patch('/realm', { can_create_public_channel_group: { new: await group(t, i % 2 ? 'role:administrators' : 'role:members') } }, 'iago'));
    });
  });

  it('the register response carries the channel keys', async () => {
    const body = expectSuccess(await t.post('/register', { fetch_event_types: [...FETCH, 'muted_topics'] }, 'hamlet'));
    for (const k of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams', 'realm_default_streams', 'channel_folders', 'user_topics', 'realm_domains']) {
      expect(body).toHaveProperty(k);
    }
    // Clients that ask for user_topic get no legacy muted_topics.
    expect(body).not.toHaveProperty('muted_topics');
  });
});

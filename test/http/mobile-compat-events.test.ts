import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventClass, eventProblems } from '../support/flutter-fields.js';
import { getEvents } from '../support/events.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { multipartRequest, pngImage } from '../support/uploads.js';
import { expectSuccess, startTestServer, type FixtureName, type TestServer } from '../support/server.js';
import { APP_REGISTER_PARAMS } from '../support/mobile-app.js';

/**
 * Every event type the Zulip mobile app decodes (zulip-flutter
 * lib/api/model/events.dart), generated through the API and captured from
 * the queues of clients registered with the app's parameters, holds against
 * the app's field lists: a key it reads without a null check missing, or a
 * wrong type, and the app drops its event queue.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

const ok = async (p: Promise<Parameters<typeof expectSuccess>[0]>) => expectSuccess(await p);

describe('events decode with the app\'s decoders', () => {
  it('every event a member, an admin and a guest receive', async () => {
    const watchers: FixtureName[] = ['hamlet', 'iago', 'polonius'];
    const queues = new Map<FixtureName, { queue_id: string; last_event_id: number }>();
    for (const w of watchers) queues.set(w, await ok(t.post('/register', APP_REGISTER_PARAMS, w)));
    // Older forms the app still decodes: the whole emoji set, and group removal for a client
    // without include_deactivated_groups (as an app build from before those capabilities sends).
    const olderCaps = { ...APP_REGISTER_PARAMS.client_capabilities, individual_emoji_changes: false, include_deactivated_groups: false };
    queues.set('cordelia', await ok(t.post('/register', { ...APP_REGISTER_PARAMS, client_capabilities: olderCaps }, 'cordelia')));

    // Channels, subscriptions, folders.
    const folder = (await ok(t.post('/channel_folders/create', { name: 'Design', description: 'design work' }, 'iago'))).channel_folder_id;
    const folder2 = (await ok(t.post('/channel_folders/create', { name: 'Ops', description: '' }, 'iago'))).channel_folder_id;
    await ok(t.patch(`/channel_folders/${folder}`, { description: 'all design work' }, 'iago'));
    await ok(t.patch('/channel_folders', { order: [folder2, folder] }, 'iago'));
    const chan = await createChannel(t, 'events', ['hamlet', 'iago', 'cordelia', 'polonius'], { folder_id: folder });
    await ok(t.patch(`/streams/${chan}`, { description: 'all the events' }, 'iago'));
    await ok(t.patch(`/streams/${chan}`, { new_name: 'events2' }, 'iago'));
    await ok(t.post('/users/me/subscriptions', { subscriptions: [{ name: 'events2' }], principals: [t.users.othello.id] }, 'iago'));
    await ok(t.delete('/users/me/subscriptions', { subscriptions: ['events2'], principals: [t.users.othello.id] }, 'iago'));
    const side = await createChannel(t, 'side', ['iago']);
    await ok(t.post('/users/me/subscriptions', { subscriptions: [{ name: 'side' }] }, 'hamlet'));
    await ok(t.delete('/users/me/subscriptions', { subscriptions: ['side'] }, 'hamlet'));
    for (const [property, value] of [['color', '#336699'], ['is_muted', true], ['pin_to_top', true], ['desktop_notifications', false], ['push_notifications', true], ['wildcard_mentions_notify', false]] as const) {
      await ok(t.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: chan, property, value }] }, 'hamlet'));
    }
    await ok(t.delete(`/streams/${side}`, {}, 'iago'));

    // Messages: send, edit, move, react, flag, typing, delete.
    const m1 = await sendChannelMessage(t, 'cordelia', chan, 'plans', 'Hello @**King Hamlet**', { local_id: 'x1', queue_id: queues.get('hamlet')!.queue_id });
    const dm = await sendDirectMessage(t, 'cordelia', ['hamlet'], 'a word');
    await sendDirectMessage(t, 'othello', ['hamlet', 'cordelia'], 'to both');
    await ok(t.patch(`/messages/${m1}`, { content: 'Hello again @**King Hamlet**' }, 'cordelia'));
    await ok(t.patch(`/messages/${m1}`, { topic: 'moved plans', propagate_mode: 'change_all' }, 'iago'));
    await ok(t.post(`/messages/${m1}/reactions`, { emoji_name: 'smile' }, 'cordelia'));
    await ok(t.delete(`/messages/${m1}/reactions`, { emoji_name: 'smile' }, 'cordelia'));
    await ok(t.post('/messages/flags', { messages: [m1], op: 'add', flag: 'starred' }, 'hamlet'));
    await ok(t.post('/messages/flags', { messages: [m1, dm], op: 'add', flag: 'read' }, 'hamlet'));
    await ok(t.post('/messages/flags', { messages: [m1, dm], op: 'remove', flag: 'read' }, 'hamlet'));
    await ok(t.post('/typing', { type: 'direct', op: 'start', to: [t.users.hamlet.id] }, 'cordelia'));
    await ok(t.post('/typing', { type: 'direct', op: 'stop', to: [t.users.hamlet.id] }, 'cordelia'));
    await ok(t.post('/typing', { type: 'stream', op: 'start', stream_id: chan, topic: 'plans' }, 'cordelia'));
    const doomed = await sendChannelMessage(t, 'cordelia', chan, 'plans', 'delete me');
    await ok(t.delete(`/messages/${doomed}`, {}, 'iago'));
    await ok(t.post('/user_topics', { stream_id: chan, topic: 'moved plans', visibility_policy: 3 }, 'hamlet'));

    // Users, groups, statuses, presence, settings.
    const newcomer = await t.createUser({ email: 'newcomer@zulip.com', fullName: 'New Comer' });
    await ok(t.patch(`/users/${newcomer.id}`, { full_name: 'New Comer Two', role: 300 }, 'owner'));
    await ok(t.delete(`/users/${newcomer.id}`, {}, 'iago'));
    const group = (await ok(t.post('/user_groups/create', { name: 'movers', description: 'they move', members: [t.users.cordelia.id] }, 'iago'))).group_id;
    const sub = (await ok(t.post('/user_groups/create', { name: 'shakers', description: '', members: [t.users.othello.id] }, 'iago'))).group_id;
    await ok(t.patch(`/user_groups/${group}`, { description: 'they move fast' }, 'iago'));
    await ok(t.post(`/user_groups/${group}/members`, { add: [t.users.hamlet.id], delete: [t.users.cordelia.id] }, 'iago'));
    await ok(t.post(`/user_groups/${group}/subgroups`, { add: [sub] }, 'iago'));
    await ok(t.post(`/user_groups/${group}/subgroups`, { delete: [sub] }, 'iago'));
    await ok(t.post(`/user_groups/${sub}/deactivate`, {}, 'iago'));
    await ok(t.post('/users/me/status', { status_text: 'busy', emoji_name: 'car' }, 'othello'));
    await ok(t.post('/users/me/status', { status_text: '', emoji_name: '' }, 'othello'));
    await ok(t.post('/users/me/presence', { status: 'active', new_user_input: true, slim_presence: true }, 'othello'));
    for (const [k, v] of [['starred_message_counts', true], ['emojiset', 'text'], ['twenty_four_hour_time', true], ['presence_enabled', false], ['display_emoji_reaction_users', false], ['web_inbox_show_channel_folders', false], ['enter_sends', true]] as const) {
      await ok(t.patch('/settings', { [k]: v }, 'hamlet'));
      await ok(t.patch('/settings', { [k]: v }, 'iago'));
      await ok(t.patch('/settings', { [k]: v }, 'polonius'));
    }
    await ok(t.post('/users/me/alert_words', { alert_words: ['deploy'] }, 'hamlet'));
    await ok(t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'hamlet'));
    await ok(t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'iago'));
    await ok(t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'polonius'));
    for (const w of watchers) {
      const d = (await ok(t.post('/register_client_device', {}, w))).device_id;
      await ok(t.post('/remove_client_device', { device_id: d }, w));
      const snip = (await ok(t.post('/saved_snippets', { title: 'hi', content: 'Hello' }, w))).saved_snippet_id;
      await ok(t.patch(`/saved_snippets/${snip}`, { content: 'Hello there' }, w));
      await ok(t.delete(`/saved_snippets/${snip}`, {}, w));
    }

    // Realm: custom emoji, profile fields.
    const png = await pngImage(64, 64);
    await ok(multipartRequest(t, 'POST', '/realm/emoji/party', [{ filename: 'party.png', contentType: 'image/png', data: png }], {}, 'iago'));
    await ok(t.delete('/realm/emoji/party', {}, 'iago'));
    await ok(t.post('/realm/profile_fields', { name: 'Team', hint: 'which team', field_type: 1 }, 'owner'));

    const seen = new Set<string>();
    for (const w of [...watchers, 'cordelia'] as const) {
      const q = queues.get(w)!;
      const events = await getEvents(t, w, q.queue_id, q.last_event_id);
      expect(events.length).toBeGreaterThan(20);
      const problems = events.flatMap((e) => eventProblems(e));
      expect({ watcher: w, problems }).toEqual({ watcher: w, problems: [] });
      for (const e of events) {
        const cls = eventClass(e);
        if (cls) seen.add(cls);
      }
    }
    // A heartbeat, from a long poll on a quiet queue.
    const q = queues.get('hamlet')!;
    const all = await getEvents(t, 'hamlet', q.queue_id, q.last_event_id);
    const beat = await getEvents(t, 'hamlet', q.queue_id, all[all.length - 1].id, { block: true });
    expect(beat.map((e) => e.type)).toEqual(['heartbeat']);
    expect(beat.flatMap((e) => eventProblems(e))).toEqual([]);
    seen.add(eventClass(beat[0])!);

    // Every decoder class the app has for what Parley sends was exercised (not SubmessageEvent:
    // Parley has no widgets; not DeviceUpdateEvent: without a push service no device changes;
    // not RealmUserRemoveEvent: every user can see every other one).
    expect([...seen].sort()).toEqual(
      [
        'AlertWordsEvent',
        'ChannelCreateEvent',
        'ChannelDeleteEvent',
        'ChannelFolderAddEvent',
        'ChannelFolderReorderEvent',
        'ChannelFolderUpdateEvent',
        'ChannelUpdateEvent',
        'CustomProfileFieldsEvent',
        'DeleteMessageEvent',
        'DeviceAddEvent',
        'DeviceRemoveEvent',
        'HeartbeatEvent',
        'MessageEvent',
        'MutedUsersEvent',
        'PresenceEvent',
        'ReactionEvent',
        'RealmEmojiAddEvent',
        'RealmEmojiUpdateOneEvent',
        'RealmEmojiUpdateEvent',
        'RealmUserAddEvent',
        'RealmUserUpdateEvent',
        'SavedSnippetsAddEvent',
        'SavedSnippetsRemoveEvent',
        'SavedSnippetsUpdateEvent',
        'SubscriptionAddEvent',
        'SubscriptionPeerAddEvent',
        'SubscriptionPeerRemoveEvent',
        'SubscriptionRemoveEvent',
        'SubscriptionUpdateEvent',
        'TypingEvent',
        'UpdateMessageEvent',
        'UpdateMessageFlagsAddEvent',
        'UpdateMessageFlagsRemoveEvent',
        'UserGroupAddEvent',
        'UserGroupAddMembersEvent',
        'UserGroupAddSubgroupsEvent',
        'UserGroupRemoveMembersEvent',
        'UserGroupRemoveSubgroupsEvent',
        'UserGroupRemoveEvent',
        'UserGroupUpdateEvent',
        'UserSettingsUpdateEvent',
        'UserStatusEvent',
        'UserTopicEvent',
      ].sort(),
    );
  });
});

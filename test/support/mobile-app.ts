import { createChannel, sendChannelMessage, sendDirectMessage } from './messages.js';
import { multipartRequest, pngImage } from './uploads.js';
import { expectSuccess, type TestServer } from './server.js';

/** The /register parameters zulip-flutter's registerQueue sends (lib/api/route/events.dart). */
export const APP_REGISTER_PARAMS = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  client_capabilities: {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: true,
    stream_typing_notifications: true,
    user_settings_object: true,
    include_deactivated_groups: true,
    empty_topic_name: true,
    individual_emoji_changes: true,
  },
};

/** A realm with something of everything the app shows. */
export async function populate(t: TestServer): Promise<void> {
  const chan = await createChannel(t, 'design', ['owner', 'iago', 'hamlet', 'cordelia', 'polonius', 'bot']);
  await createChannel(t, 'secret', ['owner', 'hamlet'], { invite_only: true });
  await sendChannelMessage(t, 'iago', 'design', 'logo', 'Hello @**King Hamlet** :smile:');
  await sendChannelMessage(t, 'cordelia', chan, 'colours', 'Red or blue?');
  await sendChannelMessage(t, 'owner', chan, '', 'general chat');
  await sendDirectMessage(t, 'cordelia', ['hamlet'], 'a private word');
  await sendDirectMessage(t, 'othello', ['hamlet', 'cordelia'], 'group DM');
  const msg = await sendChannelMessage(t, 'hamlet', 'design', 'logo', 'star me');
  expectSuccess(await t.post('/messages/flags', { messages: [msg], op: 'add', flag: 'starred' }, 'hamlet'));
  expectSuccess(await t.post(`/messages/${msg}/reactions`, { emoji_name: 'smile' }, 'cordelia'));
  const png = await pngImage(64, 64);
  expectSuccess(await multipartRequest(t, 'POST', '/realm/emoji/parrot', [{ filename: 'parrot.png', contentType: 'image/png', data: png }], {}, 'iago'));
  expectSuccess(await t.post('/user_groups/create', { name: 'designers', description: 'People who design', members: [t.users.hamlet.id, t.users.cordelia.id] }, 'iago'));
  expectSuccess(await t.post('/users/me/status', { status_text: 'on a break', emoji_name: 'coffee' }, 'cordelia'));
  expectSuccess(await t.post('/users/me/presence', { status: 'active', new_user_input: true, slim_presence: true }, 'cordelia'));
  expectSuccess(await t.post('/users/me/presence', { status: 'idle', slim_presence: true }, 'othello'));
  expectSuccess(await t.post(`/users/me/muted_users/${t.users.othello.id}`, {}, 'hamlet'));
  expectSuccess(await t.post('/user_topics', { stream_id: chan, topic: 'colours', visibility_policy: 1 }, 'hamlet'));
  expectSuccess(await t.post('/users/me/alert_words', { alert_words: ['logo'] }, 'hamlet'));
  expectSuccess(await t.post('/realm/profile_fields', { name: 'Phone', hint: 'mobile', field_type: 1 }, 'owner'));
  expectSuccess(await t.post('/saved_snippets', { title: 'hi', content: 'Hello there' }, 'hamlet'));
}


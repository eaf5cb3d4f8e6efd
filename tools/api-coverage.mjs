#!/usr/bin/env node
// Generates docs/api-coverage.md from THE route table (src/http/routes.ts): every
// method + path Parley serves, with the name of the Zulip endpoint it implements
// and, where Zulip documents it, the page at https://zulip.com/api/<slug>.
// Run after a build:  npm run build && node tools/api-coverage.mjs
// test/resilience/api-coverage.test.ts fails when the doc and the table differ,
// and when a route has no entry in ZULIP_NAMES below.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** "METHOD /path" (relative to /api/v1) -> [Zulip's name for the endpoint, docs slug or ''] */
export const ZULIP_NAMES = {
  'GET /server_settings': ['Get server settings', 'get-server-settings'],
  'POST /fetch_api_key': ['Fetch an API key (production)', 'fetch-api-key'],
  // Incoming webhooks (zerver/webhooks/<name>; https://zulip.com/integrations/doc/<name>).
  'POST /external/json': ['JSON formatter incoming webhook', ''],
  'POST /external/github': ['GitHub incoming webhook', ''],
  'POST /external/gitlab': ['GitLab incoming webhook', ''],
  'POST /external/grafana': ['Grafana incoming webhook', ''],
  'POST /external/alertmanager': ['Prometheus Alertmanager incoming webhook', ''],
  'POST /external/sentry': ['Sentry incoming webhook', ''],
  'POST /register': ['Register an event queue', 'register-queue'],
  'GET /events': ['Get events from an event queue', 'get-events'],
  'DELETE /events': ['Delete an event queue', 'delete-queue'],
  'PATCH /settings': ['Update settings', 'update-settings'],
  'PATCH /settings/display': ['Update settings (legacy display-settings path)', ''],
  'PATCH /settings/notifications': ['Update settings (legacy notification-settings path)', ''],
  'POST /typing': ['Set "typing" status', 'set-typing-status'],
  'GET /users/me/alert_words': ['Get all alert words', 'get-alert-words'],
  'POST /users/me/alert_words': ['Add alert words', 'add-alert-words'],
  'DELETE /users/me/alert_words': ['Remove alert words', 'remove-alert-words'],
  'GET /users': ['Get users', 'get-users'],
  'POST /users': ['Create a user', 'create-user'],
  'GET /users/me': ['Get own user', 'get-own-user'],
  'DELETE /users/me': ['Deactivate own user', 'deactivate-own-user'],
  'GET /users/:user_id': ['Get a user / Get a user by email', 'get-user'],
  'PATCH /users/:user_id': ['Update a user', 'update-user'],
  'DELETE /users/:user_id': ['Deactivate a user', 'deactivate-user'],
  'POST /users/:user_id/reactivate': ['Reactivate a user', 'reactivate-user'],
  'POST /users/me/api_key/regenerate': ['Regenerate own API key (web app endpoint)', ''],
  'POST /users/me/avatar': ['Upload own avatar (web app endpoint)', ''],
  'DELETE /users/me/avatar': ['Delete own avatar (web app endpoint)', ''],
  'GET /realm/profile_fields': ['Get all custom profile fields', 'get-custom-profile-fields'],
  'POST /realm/profile_fields': ['Create a custom profile field', 'create-custom-profile-field'],
  'PATCH /realm/profile_fields': ['Reorder custom profile fields', 'reorder-custom-profile-fields'],
  'PATCH /realm/profile_fields/:field_id': ['Update a custom profile field', ''],
  'DELETE /realm/profile_fields/:field_id': ['Delete a custom profile field', ''],
  'PATCH /users/me/profile_data': ['Update own custom profile data', ''],
  'DELETE /users/me/profile_data': ['Remove own custom profile data', ''],
  'POST /bots': ['Create a bot', ''],
  'GET /bots': ['Get own bots', ''],
  'PATCH /bots/:bot_id': ['Update a bot', ''],
  'DELETE /bots/:bot_id': ['Deactivate a bot', ''],
  'POST /bots/:bot_id/api_key/regenerate': ["Regenerate a bot's API key", ''],
  'POST /users/me/status': ['Update your status', 'update-status'],
  'POST /users/:user_id/status': ["Update a user's status", 'update-status-for-user'],
  'GET /users/:user_id/status': ["Get a user's status", 'get-user-status'],
  'POST /user_groups/create': ['Create a user group', 'create-user-group'],
  'GET /user_groups': ['Get user groups', 'get-user-groups'],
  'PATCH /user_groups/:user_group_id': ['Update a user group', 'update-user-group'],
  'POST /user_groups/:user_group_id/deactivate': ['Deactivate a user group', 'deactivate-user-group'],
  'POST /user_groups/:user_group_id/members': ['Update user group members', 'update-user-group-members'],
  'POST /user_groups/:user_group_id/subgroups': ['Update subgroups of a user group', 'update-user-group-subgroups'],
  'GET /user_groups/:user_group_id/members': ['Get user group members', 'get-user-group-members'],
  'GET /user_groups/:user_group_id/members/:user_id': ['Get user group membership status', 'get-is-user-group-member'],
  'GET /user_groups/:user_group_id/subgroups': ['Get subgroups of a user group', 'get-user-group-subgroups'],
  'GET /drafts': ['Get drafts', 'get-drafts'],
  'POST /drafts': ['Create drafts', 'create-drafts'],
  'PATCH /drafts/:draft_id': ['Edit a draft', 'edit-draft'],
  'DELETE /drafts/:draft_id': ['Delete a draft', 'delete-draft'],
  'GET /navigation_views': ['Get all navigation views', 'get-navigation-views'],
  'POST /navigation_views': ['Add a navigation view', 'add-navigation-view'],
  'PATCH /navigation_views/*': ['Update the navigation view', 'edit-navigation-view'],
  'DELETE /navigation_views/*': ['Remove a navigation view', 'remove-navigation-view'],
  'GET /saved_snippets': ['Get all saved snippets', 'get-saved-snippets'],
  'POST /saved_snippets': ['Create a saved snippet', 'create-saved-snippet'],
  'PATCH /saved_snippets/:saved_snippet_id': ['Edit a saved snippet', 'edit-saved-snippet'],
  'DELETE /saved_snippets/:saved_snippet_id': ['Delete a saved snippet', 'delete-saved-snippet'],
  'POST /channels/create': ['Create a channel', 'create-channel'],
  'GET /streams': ['Get all channels', 'get-streams'],
  'GET /streams/:stream_id': ['Get a channel by ID', 'get-stream-by-id'],
  'GET /get_stream_id': ['Get channel ID', 'get-stream-id'],
  'GET /streams/:stream_id/members': ['Get channel subscribers', 'get-subscribers'],
  'PATCH /streams/:stream_id': ['Update a channel', 'update-stream'],
  'DELETE /streams/:stream_id': ['Archive a channel', 'archive-stream'],
  'GET /users/me/subscriptions': ['Get subscribed channels', 'get-subscriptions'],
  'POST /users/me/subscriptions': ['Subscribe to a channel', 'subscribe'],
  'DELETE /users/me/subscriptions': ['Unsubscribe from a channel', 'unsubscribe'],
  'PATCH /users/me/subscriptions': ['Update subscriptions (add and remove in one call)', ''],
  'POST /users/me/subscriptions/properties': ['Update subscription settings', 'update-subscription-settings'],
  'PATCH /users/me/subscriptions/:stream_id': ['Update a subscription setting (legacy path)', ''],
  'GET /users/me/subscriptions/:stream_id': ['Get subscription status (own)', ''],
  'GET /users/:user_id/subscriptions/:stream_id': ['Get subscription status', 'get-subscription-status'],
  'POST /channel_folders/create': ['Create a channel folder', 'create-channel-folder'],
  'GET /channel_folders': ['Get channel folders', 'get-channel-folders'],
  'PATCH /channel_folders/:channel_folder_id': ['Update a channel folder', 'update-channel-folder'],
  'PATCH /channel_folders': ['Reorder channel folders', 'patch-channel-folders'],
  'POST /user_topics': ['Update personal preferences for a topic', 'update-user-topic'],
  'GET /realm/domains': ['Get allowed domains (web app endpoint)', ''],
  'POST /realm/domains': ['Add an allowed domain', ''],
  'PATCH /realm/domains/:domain': ['Update an allowed domain', ''],
  'DELETE /realm/domains/:domain': ['Remove an allowed domain', ''],
  'PATCH /realm': ['Update realm settings', ''],
  'POST /messages': ['Send a message', 'send-message'],
  'GET /messages': ['Get messages', 'get-messages'],
  'GET /messages/:message_id': ['Fetch a single message', 'get-message'],
  'POST /messages/render': ['Render a message', 'render-message'],
  'PATCH /messages/:message_id': ['Edit a message', 'update-message'],
  'DELETE /messages/:message_id': ['Delete a message', 'delete-message'],
  'GET /messages/:message_id/history': ["Get a message's edit history", 'get-message-history'],
  'POST /messages/:message_id/typing': ['Set "typing" status for message editing', 'set-typing-status-for-message-edit'],
  'POST /messages/flags': ['Update personal message flags', 'update-message-flags'],
  'POST /messages/flags/narrow': ['Update personal message flags for narrow', 'update-message-flags-for-narrow'],
  'POST /mark_all_as_read': ['Mark all messages as read', 'mark-all-as-read'],
  'POST /mark_stream_as_read': ['Mark messages in a channel as read', 'mark-stream-as-read'],
  'POST /mark_topic_as_read': ['Mark messages in a topic as read', 'mark-topic-as-read'],
  'POST /messages/:message_id/reactions': ['Add an emoji reaction', 'add-reaction'],
  'DELETE /messages/:message_id/reactions': ['Remove an emoji reaction', 'remove-reaction'],
  'POST /users/me/presence': ['Update your presence', 'update-presence'],
  'GET /users/:user_id_or_email/presence': ["Get a user's presence", 'get-user-presence'],
  'GET /realm/presence': ['Get presence of all users', 'get-presence'],
  'GET /realm/emoji': ['Get all custom emoji', 'get-custom-emoji'],
  'POST /realm/emoji/*': ['Upload custom emoji', 'upload-custom-emoji'],
  'DELETE /realm/emoji/*': ['Deactivate custom emoji', 'deactivate-custom-emoji'],
  'GET /realm/linkifiers': ['Get linkifiers', 'get-linkifiers'],
  'POST /realm/filters': ['Add a linkifier', 'add-linkifier'],
  'PATCH /realm/filters/:filter_id': ['Update a linkifier', 'update-linkifier'],
  'DELETE /realm/filters/:filter_id': ['Remove a linkifier', 'remove-linkifier'],
  'PATCH /realm/linkifiers': ['Reorder linkifiers', 'reorder-linkifiers'],
  'GET /users/me/:stream_id/topics': ['Get topics in a channel', 'get-stream-topics'],
  'GET /streams/:stream_id/email_address': ["Get channel's email address", 'get-stream-email-address'],
};

/** The Markdown page for a route table ({ method, path, auth } entries, in table order). */
export function renderApiCoverage(routes) {
  const rows = routes.map((r) => {
    const key = `${r.method} ${r.path}`;
    const entry = ZULIP_NAMES[key];
    const name = entry ? (entry[1] ? `[${entry[0]}](https://zulip.com/api/${entry[1]})` : entry[0]) : '**(no Zulip name: add it to tools/api-coverage.mjs)**';
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}').replace('*', '{name}');
    return `| \`${r.method}\` | \`/api/v1${path}\` | ${name} | ${r.auth === 'none' ? 'none' : r.auth === 'webhook' ? '`api_key` parameter or Basic' : 'Basic'} |`;
  });
  return [
    '# API coverage',
    '',
    '<!-- Generated by tools/api-coverage.mjs from src/http/routes.ts; do not edit by hand. -->',
    '',
    `Parley serves ${routes.length} method + path pairs of Zulip's REST API, listed here in the`,
    "order of the route table. \"Auth\" is Basic (`email:api_key`) unless the endpoint is public.",
    'Regenerate with `npm run build && node tools/api-coverage.mjs`; a test fails when this page',
    'and the route table differ.',
    '',
    '| Method | Path | Zulip endpoint | Auth |',
    '|---|---|---|---|',
    ...rows,
    '',
    'Outside `/api/v1`: `GET /metrics` (Prometheus, see docs/observability.md), uploaded avatars and',
    'custom emoji images under `/user_avatars/`.',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { routes } = await import('../dist/src/http/routes.js');
  const out = new URL('../docs/api-coverage.md', import.meta.url);
  writeFileSync(out, renderApiCoverage(routes));
  process.stdout.write(`wrote ${fileURLToPath(out)} (${routes.length} routes)\n`);
}

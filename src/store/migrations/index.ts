import type { Migration } from 'kysely';
import { m0001Foundation } from './0001-foundation.js';
import { m0100Events } from './0100-events.js';
import { m0200Channels } from './0200-channels.js';
import { m0300Messages } from './0300-messages.js';
import { m0400GroupsDraftsViewsSnippets } from './0400-groups-drafts-views-snippets.js';
import { m0500Profiles } from './0500-profiles.js';
import { m0600ClientCompat } from './0600-client-compat.js';
import { m0800Mobile } from './0800-mobile.js';
import { m1200Attachments } from './1200-attachments.js';
import { m1300WebSessions } from './1300-web-sessions.js';
import { m1000MessageSearch } from './1000-message-search.js';
import { m1001RealmPlaygrounds } from './1001-realm-playgrounds.js';
import { m1100ScheduledMessages } from './1100-scheduled-messages.js';
import { m0900Join } from './0900-join.js';
import { m1400BotStorage } from './1400-bot-storage.js';
import { m1600OutgoingWebhooks } from './1600-outgoing-webhooks.js';
import { m1650RealmExports } from './1650-realm-exports.js';
import { m1500RealmUserDefaults } from './1500-realm-user-defaults.js';
import { m1700LongTextKeys } from './1700-long-text-keys.js';

/**
 * Forward-only migrations, applied in name order at start. Each resource adds
 * its own file; number ranges keep parallel work from colliding:
 * 0001-0099 foundation/users, 0100 events, 0200 channels, 0300 messages,
 * 0400 groups/drafts/views/snippets, 0500 profiles, 0600 client compat, 0700 guests,
 * 0800 mobile app, 0900 sign-up and system bots, 1000 search and playgrounds, 1100 jobs,
 * 1200 files, 1300 web sessions, 1400 integrations and bot storage, 1500 realm user defaults,
 * 1600 outgoing webhooks, 1650 organization exports, 1700 PostgreSQL keys over long text.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001Foundation,
  '0100-events': m0100Events,
  '0200-channels': m0200Channels,
  '0300-messages': m0300Messages,
  '0400-groups-drafts-views-snippets': m0400GroupsDraftsViewsSnippets,
  '0500-profiles': m0500Profiles,
  '0600-client-compat': m0600ClientCompat,
  '0800-mobile': m0800Mobile,
  '1200-attachments': m1200Attachments,
  '1300-web-sessions': m1300WebSessions,
  '1000-message-search': m1000MessageSearch,
  '1001-realm-playgrounds': m1001RealmPlaygrounds,
  '1100-scheduled-messages': m1100ScheduledMessages,
  '0900-join': m0900Join,
  '1400-bot-storage': m1400BotStorage,
  '1600-outgoing-webhooks': m1600OutgoingWebhooks,
  '1650-realm-exports': m1650RealmExports,
  '1500-realm-user-defaults': m1500RealmUserDefaults,
  '1700-long-text-keys': m1700LongTextKeys,
};

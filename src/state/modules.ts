import type { StateModule } from './types.js';
import { defaultStreamsModule, streamsModule, subscriptionsModule } from './channels.js';
import { channelFoldersModule, mutedTopicsModule, realmDomainsModule, userTopicsModule } from './channel-extras.js';
import { alertWordsModule } from './alert-words.js';
import { realmModule } from './realm.js';
import { userSettingsModule } from './user-settings.js';
import { usersModule } from './users.js';
import { userGroupsModule } from './user-groups.js';
import { draftsModule } from './drafts.js';
import { navigationViewsModule } from './navigation-views.js';
import { savedSnippetsModule } from './saved-snippets.js';
import { customProfileFieldsModule, realmBotsModule, userStatusModule } from './profiles.js';
import { messagesModule } from './messages.js';
import { presenceModule } from './presence.js';
import { realmEmojiModule } from './realm-emoji.js';
import { linkifiersModule } from './linkifiers.js';
import { mutedUsersModule } from './muted-users.js';
import { devicesModule } from './devices.js';
import { attachmentsModule } from './attachments.js';
import { playgroundsModule } from './playgrounds.js';
import { realmUserDefaultsModule } from './realm-user-defaults.js';
import { remindersModule, scheduledMessagesModule } from './scheduled-messages.js';

/**
 * Every resource's /register state, in the order keys appear in the
 * response. Each resource appends its module here (one line), as routes.ts
 * lists endpoints.
 */
export const stateModules: StateModule[] = [
  realmModule,
  usersModule,
  userSettingsModule,
  alertWordsModule,
  userGroupsModule,
  draftsModule,
  navigationViewsModule,
  savedSnippetsModule,
  customProfileFieldsModule,
  realmBotsModule,
  userStatusModule,
  subscriptionsModule,
  streamsModule,
  defaultStreamsModule,
  channelFoldersModule,
  userTopicsModule,
  mutedTopicsModule,
  realmDomainsModule,
  messagesModule,
  presenceModule,
  realmEmojiModule,
  linkifiersModule,
  mutedUsersModule,
  devicesModule,
  attachmentsModule,
  playgroundsModule,
  realmUserDefaultsModule,
  scheduledMessagesModule,
  remindersModule,
];

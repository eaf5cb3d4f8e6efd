import type { AnyEndpoint } from './endpoint.js';
import { fetchApiKey } from './endpoints/auth.js';
import { getServerSettings } from './endpoints/server-settings.js';
import * as users from './endpoints/users.js';
import * as avatars from './endpoints/avatars.js';
import * as bots from './endpoints/bots.js';
import * as profileFields from './endpoints/profile-fields.js';
import * as userStatus from './endpoints/user-status.js';
import * as userGroups from './endpoints/user-groups.js';
import * as drafts from './endpoints/drafts.js';
import * as navigationViews from './endpoints/navigation-views.js';
import * as savedSnippets from './endpoints/saved-snippets.js';
import * as events from './endpoints/events.js';
import * as settings from './endpoints/settings.js';
import * as alertWords from './endpoints/alert-words.js';
import { setTypingStatus } from './endpoints/typing.js';
import * as channels from './endpoints/channels.js';
import * as subscriptions from './endpoints/subscriptions.js';
import * as channelFolders from './endpoints/channel-folders.js';
import { updateMutedTopic, updateUserTopic } from './endpoints/user-topics.js';
import * as realmDomains from './endpoints/realm-domains.js';
import * as defaultStreams from './endpoints/default-streams.js';
import * as invites from './endpoints/invites.js';
import { updateRealm } from './endpoints/realm.js';
import { updateRealmUserSettingsDefaults } from './endpoints/realm-user-defaults.js';
import * as messages from './endpoints/messages.js';
import * as messageEdit from './endpoints/message-edit.js';
import * as messageFlags from './endpoints/message-flags.js';
import * as reactions from './endpoints/reactions.js';
import * as presence from './endpoints/presence.js';
import * as realmEmoji from './endpoints/realm-emoji.js';
import * as linkifiers from './endpoints/linkifiers.js';
import * as playgrounds from './endpoints/playgrounds.js';
import * as channelHelpers from './endpoints/channel-helpers.js';
import * as mutedUsers from './endpoints/muted-users.js';
import * as devices from './endpoints/devices.js';
import * as uploads from './endpoints/uploads.js';
import * as scheduledMessages from './endpoints/scheduled-messages.js';
import * as reminders from './endpoints/reminders.js';
import { getReadReceipts } from './endpoints/read-receipts.js';
import { reportMessageEndpoint } from './endpoints/message-report.js';
import { webhookRoutes } from './endpoints/webhooks.js';
import * as botStorage from './endpoints/bot-storage.js';
import * as realmExport from './endpoints/realm-export.js';

/**
 * THE route table: every method + path of the API once. Endpoint files
 * declare; this file mounts. Each resource contributes one block.
 */
export const routes: readonly AnyEndpoint[] = [
  // server and authentication
  getServerSettings,
  fetchApiKey,
  // events, settings, typing, alert words (issue 3)
  events.register,
  events.getEvents,
  events.deleteEvents,
  settings.updateSettings,
  settings.updateDisplaySettings,
  settings.updateNotificationSettings,
  setTypingStatus,
  alertWords.listAlertWords,
  alertWords.addAlertWords,
  alertWords.removeAlertWords,
  // users
  users.listUsers,
  users.createUser,
  users.getOwnUser,
  users.deactivateOwnUser,
  users.getUser,
  users.updateUser,
  users.deactivateUser,
  users.reactivateUser,
  users.regenerateOwnApiKey,
  // user profiles: avatars, custom profile fields, bots, status (issue 11)
  avatars.setOwnAvatar,
  avatars.deleteOwnAvatar,
  profileFields.listProfileFields,
  profileFields.createProfileField,
  profileFields.reorderProfileFields,
  profileFields.updateProfileField,
  profileFields.deleteProfileField,
  profileFields.updateOwnProfileData,
  profileFields.removeOwnProfileData,
  bots.createBot,
  bots.listBots,
  bots.updateBot,
  bots.deactivateBot,
  bots.regenerateBotApiKey,
  userStatus.updateOwnStatus,
  userStatus.updateUserStatus,
  userStatus.getUserStatus,
  // user groups
  userGroups.createUserGroup,
  userGroups.listUserGroups,
  userGroups.updateUserGroup,
  userGroups.deactivateUserGroup,
  userGroups.updateUserGroupMembers,
  userGroups.updateUserGroupSubgroups,
  userGroups.getUserGroupMembers,
  userGroups.getIsUserGroupMember,
  userGroups.getUserGroupSubgroups,
  // drafts
  drafts.listDrafts,
  drafts.createDrafts,
  drafts.editDraft,
  drafts.deleteDraft,
  // navigation views
  navigationViews.listNavigationViews,
  navigationViews.addNavigationView,
  navigationViews.updateNavigationView,
  navigationViews.removeNavigationView,
  // saved snippets
  savedSnippets.listSavedSnippets,
  savedSnippets.createSavedSnippet,
  savedSnippets.editSavedSnippet,
  savedSnippets.deleteSavedSnippet,
  // channels, subscriptions, channel folders, topic preferences, allowed domains, realm settings (issue 4)
  channels.createChannel,
  channels.listChannels,
  channels.getChannel,
  channels.getChannelId,
  channels.getChannelMembers,
  channels.updateChannel,
  channels.archiveChannel,
  subscriptions.listSubscriptions,
  subscriptions.addSubscriptions,
  subscriptions.removeSubscriptions,
  subscriptions.updateSubscriptions,
  subscriptions.updateSubscriptionProperties,
  subscriptions.updateSubscriptionProperty,
  subscriptions.getOwnSubscriptionStatus,
  subscriptions.getUserSubscriptionStatus,
  subscriptions.getUserChannels,
  subscriptions.getUserSubscriptions,
  channelFolders.createChannelFolder,
  channelFolders.listChannelFolders,
  channelFolders.updateChannelFolder,
  channelFolders.reorderChannelFolders,
  updateUserTopic,
  updateMutedTopic,
  realmDomains.listRealmDomains,
  realmDomains.addRealmDomain,
  realmDomains.updateRealmDomain,
  realmDomains.removeRealmDomain,
  defaultStreams.addDefaultStream,
  defaultStreams.removeDefaultStream,
  invites.getInvites,
  invites.sendInvites,
  invites.createMultiuseInvite,
  invites.revokeInvite,
  invites.revokeMultiuseInvite,
  invites.resendInvite,
  updateRealm,
  updateRealmUserSettingsDefaults,
  // messages
  messages.sendMessage,
  messages.getMessages,
  messages.getMessage,
  messages.getMatchesNarrow,
  messages.renderMessage,
  messageEdit.updateMessage,
  messageEdit.deleteMessage,
  messageEdit.getMessageHistory,
  messageEdit.setMessageEditTyping,
  messageFlags.updateMessageFlags,
  messageFlags.updateMessageFlagsForNarrow,
  messageFlags.markAllAsRead,
  messageFlags.markStreamAsRead,
  messageFlags.markTopicAsRead,
  reactions.addReaction,
  reactions.removeReaction,
  // real-client compatibility: presence, custom emoji, linkifiers, channel helpers (issue 10)
  presence.updateOwnPresence,
  presence.getUserPresence,
  presence.getRealmPresence,
  realmEmoji.listRealmEmoji,
  realmEmoji.uploadRealmEmoji,
  realmEmoji.deleteRealmEmoji,
  linkifiers.listLinkifiers,
  linkifiers.addLinkifier,
  linkifiers.updateLinkifier,
  linkifiers.removeLinkifier,
  linkifiers.reorderLinkifiers,
  // code playgrounds (issue 16)
  playgrounds.addPlayground,
  playgrounds.removePlayground,
  channelHelpers.getChannelTopics,
  channelHelpers.getChannelEmailAddress,
  // the Zulip mobile app: muted users, devices and push registration (issue 18)
  mutedUsers.muteUser,
  mutedUsers.unmuteUser,
  devices.registerClientDevice,
  devices.removeClientDevice,
  devices.registerPushDevice,
  devices.addApnsDeviceToken,
  devices.removeApnsDeviceToken,
  devices.addAndroidRegId,
  devices.removeAndroidRegId,
  // files: uploads, temporary URLs, attachments (issue 15)
  uploads.uploadFile,
  uploads.getFileTemporaryUrl,
  uploads.getAttachments,
  uploads.removeAttachment,
  // scheduled messages and reminders (issue 16)
  scheduledMessages.listScheduledMessages,
  scheduledMessages.createScheduledMessage,
  scheduledMessages.updateScheduledMessage,
  scheduledMessages.deleteScheduledMessage,
  reminders.createReminder,
  reminders.listReminders,
  reminders.deleteReminder,
  // the remaining message and channel operations (issue 16)
  getReadReceipts,
  reportMessageEndpoint,
  channelHelpers.deleteTopic,
  // bot storage (issue 19)
  botStorage.getBotStorage,
  botStorage.updateBotStorage,
  botStorage.removeBotStorage,
  // organization data exports (issue 19)
  realmExport.requestExport,
  realmExport.listExports,
  realmExport.listExportConsents,
  realmExport.deleteExport,
  // incoming webhooks: /external/{integration} (issue 19)
  ...webhookRoutes,
];

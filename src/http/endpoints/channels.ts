import { sendNewSubscriptionMessages } from '../../domain/actions/notifications.js';
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest, insufficientPermission, JsonableError, notForGuests, ownerRequired } from '../../domain/errors.js';
import {
  accessChannelById,
  accessChannelByName,
  accessChannelForUpdate,
  hasContentAccess,
  hasMetadataAccess,
  holdsRealmPermission,
  isAdmin,
  isGuest,
  loadViewer,
  type ChannelViewer,
} from '../../domain/access/channels.js';
import { accessPrincipals } from '../../domain/access/principals.js';
import {
  channelAlreadyExists,
  defaultHistoryPublic,
  doArchiveChannel,
  doChangeChannelDescription,
  doChangeChannelGroupSetting,
  doChangeChannelPermission,
  doCreateChannel,
  doRenameChannel,
  doSetChannelProperty,
  doSetDefaultChannel,
  doUnarchiveChannel,
  webPublicChannelsEnabled,
} from '../../domain/actions/channels.js';
import { doSubscribe } from '../../domain/actions/subscriptions.js';
import {
  CHANNEL_PERMISSION_NAMES,
  CHANNEL_PERMISSION_SETTINGS,
  checkChannelName,
  normalizeChannelDescription,
  parseRetentionDays,
  settingColumn,
  type ChannelPermissionName,
  type TopicsPolicy,
} from '../../domain/rules/channels.js';
import { presentGroupSetting, resolveGroupSetting, systemGroupId, type GroupSettingValue } from '../../domain/rules/group-settings.js';
import { realmSettings } from '../../domain/rules/realm-settings.js';
import { ROLE_OWNER } from '../../domain/rules/users.js';
import { loadChannelPresentation, presentChannel } from '../../presenters/channel.js';
import { channelByName, channelsInRealm, defaultChannelIds, subscriberIds, type ChannelRow } from '../../store/channels.js';
import { folderById } from '../../store/channel-extras.js';
import { channelTopicHooks } from '../../domain/rules/channel-hooks.js';
import { realmById } from '../../store/realms.js';
import {
  changeGroupParams,
  checkGroupValueIds,
  createGroupParams,
  descriptionParam,
  readRetention,
  readTopicsPolicy,
  retentionParam,
  topicsPolicyParam,
  type GroupSettingChange,
} from './channel-params.js';

export const requireNonGuest = ({ user }: AuthedCtx): void => {
  if (isGuest(user)) throw notForGuests();
};

const viewerOf = (ctx: AuthedCtx): Promise<ChannelViewer> => loadViewer(ctx.app.db, ctx.userRow);

const invalidParameters = () => badRequest('Invalid parameters');

/** Zulip's check_stream_name_available: 409 CHANNEL_ALREADY_EXISTS, revealing details only to those who may see the channel. */
export async function checkNameAvailable(ctx: AuthedCtx, v: ChannelViewer, name: string): Promise<void> {
  checkChannelName(name);
  const existing = await channelByName(ctx.app.db, v.realmId, name);
  if (!existing) return;
  const visible = hasMetadataAccess(v, existing);
  throw channelAlreadyExists(name, visible, existing.invite_only === 1, existing.deactivated === 1);
}

/**
 * Zulip's validate_topics_policy: anything but inherit needs
 * can_set_topics_policy_group; an existing channel can switch to
 * empty_topic_only only while all its messages are in the empty topic.
 */
export async function checkTopicsPolicy(ctx: AuthedCtx, policy: TopicsPolicy, channel?: ChannelRow): Promise<void> {
  if (policy === 'inherit') return;
  if (!(await holdsRealmPermission(ctx.app.db, ctx.user.realmId, ctx.user.id, 'can_set_topics_policy_group'))) throw insufficientPermission();
  if (channel && policy === 'empty_topic_only' && (await channelTopicHooks.hasNamedTopics(ctx.app.db, channel.id))) {
    const realm = (await realmById(ctx.app.db, ctx.user.realmId))!;
    const emptyName = String(realmSettings(realm.settings).realm_empty_topic_display_name);
    throw badRequest(`To enable this configuration, all messages in this channel must be in the ${emptyName} topic. Consider renaming or deleting other topics.`);
  }
}

export interface CreationSpec {
  readonly inviteOnly: boolean;
  readonly isWebPublic: boolean;
  readonly isDefault: boolean;
  readonly retention: number | null;
}

/** Zulip's check_channel_creation_permissions. */
export async function checkCreationPermissions(ctx: AuthedCtx, spec: CreationSpec): Promise<void> {
  const db = ctx.app.db;
  const { realmId, id } = ctx.user;
  if (spec.inviteOnly && !(await holdsRealmPermission(db, realmId, id, 'can_create_private_channel_group'))) throw insufficientPermission();
  if (!spec.inviteOnly && !(await holdsRealmPermission(db, realmId, id, 'can_create_public_channel_group'))) throw insufficientPermission();
  if (spec.isDefault && !isAdmin(ctx.user)) throw insufficientPermission();
  if (spec.inviteOnly && spec.isDefault) throw badRequest('A default channel cannot be private.');
  if (spec.isWebPublic) {
    if (!(await webPublicChannelsEnabled(db, realmId))) throw badRequest('Web-public channels are not enabled.');
    if (!(await holdsRealmPermission(db, realmId, id, 'can_create_web_public_channel_group'))) throw insufficientPermission();
  }
  if (spec.retention !== null && ctx.user.role !== ROLE_OWNER) throw ownerRequired();
}

export const incompatibleParameters = (names: string[]): JsonableError =>
  new JsonableError(`Unsupported parameter combination: ${names.join(', ')}`, { data: { parameters: names.join(', ') } });

/**
 * Validates requested group settings for a new channel (Zulip's
 * access_requested_group_permissions_for_streams): can_create_topic_group must
 * be role:everyone on protected-history channels; the delete-message settings
 * need can_set_delete_message_policy_group unless set to role:nobody. The
 * values are checked again (and stored) by resolveGroupSetting in the action.
 */
export async function checkRequestedGroupSettings(
  ctx: AuthedCtx,
  requested: Partial<Record<ChannelPermissionName, GroupSettingValue>>,
  inviteOnly: boolean,
  historyPublic: boolean | null,
): Promise<void> {
  const db = ctx.app.db;
  const realmId = ctx.user.realmId;
  for (const name of CHANNEL_PERMISSION_NAMES) {
    const value = requested[name];
    if (value === undefined) continue;
    checkGroupValueIds(value);
    if (name === 'can_create_topic_group' && !defaultHistoryPublic(inviteOnly, historyPublic)) {
      const everyone = await systemGroupId(db, realmId, 'role:everyone');
      if (value !== everyone) throw incompatibleParameters(['history_public_to_subscribers', 'can_create_topic_group']);
    }
    if (name === 'can_delete_any_message_group' || name === 'can_delete_own_message_group') {
      const nobody = await systemGroupId(db, realmId, 'role:nobody');
      const isNobody = value === nobody || (typeof value === 'object' && value.direct_members.length === 0 && value.direct_subgroups.length === 0);
      if (!isNobody && !(await holdsRealmPermission(db, realmId, ctx.user.id, 'can_set_delete_message_policy_group'))) throw insufficientPermission();
    }
  }
}

export const createChannel = endpoint({
  method: 'POST',
  path: '/channels/create',
  auth: 'user',
  guard: requireNonGuest,
  params: {
    // Not refused here: an empty name is check_stream_name's "Channel name can't be empty.".
    name: p.str(),
    subscribers: p.json(z.array(z.int())),
    description: descriptionParam().optional(),
    announce: p.bool().default(false),
    invite_only: p.bool().default(false),
    is_web_public: p.bool().default(false),
    is_default_stream: p.bool().default(false),
    folder_id: p.id().optional(),
    topics_policy: topicsPolicyParam().optional(),
    history_public_to_subscribers: p.bool().optional(),
    message_retention_days: retentionParam().default('realm_default'),
    ...createGroupParams,
  },
  handler: async (ctx, params) => {
    const db = ctx.app.db;
    const realmId = ctx.user.realmId;
    const v = await viewerOf(ctx);
    const name = params.name.trim();
    await checkNameAvailable(ctx, v, name);
    if (params.folder_id !== undefined && !(await folderById(db, realmId, params.folder_id))) throw badRequest('Invalid channel folder ID');
    const retention = parseRetentionDays(readRetention(params.message_retention_days));
    const topicsPolicy = params.topics_policy === undefined ? 'inherit' : readTopicsPolicy(params.topics_policy);
    await checkTopicsPolicy(ctx, topicsPolicy);
    if (params.is_web_public && params.invite_only) throw invalidParameters();
    await checkCreationPermissions(ctx, { inviteOnly: params.invite_only, isWebPublic: params.is_web_public, isDefault: params.is_default_stream, retention });
    const requested: Partial<Record<ChannelPermissionName, GroupSettingValue>> = {};
    for (const n of CHANNEL_PERMISSION_NAMES) if (params[n] !== undefined) requested[n] = params[n];
    await checkRequestedGroupSettings(ctx, requested, params.invite_only, params.history_public_to_subscribers ?? null);
    const subscribers = await accessPrincipals(db, realmId, params.subscribers);
    const ch = await transact(ctx.app, async (tx) => {
      const created = await doCreateChannel(ctx.app, tx, realmId, ctx.user.id, {
        name,
        description: normalizeChannelDescription(params.description ?? ''),
        inviteOnly: params.invite_only,
        isWebPublic: params.is_web_public,
        historyPublicToSubscribers: params.history_public_to_subscribers ?? null,
        messageRetentionDays: retention,
        topicsPolicy,
        folderId: params.folder_id ?? null,
        isDefault: params.is_default_stream,
        groupSettings: requested,
      });
      if (subscribers.length) await doSubscribe(tx, realmId, [created], subscribers, new Map(), ctx.app);
      return created;
    });
    // Zulip's create_channel ends with send_messages_for_new_subscribers: the announcement and "channel events".
    await sendNewSubscriptionMessages(ctx.app, ctx.userRow, { subscribed: [], created: [ch], announce: params.announce, notifySubscribers: false });
    return { id: ch.id };
  },
});

/** GET /streams: the union of the requested sources, sorted by name (Zulip's get_streams_for_user). */
export const listChannels = endpoint({
  method: 'GET',
  path: '/streams',
  auth: 'user',
  params: {
    include_public: p.bool().default(true),
    include_web_public: p.bool().default(false),
    include_subscribed: p.bool().default(true),
    exclude_archived: p.bool().default(true),
    include_all: p.bool().default(false),
    include_all_active: p.bool().default(false),
    include_default: p.bool().default(false),
    include_owner_subscribed: p.bool().default(false),
    include_can_access_content: p.bool().default(false),
  },
  handler: async (ctx, q) => {
    const db = ctx.app.db;
    const v = await viewerOf(ctx);
    const includeAll = q.include_all || q.include_all_active;
    let channels = await channelsInRealm(db, v.realmId, { excludeArchived: q.exclude_archived });
    if (includeAll) channels = channels.filter((c) => hasMetadataAccess(v, c));
    else {
      const includePublic = q.include_public && !isGuest(v);
      let ownerSubscribed = new Set<number>();
      if (q.include_owner_subscribed && v.isBot && v.botOwnerId !== null) {
        const owner = await loadViewer(db, { id: v.botOwnerId, realm_id: v.realmId, role: 0, is_bot: 0, bot_owner_id: null });
        ownerSubscribed = new Set(owner.subscribed);
      }
      channels = channels.filter((c) => {
        if (ownerSubscribed.has(c.id)) return true;
        if (q.include_can_access_content) return hasContentAccess(v, c);
        if (q.include_subscribed && v.subscribed.has(c.id)) return true;
        if (includePublic && !c.invite_only) return true;
        if (q.include_web_public && c.is_web_public && !c.invite_only && c.history_public_to_subscribers && !c.deactivated) return true;
        return false;
      });
    }
    const pres = await loadChannelPresentation(db, channels);
    const defaults = q.include_default ? new Set(await defaultChannelIds(db, v.realmId)) : null;
    const streams = channels
      .map((c) => {
        const d = presentChannel(c, pres);
        if (defaults) d.is_default = defaults.has(c.id);
        return d;
      })
      .sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : (a.name as string) > (b.name as string) ? 1 : 0));
    return { streams };
  },
});

export const getChannel = endpoint({
  method: 'GET',
  path: '/streams/:stream_id',
  auth: 'user',
  params: { stream_id: p.pathId() },
  handler: async (ctx, { stream_id }) => {
    const v = await viewerOf(ctx);
    const ch = await accessChannelById(ctx.app.db, v, stream_id, { requireContentAccess: false });
    return { stream: presentChannel(ch, await loadChannelPresentation(ctx.app.db, [ch])) };
  },
});

export const getChannelId = endpoint({
  method: 'GET',
  path: '/get_stream_id',
  auth: 'user',
  params: { stream: p.str() },
  handler: async (ctx, { stream }) => {
    const v = await viewerOf(ctx);
    const ch = await accessChannelByName(ctx.app.db, v, stream);
    return { stream_id: ch.id };
  },
});

export const getChannelMembers = endpoint({
  method: 'GET',
  path: '/streams/:stream_id/members',
  auth: 'user',
  params: { stream_id: p.pathId() },
  handler: async (ctx, { stream_id }) => {
    const v = await viewerOf(ctx);
    const ch = await accessChannelById(ctx.app.db, v, stream_id, { requireContentAccess: false });
    return { subscribers: await subscriberIds(ctx.app.db, ch.id) };
  },
});

export const archiveChannel = endpoint({
  method: 'DELETE',
  path: '/streams/:stream_id',
  auth: 'user',
  params: { stream_id: p.pathId() },
  handler: async (ctx, { stream_id }) => {
    const v = await viewerOf(ctx);
    const ch = await accessChannelForUpdate(ctx.app.db, v, stream_id);
    await transact(ctx.app, (tx) => doArchiveChannel(tx, ch));
    return {};
  },
});

function sameGroupValue(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const norm = (x: number[]) => [...new Set(x)].sort((m, n) => m - n).join(',');
  return norm(a.direct_members) === norm(b.direct_members) && norm(a.direct_subgroups) === norm(b.direct_subgroups);
}

/** A one-subgroup, no-member object means that group (as Zulip stores it). */
function canonicalGroupValue(v: GroupSettingValue): GroupSettingValue {
  if (typeof v === 'object' && v.direct_members.length === 0 && v.direct_subgroups.length === 1) return v.direct_subgroups[0]!;
  return v;
}

export const updateChannel = endpoint({
  method: 'PATCH',
  path: '/streams/:stream_id',
  auth: 'user',
  params: {
    stream_id: p.pathId(),
    description: descriptionParam().optional(),
    new_name: p.str().optional(),
    is_private: p.bool().optional(),
    is_web_public: p.bool().optional(),
    history_public_to_subscribers: p.bool().optional(),
    is_default_stream: p.bool().optional(),
    message_retention_days: retentionParam().optional(),
    is_archived: p.bool().optional(),
    topics_policy: topicsPolicyParam().optional(),
    folder_id: p.nullableId().optional(),
    ...changeGroupParams,
  },
  handler: async (ctx, q) => {
    const app = ctx.app;
    const db = app.db;
    const realmId = ctx.user.realmId;
    const v = await viewerOf(ctx);
    let ch = await accessChannelForUpdate(db, v, q.stream_id);
    const realm = (await realmById(db, realmId))!;
    const settings = realmSettings(realm.settings);

    const proposedPrivate = q.is_private ?? ch.invite_only === 1;
    const proposedWebPublic = q.is_web_public ?? ch.is_web_public === 1;
    const defaults = await defaultChannelIds(db, realmId);
    const proposedDefault = q.is_default_stream ?? defaults.includes(ch.id);
    const proposedHistory = q.history_public_to_subscribers ?? (q.is_private !== undefined ? !q.is_private : ch.history_public_to_subscribers === 1);
    if (proposedWebPublic && !proposedHistory) throw invalidParameters();
    if (proposedWebPublic && proposedPrivate) throw invalidParameters();
    if (!proposedPrivate && !proposedHistory) throw invalidParameters();
    if (proposedPrivate && proposedDefault) throw badRequest('A default channel cannot be private.');
    if (!proposedPrivate && settings.moderation_request_channel_id === ch.id) throw badRequest('Moderation request channel must be private.');
    if (q.is_private !== undefined && !hasContentAccess(v, ch)) throw badRequest('Channel content access is required.');
    if (q.is_private !== undefined) {
      const setting = q.is_private ? 'can_create_private_channel_group' : 'can_create_public_channel_group';
      if (!(await holdsRealmPermission(db, realmId, v.id, setting))) throw insufficientPermission();
    }
    if (q.is_web_public) {
      if (!settings.enable_spectator_access) throw badRequest('Web-public channels are not enabled.');
      if (!(await holdsRealmPermission(db, realmId, v.id, 'can_create_web_public_channel_group'))) throw insufficientPermission();
    }
    const topicsPolicy = q.topics_policy === undefined ? undefined : readTopicsPolicy(q.topics_policy);
    if (topicsPolicy !== undefined) await checkTopicsPolicy(ctx, topicsPolicy, ch);
    if (q.is_default_stream !== undefined && !isAdmin(v)) {
      throw badRequest('You do not have permission to change default channels.');
    }
    let retention: number | null | undefined;
    if (q.message_retention_days !== undefined) {
      if (v.role !== ROLE_OWNER) throw ownerRequired();
      retention = parseRetentionDays(readRetention(q.message_retention_days));
    }
    if ((q.can_delete_any_message_group !== undefined || q.can_delete_own_message_group !== undefined) &&
      !(await holdsRealmPermission(db, realmId, v.id, 'can_set_delete_message_policy_group'))) {
      throw insufficientPermission();
    }
    let newName: string | undefined;
    if (q.new_name !== undefined) {
      newName = q.new_name.trim();
      if (ch.name === newName) throw badRequest('Channel already has that name.');
      if (ch.name.toLowerCase() !== newName.toLowerCase()) await checkNameAvailable(ctx, v, newName);
      else checkChannelName(newName);
    }
    if (q.folder_id !== undefined && q.folder_id !== null && !(await folderById(db, realmId, q.folder_id))) throw badRequest('Invalid channel folder ID');

    // Group settings: work out which actually change, validating before any write.
    const everyone = await systemGroupId(db, realmId, 'role:everyone');
    const changes: [ChannelPermissionName, GroupSettingValue][] = [];
    for (const name of CHANNEL_PERMISSION_NAMES) {
      const change = q[name] as GroupSettingChange | undefined;
      if (change === undefined) continue;
      checkGroupValueIds(change.new);
      if (change.old !== undefined) checkGroupValueIds(change.old);
      const current = await presentGroupSetting(db, ch[settingColumn(name)]);
      if (change.old !== undefined && !sameGroupValue(canonicalGroupValue(change.old), current)) {
        throw badRequest("'old' value does not match the expected value.");
      }
      const next = canonicalGroupValue(change.new);
      if (sameGroupValue(next, current)) continue;
      if (CHANNEL_PERMISSION_SETTINGS[name].needsContentAccess && !hasContentAccess(v, ch)) throw badRequest('Channel content access is required.');
      if (name === 'can_create_topic_group' && !proposedHistory && next !== everyone) {
        throw incompatibleParameters(['history_public_to_subscribers', 'can_create_topic_group']);
      }
      changes.push([name, next]);
    }
    if (!proposedHistory && q.can_create_topic_group === undefined && ch.can_create_topic_group_id !== everyone) {
      throw incompatibleParameters(['history_public_to_subscribers', 'can_create_topic_group']);
    }

    await transact(app, async (tx) => {
      if (topicsPolicy !== undefined) ch = await doSetChannelProperty(tx, ch, 'topics_policy', topicsPolicy);
      if (q.is_private !== undefined || q.is_web_public !== undefined || q.history_public_to_subscribers !== undefined) {
        ch = await doChangeChannelPermission(tx, ch, { inviteOnly: proposedPrivate, historyPublic: proposedHistory, isWebPublic: proposedWebPublic });
      }
      if (q.is_default_stream !== undefined) await doSetDefaultChannel(tx, ch, q.is_default_stream);
      if (retention !== undefined) ch = await doSetChannelProperty(tx, ch, 'message_retention_days', retention);
      if (q.is_archived === false) ch = await doUnarchiveChannel(tx, ch);
      if (q.description !== undefined) ch = await doChangeChannelDescription(app, tx, ch, normalizeChannelDescription(q.description));
      if (newName !== undefined) ch = await doRenameChannel(tx, ch, newName);
      if (q.folder_id !== undefined) ch = await doSetChannelProperty(tx, ch, 'folder_id', q.folder_id);
      for (const [name, value] of changes) {
        const conf = CHANNEL_PERMISSION_SETTINGS[name];
        const groupId = await resolveGroupSetting(tx.db, realmId, name, value, conf.rules, v.id);
        ch = await doChangeChannelGroupSetting(tx, ch, name, groupId);
      }
    });
    return {};
  },
});

export type { ChannelRow };

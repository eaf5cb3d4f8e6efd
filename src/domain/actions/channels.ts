import type { Updateable } from 'kysely';
import { realmUrl } from '../../config.js';
import type { AppCtx, Tx, TxDb } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { nowSeconds } from '../../store/db.js';
import {
  addDefaultChannel,
  channelById,
  defaultChannelIds,
  insertChannel,
  insertRecipient,
  removeDefaultChannel,
  subscriptionRowsFor,
  updateChannel,
  type ChannelRow,
} from '../../store/channels.js';
import type { ChannelTable } from '../../store/channels-schema.js';
import { loadAudience, metadataAudience, type ChannelAudience } from '../access/channels.js';
import { loadChannelPresentation, presentChannel, presentSubscription } from '../../presenters/channel.js';
import { streamNotificationDefaults } from './subscriptions.js';
import { presentGroupSetting, resolveGroupSetting, systemGroupId, type GroupSettingValue } from '../rules/group-settings.js';
import {
  CHANNEL_PERMISSION_NAMES,
  CHANNEL_PERMISSION_SETTINGS,
  RECIPIENT_CHANNEL,
  settingColumn,
  streamPostPolicy,
  type ChannelPermissionName,
  type TopicsPolicy,
} from '../rules/channels.js';
import { emptyMarkdownContext, renderMarkdownSafe } from '../rules/markdown/index.js';
import type { MarkdownContext } from '../rules/markdown/index.js';
import { realmSettings } from '../rules/realm-settings.js';
import { setRealmChannelReferences } from './realm-settings.js';

/**
 * Channel lifecycle: create, change, archive. Every function runs inside the
 * caller's transaction and queues its events (sent after commit). Who may do
 * what is checked by the callers through domain/access/channels.ts.
 */

const sorted = (ids: Iterable<number>): number[] => [...ids].sort((a, b) => a - b);

/** Realm users, groups and public channels, so descriptions render mentions and channel links. */
async function descriptionContext(app: AppCtx, db: TxDb, realmId: number): Promise<MarkdownContext> {
  const [users, groups, channels] = await Promise.all([
    db.selectFrom('users').select(['id', 'full_name', 'is_active']).where('realm_id', '=', realmId).execute(),
    db.selectFrom('user_groups').select(['id', 'name', 'is_system_group', 'deactivated']).where('realm_id', '=', realmId).where('name', 'is not', null).execute(),
    db.selectFrom('channels').select(['id', 'name']).where('realm_id', '=', realmId).where('invite_only', '=', 0).execute(),
  ]);
  const base = emptyMarkdownContext(realmUrl(app.config));
  const mention = (u: (typeof users)[number]) => ({ id: u.id, fullName: u.full_name, isActive: u.is_active === 1 });
  return {
    ...base,
    users: {
      byId: (id) => {
        const u = users.find((x) => x.id === id);
        return u ? mention(u) : undefined;
      },
      byName: (name) => users.filter((u) => u.full_name.toLowerCase() === name.toLowerCase()).map(mention),
    },
    groups: {
      byName: (name) => {
        const g = groups.find((x) => x.name!.toLowerCase() === name.toLowerCase());
        return g ? { id: g.id, name: g.name!, deactivated: g.deactivated === 1, isSystemGroup: g.is_system_group === 1 } : undefined;
      },
    },
    channels: { byName: (name) => channels.find((c) => c.name === name), byId: (id) => channels.find((c) => c.id === id) },
  };
}

/** Zulip's render_stream_description: Markdown without previews. */
export async function renderChannelDescription(app: AppCtx, db: TxDb, realmId: number, text: string): Promise<string> {
  if (text.trim() === '') return '';
  const ctx = await descriptionContext(app, db, realmId);
  return renderMarkdownSafe(text, ctx, (msg, details) => app.log.warn(details, msg)).html;
}

async function streamDict(tx: Tx, ch: ChannelRow, traffic = true): Promise<Record<string, unknown>> {
  const p = await loadChannelPresentation(tx.db, [ch]);
  return presentChannel(ch, p, { traffic });
}

export function emitStreamCreate(tx: Tx, ch: ChannelRow, dict: Record<string, unknown>, userIds: Iterable<number>, forUnarchiving = false): void {
  tx.emit(ch.realm_id, { type: 'stream', op: 'create', streams: [dict], for_unarchiving: forUnarchiving }, sorted(userIds));
}

export function emitStreamDelete(tx: Tx, realmId: number, channelIds: readonly number[], userIds: Iterable<number>, forArchiving = false): void {
  tx.emit(
    realmId,
    { type: 'stream', op: 'delete', streams: channelIds.map((id) => ({ stream_id: id })), stream_ids: [...channelIds], for_archiving: forArchiving },
    sorted(userIds),
  );
}

function emitStreamUpdate(tx: Tx, ch: ChannelRow, property: string, value: unknown, userIds: Iterable<number>, extra: Record<string, unknown> = {}): void {
  tx.emit(ch.realm_id, { type: 'stream', op: 'update', stream_id: ch.id, name: ch.name, property, value, ...extra }, sorted(userIds));
}

async function emitDefaultStreams(tx: Tx, realmId: number): Promise<void> {
  const ids = await defaultChannelIds(tx.db, realmId);
  const recipients = await tx.db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('role', '!=', 600)
    .execute();
  tx.emit(realmId, { type: 'default_streams', default_streams: ids }, recipients.map((r) => r.id));
}

export interface NewChannel {
  readonly name: string;
  readonly description: string;
  readonly inviteOnly: boolean;
  readonly isWebPublic: boolean;
  readonly historyPublicToSubscribers: boolean | null;
  readonly messageRetentionDays: number | null;
  readonly topicsPolicy: TopicsPolicy;
  readonly folderId: number | null;
  readonly isDefault: boolean;
  /** Group-setting values from the request; absent ones get their defaults. */
  readonly groupSettings: Partial<Record<ChannelPermissionName, GroupSettingValue>>;
}

/** Zulip: private channels default to protected history; public ones always share it. */
export const defaultHistoryPublic = (inviteOnly: boolean, requested: boolean | null): boolean =>
  inviteOnly ? (requested ?? false) : true;

/**
 * Resolves every channel permission setting to a stored group id: the
 * requested value (validated, anonymous groups created) or the default
 * ('channel_creator' is an anonymous group holding the creator).
 */
export async function resolveChannelGroupSettings(
  tx: Tx,
  realmId: number,
  creatorId: number,
  requested: Partial<Record<ChannelPermissionName, GroupSettingValue>>,
): Promise<Record<ChannelPermissionName, number>> {
  const out = {} as Record<ChannelPermissionName, number>;
  for (const name of CHANNEL_PERMISSION_NAMES) {
    const conf = CHANNEL_PERMISSION_SETTINGS[name];
    const value = requested[name];
    if (value !== undefined) out[name] = await resolveGroupSetting(tx.db, realmId, name, value, conf.rules, creatorId);
    else if (conf.defaultGroup === 'channel_creator') {
      out[name] = await resolveGroupSetting(tx.db, realmId, name, { direct_members: [creatorId], direct_subgroups: [] }, conf.rules, creatorId);
    } else out[name] = await systemGroupId(tx.db, realmId, conf.defaultGroup);
  }
  return out;
}

/**
 * Creates a channel (no subscribers yet) and tells everyone who can see it:
 * public channels go to every active non-guest (web-public: every active
 * user), private ones to administrators and the metadata-granting groups.
 */
export async function doCreateChannel(app: AppCtx, tx: Tx, realmId: number, creatorId: number, spec: NewChannel): Promise<ChannelRow> {
  const groups = await resolveChannelGroupSettings(tx, realmId, creatorId, spec.groupSettings);
  const row: Record<string, unknown> = {
    realm_id: realmId,
    name: spec.name,
    name_lower: spec.name.toLowerCase(),
    description: spec.description,
    rendered_description: await renderChannelDescription(app, tx.db, realmId, spec.description),
    date_created: nowSeconds(),
    creator_id: creatorId,
    invite_only: spec.inviteOnly ? 1 : 0,
    is_web_public: spec.isWebPublic ? 1 : 0,
    history_public_to_subscribers: defaultHistoryPublic(spec.inviteOnly, spec.historyPublicToSubscribers) ? 1 : 0,
    message_retention_days: spec.messageRetentionDays,
    topics_policy: spec.topicsPolicy,
    folder_id: spec.folderId,
    deactivated: 0,
    is_recently_active: 1,
    first_message_id: null,
    recipient_id: null,
  };
  for (const name of CHANNEL_PERMISSION_NAMES) row[settingColumn(name)] = groups[name];
  const id = await insertChannel(tx.db, row as never);
  const recipientId = await insertRecipient(tx.db, realmId, RECIPIENT_CHANNEL, id);
  await updateChannel(tx.db, id, { recipient_id: recipientId });
  const ch = (await channelById(tx.db, realmId, id))!;
  const audience = await loadAudience(tx.db, realmId, [ch]);
  emitStreamCreate(tx, ch, await streamDict(tx, ch, false), metadataAudience(audience, ch));
  if (spec.isDefault) {
    await addDefaultChannel(tx.db, realmId, id);
    await emitDefaultStreams(tx, realmId);
  }
  return ch;
}

export async function doRenameChannel(tx: Tx, ch: ChannelRow, newName: string): Promise<ChannelRow> {
  await updateChannel(tx.db, ch.id, { name: newName, name_lower: newName.toLowerCase() });
  const recipients = metadataAudience(await loadAudience(tx.db, ch.realm_id, [ch]), ch);
  // Keyed by the old name, as Zulip's event is (clients match on it).
  emitStreamUpdate(tx, ch, 'name', newName, recipients);
  return { ...ch, name: newName, name_lower: newName.toLowerCase() };
}

export async function doChangeChannelDescription(app: AppCtx, tx: Tx, ch: ChannelRow, description: string): Promise<ChannelRow> {
  const rendered = await renderChannelDescription(app, tx.db, ch.realm_id, description);
  await updateChannel(tx.db, ch.id, { description, rendered_description: rendered });
  const recipients = metadataAudience(await loadAudience(tx.db, ch.realm_id, [ch]), ch);
  emitStreamUpdate(tx, ch, 'description', description, recipients, { rendered_description: rendered });
  return { ...ch, description, rendered_description: rendered };
}

/**
 * Privacy change (invite_only, history_public_to_subscribers, is_web_public):
 * users who newly see the channel get a create event and its subscribers
 * (peer_add); the rest of its audience an update; users who no longer see it
 * a delete event (Zulip leaves them with a stale copy; we do not).
 */
export async function doChangeChannelPermission(
  tx: Tx,
  ch: ChannelRow,
  next: { inviteOnly: boolean; historyPublic: boolean; isWebPublic: boolean },
): Promise<ChannelRow> {
  const before = metadataAudience(await loadAudience(tx.db, ch.realm_id, [ch]), ch);
  await updateChannel(tx.db, ch.id, {
    invite_only: next.inviteOnly ? 1 : 0,
    history_public_to_subscribers: next.historyPublic ? 1 : 0,
    is_web_public: next.isWebPublic ? 1 : 0,
  });
  const updated = (await channelById(tx.db, ch.realm_id, ch.id))!;
  const audience = await loadAudience(tx.db, ch.realm_id, [updated]);
  const after = metadataAudience(audience, updated);
  const gaining = [...after].filter((id) => !before.has(id));
  const losing = [...before].filter((id) => !after.has(id));
  if (gaining.length) {
    // Users who newly see the channel get it with its subscribers (Zulip sends them a peer_add instead).
    emitStreamCreate(tx, updated, { ...(await streamDict(tx, updated)), subscribers: sorted(audience.subscribers.get(ch.id) ?? []) }, gaining);
  }
  const stay = [...after].filter((id) => !gaining.includes(id));
  emitStreamUpdate(tx, updated, 'invite_only', next.inviteOnly, stay, {
    history_public_to_subscribers: next.historyPublic,
    is_web_public: next.isWebPublic,
  });
  if (losing.length) emitStreamDelete(tx, ch.realm_id, [ch.id], losing);
  return updated;
}

export async function doSetDefaultChannel(tx: Tx, ch: ChannelRow, isDefault: boolean): Promise<void> {
  const current = await defaultChannelIds(tx.db, ch.realm_id);
  if (current.includes(ch.id) === isDefault) return;
  if (isDefault) await addDefaultChannel(tx.db, ch.realm_id, ch.id);
  else await removeDefaultChannel(tx.db, ch.realm_id, ch.id);
  await emitDefaultStreams(tx, ch.realm_id);
}

/** message_retention_days, topics_policy, folder_id: a column and one update event to the channel's audience. */
export async function doSetChannelProperty(
  tx: Tx,
  ch: ChannelRow,
  property: 'message_retention_days' | 'topics_policy' | 'folder_id',
  value: number | string | null,
): Promise<ChannelRow> {
  if (ch[property] === value) return ch;
  await updateChannel(tx.db, ch.id, { [property]: value } as Updateable<ChannelTable>);
  const updated = { ...ch, [property]: value } as ChannelRow;
  emitStreamUpdate(tx, updated, property, value, metadataAudience(await loadAudience(tx.db, ch.realm_id, [updated]), updated));
  return updated;
}

/**
 * A channel permission setting. Settings that grant metadata access
 * (administer, add subscribers, subscribe) also move users in or out of the
 * channel's audience: create + peer_add for those gaining it, delete for those
 * losing it. can_send_message_group also updates the legacy stream_post_policy.
 */
export async function doChangeChannelGroupSetting(tx: Tx, ch: ChannelRow, name: ChannelPermissionName, groupId: number): Promise<ChannelRow> {
  const column = settingColumn(name);
  const oldGroupId = ch[column];
  const before = metadataAudience(await loadAudience(tx.db, ch.realm_id, [ch]), ch);
  await updateChannel(tx.db, ch.id, { [column]: groupId } as Updateable<ChannelTable>);
  const updated = { ...ch, [column]: groupId } as ChannelRow;
  const audience = await loadAudience(tx.db, ch.realm_id, [updated]);
  const after = metadataAudience(audience, updated);
  const value = await presentGroupSetting(tx.db, groupId);
  if (CHANNEL_PERMISSION_SETTINGS[name].grantsMetadataAccess) {
    const gaining = [...after].filter((id) => !before.has(id));
    const losing = [...before].filter((id) => !after.has(id));
    emitStreamUpdate(tx, updated, name, value, [...after].filter((id) => !gaining.includes(id)));
    if (gaining.length) {
      emitStreamCreate(tx, updated, { ...(await streamDict(tx, updated)), subscribers: sorted(audience.subscribers.get(ch.id) ?? []) }, gaining);
    }
    if (losing.length) emitStreamDelete(tx, ch.realm_id, [ch.id], losing);
  } else {
    emitStreamUpdate(tx, updated, name, value, after);
  }
  if (name === 'can_send_message_group') {
    const names = await tx.db.selectFrom('user_groups').select(['id', 'name', 'is_system_group']).where('id', 'in', [oldGroupId, groupId]).execute();
    const sys = (id: number) => {
      const g = names.find((n) => n.id === id);
      return g && g.is_system_group ? g.name : null;
    };
    const oldPolicy = streamPostPolicy(sys(oldGroupId));
    const newPolicy = streamPostPolicy(sys(groupId));
    if (oldPolicy !== newPolicy) {
      emitStreamUpdate(tx, updated, 'stream_post_policy', newPolicy, after);
      emitStreamUpdate(tx, updated, 'is_announcement_only', newPolicy === 2, after);
    }
  }
  return updated;
}

/**
 * Archives a channel (Zulip's do_deactivate_stream): subscriptions stay;
 * clients with the archived_channels capability get is_archived=true, others
 * a delete event (the queue chooses); it stops being a default channel and
 * an announcement channel.
 */
export async function doArchiveChannel(tx: Tx, ch: ChannelRow): Promise<void> {
  if (ch.deactivated) throw badRequest('Channel is already deactivated');
  const audience = metadataAudience(await loadAudience(tx.db, ch.realm_id, [ch]), ch);
  await updateChannel(tx.db, ch.id, { deactivated: 1 });
  await setRealmChannelReferences(tx, ch.realm_id, ch.id);
  const defaults = await defaultChannelIds(tx.db, ch.realm_id);
  if (defaults.includes(ch.id)) {
    await removeDefaultChannel(tx.db, ch.realm_id, ch.id);
    await emitDefaultStreams(tx, ch.realm_id);
  }
  emitStreamUpdate(tx, ch, 'is_archived', true, audience);
  emitStreamDelete(tx, ch.realm_id, [ch.id], audience, true);
}

/** Zulip's do_unarchive_stream (PATCH is_archived=false). */
export async function doUnarchiveChannel(tx: Tx, ch: ChannelRow, audienceHint?: ChannelAudience): Promise<ChannelRow> {
  if (!ch.deactivated) throw badRequest('Channel is not currently deactivated');
  const audience = audienceHint ?? (await loadAudience(tx.db, ch.realm_id, [ch]));
  if (ch.invite_only && (audience.subscribers.get(ch.id) ?? []).length === 0) throw badRequest('Channel is private and have no subscribers');
  await updateChannel(tx.db, ch.id, { deactivated: 0 });
  const updated = { ...ch, deactivated: 0 };
  const recipients = metadataAudience(audience, updated);
  emitStreamUpdate(tx, updated, 'is_archived', false, recipients);
  const subscribers = sorted(audience.subscribers.get(ch.id) ?? []);
  // Clients without archived_channels forgot the channel when it was archived: they get
  // it back whole, with its subscribers, and its subscribers their subscription.
  emitStreamCreate(tx, updated, { ...(await streamDict(tx, updated)), subscribers }, recipients, true);
  if (subscribers.length) {
    const p = await loadChannelPresentation(tx.db, [updated]);
    const rows = await subscriptionRowsFor(tx.db, subscribers, [ch.id]);
    const users = await tx.db.selectFrom('users').select(['id', 'settings']).where('id', 'in', subscribers).execute();
    const settingsOf = new Map(users.map((u) => [u.id, u.settings]));
    for (const row of rows.filter((r) => r.active)) {
      tx.emit(
        ch.realm_id,
        {
          type: 'subscription',
          op: 'add',
          subscriptions: [presentSubscription(updated, row, p, subscribers)],
          __notification_defaults: streamNotificationDefaults(settingsOf.get(row.user_id)),
          __without_archived_channels: true,
        },
        [row.user_id],
      );
    }
  }
  return updated;
}

export const channelAlreadyExists = (name: string, visible: boolean, isPrivate: boolean, archived: boolean): JsonableError =>
  new JsonableError(visible && archived ? `Channel '${name}' already exists and is archived.` : `Channel '${name}' already exists.`, {
    code: 'CHANNEL_ALREADY_EXISTS',
    status: 409,
    data: { is_private: visible && isPrivate, can_view_channel: visible },
  });

/** Whether the realm has web-public channels enabled (server setting assumed on; realm enable_spectator_access). */
export async function webPublicChannelsEnabled(db: TxDb | AppCtx['db'], realmId: number): Promise<boolean> {
  const realm = await db.selectFrom('realms').select('settings').where('id', '=', realmId).executeTakeFirstOrThrow();
  return Boolean(realmSettings(realm.settings).enable_spectator_access);
}

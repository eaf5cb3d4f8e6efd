import { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES } from '../../domain/rules/limits.js';
import { sendNewSubscriptionMessages } from '../../domain/actions/notifications.js';
import { z } from 'zod';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest, insufficientPermission } from '../../domain/errors.js';
import {
  accessChannelById,
  canAddSubscribers,
  canRemoveSubscribers,
  hasContentAccess,
  hasMetadataAccess,
  holdsRealmPermission,
  loadViewer,
  type ChannelViewer,
} from '../../domain/access/channels.js';
import { accessPrincipals } from '../../domain/access/principals.js';
import { accessUserById } from '../../domain/access/users.js';
import { doCreateChannel, doSetDefaultChannel } from '../../domain/actions/channels.js';
import { BOOLEAN_SUBSCRIPTION_PROPERTIES, doChangeSubscriptionProperty, doSubscribe, doUnsubscribe } from '../../domain/actions/subscriptions.js';
import {
  CHANNEL_PERMISSION_NAMES,
  checkChannelName,
  isHexColor,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  normalizeChannelDescription,
  parseRetentionDays,
  type ChannelPermissionName,
} from '../../domain/rules/channels.js';
import type { GroupSettingValue } from '../../domain/rules/group-settings.js';
import { loadChannelPresentation, presentSubscription } from '../../presenters/channel.js';
import { channelsByNames, subscriberIdsInRealm, subscriptionRow, subscriptionRowsOfUser, channelsByIds, isStorableId, type ChannelRow } from '../../store/channels.js';
import { folderById } from '../../store/channel-extras.js';
import type { UserRow } from '../../store/users.js';
import { createGroupParams, principalsSchema, readRetention, readTopicsPolicy, retentionParam, topicsPolicyParam } from './channel-params.js';
import { checkCreationPermissions, checkRequestedGroupSettings, checkTopicsPolicy, requireNonGuest } from './channels.js';

const viewerOf = (ctx: AuthedCtx): Promise<ChannelViewer> => loadViewer(ctx.app.db, ctx.userRow);

export const listSubscriptions = endpoint({
  method: 'GET',
  path: '/users/me/subscriptions',
  auth: 'user',
  params: { include_subscribers: p.oneOf(['true', 'false', 'partial']).default('false') },
  handler: async (ctx, { include_subscribers }) => {
    const db = ctx.app.db;
    const rows = (await subscriptionRowsOfUser(db, ctx.user.id)).filter((r) => r.active);
    const channels = (await channelsByIds(db, ctx.user.realmId, rows.map((r) => r.channel_id))).filter((c) => !c.deactivated);
    const byId = new Map(channels.map((c) => [c.id, c]));
    const pres = await loadChannelPresentation(db, channels);
    const subscribers = include_subscribers === 'false' ? null : await subscriberIdsInRealm(db, ctx.user.realmId);
    const subscriptions = rows
      .filter((r) => byId.has(r.channel_id))
      .map((r) => presentSubscription(byId.get(r.channel_id)!, r, pres, subscribers ? (subscribers.get(r.channel_id) ?? []) : undefined))
      .sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : 1));
    return { subscriptions };
  },
});

const addSubscriptionItem = z.object({
  name: z.string(),
  color: z.string().optional(),
  description: z.string().max(MAX_CHANNEL_DESCRIPTION_LENGTH).optional(),
});

const subscribeParams = {
  subscriptions: p.json(z.array(addSubscriptionItem)),
  principals: p.json(principalsSchema).optional(),
  authorization_errors_fatal: p.bool().default(true),
  announce: p.bool().default(false),
  invite_only: p.bool().default(false),
  is_web_public: p.bool().default(false),
  is_default_stream: p.bool().default(false),
  history_public_to_subscribers: p.bool().optional(),
  message_retention_days: retentionParam().default('realm_default'),
  topics_policy: topicsPolicyParam().optional(),
  folder_id: p.id().optional(),
  send_new_subscription_messages: p.bool().default(true),
  ...createGroupParams,
};

type SubscribeInput = {
  subscriptions: z.output<typeof addSubscriptionItem>[];
  principals?: number[] | string[];
  authorization_errors_fatal: boolean;
  announce: boolean;
  invite_only: boolean;
  is_web_public: boolean;
  is_default_stream: boolean;
  history_public_to_subscribers?: boolean;
  message_retention_days: string;
  topics_policy?: string;
  folder_id?: number;
  send_new_subscription_messages: boolean;
} & Partial<Record<ChannelPermissionName, GroupSettingValue | undefined>>;

/**
 * POST /users/me/subscriptions (Zulip's add_subscriptions_backend): channels
 * that do not exist are created with the request's settings; existing ones
 * need content access ("Unable to access channel (<name>)." unless
 * authorization_errors_fatal is false); subscribing others needs the
 * add-subscribers permission.
 */
async function subscribe(ctx: AuthedCtx, q: SubscribeInput): Promise<Record<string, unknown>> {
  const db = ctx.app.db;
  const realmId = ctx.user.realmId;
  const v = await viewerOf(ctx);
  if (q.folder_id !== undefined && !(await folderById(db, realmId, q.folder_id))) throw badRequest('Invalid channel folder ID');
  for (const [i, item] of q.subscriptions.entries()) {
    if (item.color !== undefined && !isHexColor(item.color)) {
      throw badRequest(`Invalid subscriptions[${i}]: Value error, add.color is not a valid hex color code`);
    }
  }
  const retention = parseRetentionDays(readRetention(q.message_retention_days));
  const topicsPolicy = q.topics_policy === undefined ? 'inherit' : readTopicsPolicy(q.topics_policy);
  await checkTopicsPolicy(ctx, topicsPolicy);

  const items = q.subscriptions.map((s) => ({ ...s, name: s.name.trim() }));
  for (const item of items) checkChannelName(item.name);
  const existing = await channelsByNames(db, realmId, items.map((i) => i.name));
  const found: ChannelRow[] = [];
  const missing: typeof items = [];
  const seen = new Set<string>();
  for (const item of items) {
    const key = item.name.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    const ch = existing.get(key);
    if (ch) found.push(ch);
    else missing.push(item);
  }
  if (missing.length) {
    await checkCreationPermissions(ctx, { inviteOnly: q.invite_only, isWebPublic: q.is_web_public, isDefault: q.is_default_stream, retention });
    if (q.is_web_public && q.invite_only) throw badRequest('Invalid parameters');
  }
  const requested: Partial<Record<ChannelPermissionName, GroupSettingValue>> = {};
  for (const n of CHANNEL_PERMISSION_NAMES) if (q[n] !== undefined) requested[n] = q[n];
  if (missing.length) await checkRequestedGroupSettings(ctx, requested, q.invite_only, q.history_public_to_subscribers ?? null);

  const principals = q.principals ?? [];
  const targets: UserRow[] = principals.length ? await accessPrincipals(db, realmId, principals) : [ctx.userRow];
  const othersToo = targets.some((u) => u.id !== ctx.user.id);

  const authorized: ChannelRow[] = [];
  const unauthorized: ChannelRow[] = [];
  for (const ch of found) (hasContentAccess(v, ch) && !ch.deactivated ? authorized : unauthorized).push(ch);
  if (unauthorized.length && q.authorization_errors_fatal) throw badRequest(`Unable to access channel (${unauthorized[0]!.name}).`);
  if (othersToo && authorized.length) {
    const realmAllows = await holdsRealmPermission(db, realmId, v.id, 'can_add_subscribers_group');
    if (authorized.some((ch) => !canAddSubscribers(v, ch, realmAllows))) throw insufficientPermission();
  }

  const colors = new Map<string, string>();
  for (const item of items) if (item.color !== undefined) colors.set(item.name.toLowerCase(), item.color);
  const result = await transact(ctx.app, async (tx) => {
    const created: ChannelRow[] = [];
    for (const item of missing) {
      created.push(
        await doCreateChannel(ctx.app, tx, realmId, v.id, {
          name: item.name,
          description: normalizeChannelDescription(item.description ?? ''),
          inviteOnly: q.invite_only,
          isWebPublic: q.is_web_public,
          historyPublicToSubscribers: q.history_public_to_subscribers ?? null,
          messageRetentionDays: retention,
          topicsPolicy,
          folderId: q.folder_id ?? null,
          isDefault: false,
          groupSettings: requested,
        }),
      );
    }
    if (q.is_default_stream) for (const ch of created) await doSetDefaultChannel(tx, ch, true);
    const channels = [...authorized, ...created];
    const colorById = new Map<number, string>();
    for (const ch of channels) {
      const c = colors.get(ch.name.toLowerCase());
      if (c) colorById.set(ch.id, c);
    }
    const r = await doSubscribe(tx, realmId, channels, targets, colorById, ctx.app);
    return { ...r, created };
  });
  const subscribed: Record<string, string[]> = {};
  const already: Record<string, string[]> = {};
  for (const s of result.subscribed) (subscribed[String(s.userId)] ??= []).push(s.channel.name);
  for (const s of result.already) (already[String(s.userId)] ??= []).push(s.channel.name);
  const out: Record<string, unknown> = { subscribed, already_subscribed: already };
  // Zulip sends the "subscribed you" direct messages only up to max_bulk_new_subscription_messages users.
  const notify = q.send_new_subscription_messages && Object.keys(subscribed).length <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
  if (q.send_new_subscription_messages) out.new_subscription_messages_sent = notify;
  const byId = new Map(targets.map((u) => [u.id, u]));
  await sendNewSubscriptionMessages(ctx.app, ctx.userRow, {
    subscribed: result.subscribed.map((s) => ({ user: byId.get(s.userId)!, channel: s.channel })),
    created: result.created,
    announce: q.announce,
    notifySubscribers: notify,
  });
  if (!q.authorization_errors_fatal) out.unauthorized = unauthorized.map((c) => c.name);
  return out;
}

/**
 * DELETE /users/me/subscriptions. Channels the caller cannot see count as
 * missing ("Channel(s) (<names>) do not exist"), so the answer never reveals
 * a private channel; removing anyone but oneself or one's bots needs the
 * remove-subscribers permission.
 */
async function unsubscribe(ctx: AuthedCtx, names: string[], principals: number[] | string[] | undefined): Promise<Record<string, unknown>> {
  const db = ctx.app.db;
  const realmId = ctx.user.realmId;
  const v = await viewerOf(ctx);
  const targets: UserRow[] = principals && principals.length ? await accessPrincipals(db, realmId, principals) : [ctx.userRow];
  const others = targets.some((u) => u.id !== v.id && !(u.is_bot && u.bot_owner_id === v.id));
  const trimmed = names.map((n) => n.trim());
  for (const n of trimmed) checkChannelName(n);
  const existing = await channelsByNames(db, realmId, trimmed);
  const channels: ChannelRow[] = [];
  const missing: string[] = [];
  for (const n of trimmed) {
    const ch = existing.get(n.toLowerCase());
    if (!ch || ch.deactivated || !hasMetadataAccess(v, ch)) missing.push(n);
    else if (!channels.includes(ch)) channels.push(ch);
  }
  if (missing.length) throw badRequest(`Channel(s) (${missing.join(', ')}) do not exist`);
  if (others && !canRemoveSubscribers(v, channels)) throw insufficientPermission();
  const result = await transact(ctx.app, (tx) => doUnsubscribe(tx, realmId, channels, targets, ctx.app));
  return { removed: result.removed.map((s) => s.channel.name), not_removed: result.notSubscribed.map((s) => s.channel.name) };
}

export const addSubscriptions = endpoint({
  method: 'POST',
  path: '/users/me/subscriptions',
  auth: 'user',
  guard: requireNonGuest,
  params: subscribeParams,
  handler: async (ctx, q) => subscribe(ctx, q as SubscribeInput),
});

export const removeSubscriptions = endpoint({
  method: 'DELETE',
  path: '/users/me/subscriptions',
  auth: 'user',
  params: { subscriptions: p.json(z.array(z.string())), principals: p.json(principalsSchema).optional() },
  handler: async (ctx, q) => unsubscribe(ctx, q.subscriptions, q.principals),
});

/** The legacy bulk form: PATCH /users/me/subscriptions with add and delete. */
export const updateSubscriptions = endpoint({
  method: 'PATCH',
  path: '/users/me/subscriptions',
  auth: 'user',
  params: { add: p.json(z.array(addSubscriptionItem)).optional(), delete: p.json(z.array(z.string())).optional() },
  handler: async (ctx, q) => {
    const add = q.add ?? [];
    const del = q.delete ?? [];
    if (add.length === 0 && del.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
    const out: Record<string, unknown> = {};
    if (add.length) {
      requireNonGuest(ctx);
      Object.assign(out, await subscribe(ctx, {
        subscriptions: add,
        authorization_errors_fatal: true,
        announce: false,
        invite_only: false,
        is_web_public: false,
        is_default_stream: false,
        message_retention_days: 'realm_default',
        send_new_subscription_messages: true,
      }));
    }
    if (del.length) Object.assign(out, await unsubscribe(ctx, del, undefined));
    return out;
  },
});

const propertyChange = z.object({ stream_id: z.int(), property: z.string(), value: z.union([z.boolean(), z.string()]) });

function checkPropertyValue(property: string, value: unknown, colorVar: string): void {
  if (property === 'color') {
    if (!isHexColor(String(value))) throw badRequest(`${colorVar}: Value error, color is not a valid hex color code`);
  } else if ((BOOLEAN_SUBSCRIPTION_PROPERTIES as readonly string[]).includes(property)) {
    if (typeof value !== 'boolean') throw badRequest(`${property} is not a boolean`);
  } else throw badRequest(`Unknown subscription property: ${property}`);
}

async function changeProperties(ctx: AuthedCtx, changes: { stream_id: number; property: string; value: boolean | string }[], colorVar: (i: number) => string): Promise<void> {
  changes.forEach((c, i) => checkPropertyValue(c.property, c.value, colorVar(i)));
  const v = await viewerOf(ctx);
  const subs: { channel_id: number }[] = [];
  for (const c of changes) {
    const ch = await accessChannelById(ctx.app.db, v, c.stream_id);
    const sub = await subscriptionRow(ctx.app.db, v.id, ch.id);
    if (!sub || !sub.active) throw badRequest(`Not subscribed to channel ID ${c.stream_id}`);
    subs.push(sub);
  }
  await transact(ctx.app, async (tx) => {
    for (const [i, c] of changes.entries()) {
      const fresh = (await subscriptionRow(tx.db, v.id, subs[i]!.channel_id))!;
      await doChangeSubscriptionProperty(tx, fresh, c.property, c.property === 'color' ? String(c.value) : c.value);
    }
  });
}

export const updateSubscriptionProperties = endpoint({
  method: 'POST',
  path: '/users/me/subscriptions/properties',
  auth: 'user',
  params: { subscription_data: p.json(z.array(propertyChange)) },
  handler: async (ctx, { subscription_data }) => {
    await changeProperties(ctx, subscription_data, (i) => `Invalid subscription_data[${i}]`);
    return {};
  },
});

export const updateSubscriptionProperty = endpoint({
  method: 'PATCH',
  path: '/users/me/subscriptions/:stream_id',
  auth: 'user',
  params: { stream_id: p.pathId(), property: p.str(), value: p.str() },
  handler: async (ctx, { stream_id, property, value }) => {
    // Zulip reads value as a JSON boolean first, else as a raw string.
    const parsed: boolean | string = value === 'true' ? true : value === 'false' ? false : value;
    await changeProperties(ctx, [{ stream_id, property, value: parsed }], () => 'Invalid color');
    return {};
  },
});

/**
 * Zulip's get_subscription_backend: the target through access_user_by_id with
 * its defaults (a bot is "No such user", a deactivated user "User is
 * deactivated"); the own-status form (a Parley extension) takes oneself as is.
 */
async function subscriptionStatus(ctx: AuthedCtx, userId: number, streamId: number): Promise<Record<string, unknown>> {
  if (!isStorableId(userId)) throw badRequest('No such user');
  const target = userId === ctx.user.id && ctx.userRow.id === userId ? ctx.userRow : await accessUserById(ctx.app, ctx.user, userId);
  const v = await viewerOf(ctx);
  const ch = await accessChannelById(ctx.app.db, v, streamId, { requireContentAccess: false });
  const sub = await subscriptionRow(ctx.app.db, target.id, ch.id);
  return { is_subscribed: Boolean(sub?.active) };
}

export const getUserSubscriptionStatus = endpoint({
  method: 'GET',
  path: '/users/:user_id/subscriptions/:stream_id',
  auth: 'user',
  params: { user_id: p.pathId(), stream_id: p.pathId() },
  handler: async (ctx, { user_id, stream_id }) => subscriptionStatus(ctx, user_id, stream_id),
});

export const getOwnSubscriptionStatus = endpoint({
  method: 'GET',
  path: '/users/me/subscriptions/:stream_id',
  auth: 'user',
  params: { stream_id: p.pathId() },
  handler: async (ctx, { stream_id }) => subscriptionStatus(ctx, ctx.user.id, stream_id),
});

/**
 * GET /users/{user_id}/channels (Zulip's get-user-channels, added in Zulip
 * 11): `subscribed_channel_ids`, the active channels the user is subscribed
 * to, limited to those the caller may know about (metadata access, the rule
 * GET /users/{id}/subscriptions/{stream_id} uses), ascending. A user the
 * caller cannot see is "No such user", as for GET /users/{id}.
 */
export const getUserChannels = endpoint({
  method: 'GET',
  path: '/users/:user_id/channels',
  auth: 'user',
  params: { user_id: p.pathId() },
  handler: async (ctx, { user_id }) => {
    if (!isStorableId(user_id)) throw badRequest('No such user');
    const target = await accessUserById(ctx.app, ctx.user, user_id, { allowBots: true, allowDeactivated: true });
    const v = await viewerOf(ctx);
    const subs = (await subscriptionRowsOfUser(ctx.app.db, target.id)).filter((s) => s.active);
    const channels = await channelsByIds(ctx.app.db, ctx.user.realmId, subs.map((s) => s.channel_id));
    const visible = channels.filter((ch) => !ch.deactivated && hasMetadataAccess(v, ch)).map((ch) => ch.id);
    return { subscribed_channel_ids: visible.sort((a, b) => a - b) };
  },
});

/**
 * GET /users/{user_id}/subscriptions: issue 16 names the listing of another user's channels by
 * this path; Zulip's own path is /users/{user_id}/channels (above). The same answer under both.
 */
export const getUserSubscriptions = endpoint({
  ...getUserChannels,
  path: '/users/:user_id/subscriptions',
});

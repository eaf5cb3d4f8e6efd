import { isIP } from 'node:net';
import { z } from 'zod';
import { fakeEmailDomain } from '../../config.js';
import { transact, type Caller } from '../../domain/context.js';
import { withStagedAvatar, doChangeAvatarFields } from '../../domain/actions/avatars.js';
import { botChannelNames } from '../../domain/actions/bot-events.js';
import { doChangeBotDefaultAllPublicStreams, doChangeBotDefaultChannel, doChangeBotOwner, doUpdateOutgoingWebhookService, type DefaultChannelKind } from '../../domain/actions/bots.js';
import { generateApiKey } from '../../domain/rules/credentials.js';
import { doChangeFullName, doChangeRole, doCreateUser, doDeactivateUser, doRegenerateApiKey } from '../../domain/actions/users.js';
import { canAdminUser } from '../../domain/access/users.js';
import { adminRequired, badRequest, insufficientPermission, ownerRequired } from '../../domain/errors.js';
import { userHasRealmPermission, type RealmGroupSetting } from '../../domain/rules/realm-group-settings.js';
import { BOT_GENERIC, BOT_INCOMING_WEBHOOK, BOT_OUTGOING_WEBHOOK, checkBotShortName, checkFullName, isAdminRole, isValidEmail, ROLE_OWNER, ROLES } from '../../domain/rules/users.js';
import { presentOwnedBot } from '../../presenters/bot.js';
import { apiEmail, avatarUrl } from '../../presenters/user.js';
import { isPossibleId } from '../../domain/rules/ids.js';
import { botsOwnedBy, channelByNameFor } from '../../store/bots.js';
import { userByEmail, userById, type UserRow } from '../../store/users.js';
import type { AppCtx } from '../../domain/context.js';
import { endpoint, type AuthedCtx, type UploadedFile } from '../endpoint.js';
import { p } from '../params.js';
import { avatarImagesFromUpload } from './avatars.js';
import { requireMemberOrAdmin } from './users.js';

/**
 * Bots: create (POST /bots), list one's own (GET /bots), change (PATCH),
 * deactivate (DELETE) and regenerate a key. Bot types: generic (1),
 * incoming webhook (2) and outgoing webhook (3, with a service row: Zulip's
 * add_service; jobs/outgoing-webhooks.ts calls it). Embedded bots (4) are
 * refused as a type this server does not offer ("Invalid bot type", as
 * Zulip refuses them when EMBEDDED_BOTS_ENABLED is off).
 */

/** Zulip's Service.ALLOWED_INTERFACE_TYPES: GENERIC, SLACK. */
export const SERVICE_INTERFACES = [1, 2] as const;

/** Zulip's check_valid_interface_type. */
function checkInterfaceType(value: number): void {
  if (!(SERVICE_INTERFACES as readonly number[]).includes(value)) throw badRequest('Invalid interface type');
}

/**
 * Zulip's check_url (Django's URLValidator): http, https, ftp or ftps with a
 * host that is an IP address, localhost, or a dotted name ending in a label
 * of letters. "{name} is not a URL" otherwise.
 */
export function checkUrl(name: string, value: string): string {
  let ok = false;
  try {
    const u = new URL(value);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    ok =
      ['http:', 'https:', 'ftp:', 'ftps:'].includes(u.protocol) &&
      value.length <= 2048 &&
      !/\s/.test(value) &&
      (isIP(host) !== 0 || host === 'localhost' || /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9]{1,59})\.?$/i.test(host));
  } catch {
    ok = false;
  }
  if (!ok) throw badRequest(`${name} is not a URL`);
  return value;
}

/** Zulip's check_bot_name_available: no active user of the realm with that name. */
async function checkBotNameAvailable(app: AppCtx, realmId: number, fullName: string): Promise<void> {
  const dup = await app.db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('full_name', '=', fullName.trim())
    .executeTakeFirst();
  if (dup) throw badRequest('Name is already in use!');
}

/** Does the caller hold a realm permission (recursive group membership, one query)? */
function hasRealmPermission(app: AppCtx, caller: Caller, setting: RealmGroupSetting): Promise<boolean> {
  return userHasRealmPermission(app.db, caller.realmId, caller.id, setting);
}

/**
 * check_can_create_bot then check_valid_bot_type: can_create_bots_group may
 * create every type offered; can_create_write_only_bots_group only incoming webhooks.
 */
async function checkBotType(app: AppCtx, caller: Caller, botType: number): Promise<void> {
  const full = await hasRealmPermission(app, caller, 'can_create_bots_group');
  const writeOnly = !full && (await hasRealmPermission(app, caller, 'can_create_write_only_bots_group'));
  if (!full && !(botType === BOT_INCOMING_WEBHOOK && writeOnly)) throw insufficientPermission();
  const allowed = full ? [BOT_GENERIC, BOT_INCOMING_WEBHOOK, BOT_OUTGOING_WEBHOOK] : [BOT_INCOMING_WEBHOOK];
  if (!allowed.includes(botType)) throw badRequest('Invalid bot type');
}

/** access_stream_by_name for a bot default: a live channel the caller can see (public, or subscribed). */
async function channelForDefault(ctx: AuthedCtx, name: string): Promise<number> {
  const c = await channelByNameFor(ctx.app.db, ctx.user.realmId, name, ctx.user.id);
  if (!c || c.deactivated || (c.invite_only && !c.subscribed)) throw badRequest(`Invalid channel name '${name}'`);
  return c.id;
}

function singleFile(files: readonly UploadedFile[]): UploadedFile | undefined {
  if (files.length > 1) throw badRequest('You may only upload one file at a time');
  return files[0];
}

export const createBot = endpoint({
  method: 'POST',
  path: '/bots',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: {
    full_name: p.str(),
    short_name: p.str(),
    bot_type: p.int().default(BOT_GENERIC),
    // Zulip's add_bot_backend: a JSON-encoded URL (default ""), the interface (default generic) and a service name.
    payload_url: p.json(z.string()).default(''),
    interface_type: p.int().default(1),
    service_name: p.str().optional(),
    default_sending_stream: p.str().optional(),
    default_events_register_stream: p.str().optional(),
    default_all_public_streams: p.bool().optional(),
  },
  handler: async (ctx, params) => {
    // A parameter check in Zulip (json_validator=check_url), so before everything else; the default "" is allowed.
    if (params.payload_url !== '') checkUrl('payload_url', params.payload_url);
    const short = checkBotShortName(params.short_name);
    const fullName = checkFullName(params.full_name);
    const email = `${short}-bot@${fakeEmailDomain(ctx.app.config)}`;
    if (!isValidEmail(email)) throw badRequest('Bad name or username');
    if (await userByEmail(ctx.app.db, ctx.user.realmId, email)) throw badRequest('Username already in use');
    await checkBotNameAvailable(ctx.app, ctx.user.realmId, fullName);
    await checkBotType(ctx.app, ctx.user, params.bot_type);
    checkInterfaceType(params.interface_type);
    const file = singleFile(ctx.files);
    const sending = params.default_sending_stream === undefined ? null : await channelForDefault(ctx, params.default_sending_stream);
    const register = params.default_events_register_stream === undefined ? null : await channelForDefault(ctx, params.default_events_register_stream);
    // The image is checked before anything is written; a bad one creates no bot.
    const images = file ? await avatarImagesFromUpload(file) : null;
    const bot = await withStagedAvatar(ctx.app, ctx.user.realmId, images, (stem) =>
      transact(ctx.app, (tx) =>
        doCreateUser(ctx.app, tx, ctx.user.realmId, {
          email,
          fullName,
          passwordHash: null,
          botType: params.bot_type,
          botOwnerId: ctx.user.id,
          avatarFile: stem,
          defaultSendingStreamId: sending,
          defaultEventsRegisterStreamId: register,
          defaultAllPublicStreams: params.default_all_public_streams ?? false,
          ...(params.bot_type === BOT_OUTGOING_WEBHOOK
            ? { service: { name: params.service_name || short, baseUrl: params.payload_url, interface: params.interface_type, token: generateApiKey() } }
            : {}),
        }),
      ),
    );
    const names = await botChannelNames(ctx.app.db, bot);
    return {
      user_id: bot.id,
      api_key: bot.api_key,
      avatar_url: avatarUrl(bot),
      default_sending_stream: names.defaultSendingStream,
      default_events_register_stream: names.defaultEventsRegisterStream,
      default_all_public_streams: bot.default_all_public_streams === 1,
    };
  },
});

export const listBots = endpoint({
  method: 'GET',
  path: '/bots',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: {},
  handler: async (ctx) => {
    const bots = await botsOwnedBy(ctx.app.db, ctx.user.realmId, ctx.user.id, { activeOnly: true });
    const out = [];
    for (const bot of bots) out.push(presentOwnedBot(bot, await botChannelNames(ctx.app.db, bot)));
    return { bots: out };
  },
});

/** Zulip's access_bot_by_id. */
async function accessBot(ctx: AuthedCtx, botId: number): Promise<UserRow> {
  const bot = isPossibleId(botId) ? await userById(ctx.app.db, ctx.user.realmId, botId) : undefined;
  if (!bot || !bot.is_bot) throw badRequest('No such bot');
  if (!canAdminUser(ctx.user, bot)) throw insufficientPermission();
  if (bot.can_create_users && ctx.user.role !== ROLE_OWNER) throw ownerRequired();
  return bot;
}

export const updateBot = endpoint({
  method: 'PATCH',
  path: '/bots/:bot_id',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: {
    bot_id: p.pathId(),
    full_name: p.str().optional(),
    role: p.intIn(ROLES).optional(),
    bot_owner_id: p.id().optional(),
    default_sending_stream: p.str().optional(),
    default_events_register_stream: p.str().optional(),
    default_all_public_streams: p.bool().optional(),
    // Zulip's patch_bot_backend: the service changes only when a payload URL is given.
    service_payload_url: p.json(z.string()).optional(),
    service_interface: p.int().default(1),
  },
  handler: async (ctx, params) => {
    const bot = await accessBot(ctx, params.bot_id);
    if (params.service_payload_url !== undefined) {
      checkUrl('service_payload_url', params.service_payload_url);
      checkInterfaceType(params.service_interface);
    }
    // Everything is checked before anything is written, so a refused request changes nothing.
    let newName: string | undefined;
    if (params.full_name !== undefined) {
      const name = checkFullName(params.full_name);
      if (name !== bot.full_name) {
        await checkBotNameAvailable(ctx.app, bot.realm_id, name);
        newName = name;
      }
    }
    if (params.role !== undefined && params.role !== bot.role) {
      if ((params.role === ROLE_OWNER || bot.role === ROLE_OWNER) && ctx.user.role !== ROLE_OWNER) throw ownerRequired();
      if (!isAdminRole(ctx.user.role)) throw adminRequired();
    }
    let newOwner: UserRow | undefined;
    if (params.bot_owner_id !== undefined) {
      const owner = isPossibleId(params.bot_owner_id) ? await userById(ctx.app.db, bot.realm_id, params.bot_owner_id) : undefined;
      if (!owner) throw badRequest('Failed to change owner, no such user');
      if (!owner.is_active) throw badRequest('Failed to change owner, user is deactivated');
      if (owner.is_bot) throw badRequest("Failed to change owner, bots can't own other bots");
      if (owner.id !== bot.bot_owner_id) newOwner = owner;
    }
    const channels: [DefaultChannelKind, number | null][] = [];
    for (const kind of ['default_sending_stream', 'default_events_register_stream'] as const) {
      const name = params[kind];
      if (name !== undefined) channels.push([kind, name === '' ? null : await channelForDefault(ctx, name)]);
    }
    const file = singleFile(ctx.files);
    const images = file ? await avatarImagesFromUpload(file) : null;
    const updated = await withStagedAvatar(ctx.app, bot.realm_id, images, (stem) =>
      transact(ctx.app, async (tx) => {
        let row = bot;
        if (newName !== undefined) {
          await doChangeFullName(tx, row, newName);
          row = { ...row, full_name: newName };
        }
        if (params.role !== undefined && params.role !== row.role) {
          await doChangeRole(tx, row, params.role);
          row = { ...row, role: params.role };
        }
        if (newOwner) {
          await doChangeBotOwner(tx, row, newOwner);
          row = { ...row, bot_owner_id: newOwner.id };
        }
        for (const [kind, channelId] of channels) row = await doChangeBotDefaultChannel(tx, row, kind, channelId);
        if (params.default_all_public_streams !== undefined) row = await doChangeBotDefaultAllPublicStreams(tx, row, params.default_all_public_streams);
        if (stem) row = await doChangeAvatarFields(ctx.app, tx, row, 'U', stem);
        if (params.service_payload_url !== undefined) await doUpdateOutgoingWebhookService(tx, row, params.service_interface, params.service_payload_url);
        return row;
      }),
    );
    const names = await botChannelNames(ctx.app.db, updated);
    const out: Record<string, unknown> = {
      full_name: updated.full_name,
      avatar_url: avatarUrl(updated),
      // Echoes of the request, as Zulip answers.
      service_interface: params.service_interface,
      service_payload_url: params.service_payload_url ?? null,
      config_data: null,
      default_sending_stream: names.defaultSendingStream,
      default_events_register_stream: names.defaultEventsRegisterStream,
      default_all_public_streams: updated.default_all_public_streams === 1,
    };
    if (updated.bot_owner_id !== null) {
      const owner = await userById(ctx.app.db, updated.realm_id, updated.bot_owner_id);
      if (owner) out.bot_owner = apiEmail(owner, fakeEmailDomain(ctx.app.config));
    }
    return out;
  },
});

export const deactivateBot = endpoint({
  method: 'DELETE',
  path: '/bots/:bot_id',
  auth: 'user',
  params: { bot_id: p.pathId() },
  handler: async (ctx, { bot_id }) => {
    const bot = await accessBot(ctx, bot_id);
    // Deactivating a deactivated bot is a no-op, as in Zulip's do_deactivate_user.
    if (bot.is_active) await transact(ctx.app, (tx) => doDeactivateUser(tx, bot));
    return {};
  },
});

export const regenerateBotApiKey = endpoint({
  method: 'POST',
  path: '/bots/:bot_id/api_key/regenerate',
  auth: 'user',
  guard: requireMemberOrAdmin,
  params: { bot_id: p.pathId() },
  handler: async (ctx, { bot_id }) => {
    const bot = await accessBot(ctx, bot_id);
    const apiKey = await transact(ctx.app, (tx) => doRegenerateApiKey(tx, bot));
    return { api_key: apiKey };
  },
});

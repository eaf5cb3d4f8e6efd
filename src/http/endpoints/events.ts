import { z } from 'zod';
import { badRequest } from '../../domain/errors.js';
import { ROLE_GUEST } from '../../domain/rules/users.js';
import { checkNarrowForEvents, type NarrowTerm } from '../../events/narrow.js';
import type { PollAnswer } from '../../events/queues.js';
import { NO_CAPABILITIES, registerClientJson, type RegisterOptions } from '../../state/register.js';
import { JsonBody } from '../json-reply.js';
import type { ClientCapabilities } from '../../state/types.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';

/**
 * POST /register, GET /events and DELETE /events (api.md endpoint 3,
 * behaviour-a §3). The queue machinery is events/queues.ts; the initial
 * state is state/register.ts.
 */

const capabilitiesSchema = z.object({
  notification_settings_null: z.boolean(),
  bulk_message_deletion: z.boolean().optional(),
  user_avatar_url_field_optional: z.boolean().optional(),
  stream_typing_notifications: z.boolean().optional(),
  user_settings_object: z.boolean().optional(),
  linkifier_url_template: z.boolean().optional(),
  user_list_incomplete: z.boolean().optional(),
  include_deactivated_groups: z.boolean().optional(),
  archived_channels: z.boolean().optional(),
  empty_topic_name: z.boolean().optional(),
  simplified_presence_events: z.boolean().optional(),
  individual_emoji_changes: z.boolean().optional(),
});

/** Parameters shared by POST /register and queue creation through GET /events. */
const queueParams = {
  all_public_streams: p.json(z.boolean().nullable()).optional(),
  apply_markdown: p.bool().default(false),
  client_capabilities: p.json(capabilitiesSchema.nullable()).optional(),
  event_types: p.json(z.array(z.string()).nullable()).optional(),
  narrow: p.json(z.array(z.tuple([z.string(), z.string()]))).default([]),
  queue_lifespan_secs: p.int().default(0).alias('lifespan_secs'),
  slim_presence: p.bool().default(false),
};

function capabilities(raw: z.output<typeof capabilitiesSchema> | null | undefined): ClientCapabilities {
  const out: Record<string, boolean> = { ...NO_CAPABILITIES };
  if (raw) for (const [k, v] of Object.entries(raw)) if (typeof v === 'boolean') out[k] = v;
  return out as unknown as ClientCapabilities;
}

interface QueueInput {
  all_public_streams: boolean | null | undefined;
  apply_markdown: boolean;
  client_capabilities: z.output<typeof capabilitiesSchema> | null | undefined;
  event_types: string[] | null | undefined;
  narrow: [string, string][];
  queue_lifespan_secs: number;
  slim_presence: boolean;
}

/** Zulip's defaults: a bot's default_all_public_streams, and its default_events_register_stream as narrow. */
async function queueOptions(ctx: AuthedCtx, v: QueueInput, clientGravatar: boolean): Promise<Omit<RegisterOptions, 'fetchEventTypes' | 'includeSubscribers'>> {
  if (v.all_public_streams && ctx.user.role === ROLE_GUEST) throw badRequest('User not authorized for this query');
  const allPublicStreams = v.all_public_streams ?? ctx.userRow.default_all_public_streams === 1;
  let narrow: NarrowTerm[] = v.narrow;
  if (narrow.length === 0 && ctx.userRow.default_events_register_stream_id !== null) {
    const ch = await ctx.app.db
      .selectFrom('channels')
      .select('name')
      .where('id', '=', ctx.userRow.default_events_register_stream_id)
      .executeTakeFirst();
    if (ch) narrow = [['stream', ch.name]];
  }
  checkNarrowForEvents(narrow);
  return {
    eventTypes: v.event_types ?? null,
    narrow,
    allPublicStreams,
    capabilities: capabilities(v.client_capabilities),
    applyMarkdown: v.apply_markdown,
    clientGravatar,
    slimPresence: v.slim_presence,
    lifespanSecs: v.queue_lifespan_secs,
    clientName: ctx.clientName,
  };
}

export const register = endpoint({
  method: 'POST',
  path: '/register',
  auth: 'user',
  params: {
    ...queueParams,
    client_gravatar: p.json(z.boolean().nullable()).optional(),
    fetch_event_types: p.json(z.array(z.string()).nullable()).optional(),
    include_subscribers: p.str(z.enum(['true', 'false', 'partial'])).default('false'),
    presence_history_limit_days: p.int().optional(),
    presence_last_update_id: p.int().optional(),
  },
  handler: async (ctx, v) => {
    const base = await queueOptions(ctx, v, v.client_gravatar ?? true);
    const includeSubscribers = v.include_subscribers === 'partial' ? 'partial' : v.include_subscribers === 'true';
    // Serialized here, with the realm-wide parts spliced in (performance.md P3); server.ts sends the text as is.
    const json = await registerClientJson(ctx.app, ctx.user, {
      ...base,
      fetchEventTypes: v.fetch_event_types ?? null,
      includeSubscribers,
      presenceHistoryDays: v.presence_history_limit_days,
      presenceLastUpdateId: v.presence_last_update_id,
    });
    return new JsonBody(json);
  },
});

export const getEvents = endpoint({
  method: 'GET',
  path: '/events',
  auth: 'user',
  params: {
    ...queueParams,
    client_gravatar: p.bool().default(false),
    dont_block: p.bool().default(false),
    last_event_id: p.int().optional(),
    queue_id: p.str().optional(),
  },
  // Not async: a parked poll then holds only the queue's promise (no wrapper promise per poll).
  // A synchronous throw reaches the same error handler as a rejection (server.ts calls this from an async function).
  handler: (ctx, v) => {
    if (v.queue_id === undefined) {
      // Zulip creates a queue here only for non-blocking requests.
      if (!v.dont_block) throw badRequest("Missing 'queue_id' argument");
      return registerAndPoll(ctx, v);
    }
    if (v.last_event_id === undefined) throw badRequest("Missing 'last_event_id' argument");
    // The response's 'close' ends a parked poll whose client went away (one shared listener, no closure per poll).
    return ctx.app.queues.pollAnswer(ctx.user.id, v.queue_id, v.last_event_id, v.dont_block, ctx.reply.raw);
  },
});

/** GET /events without queue_id (dont_block): a new queue and its (empty) events. */
async function registerAndPoll(ctx: AuthedCtx, v: QueueInput & { client_gravatar: boolean }): Promise<PollAnswer> {
  const opts = await queueOptions(ctx, v, v.client_gravatar);
  return ctx.app.queues.registerAndPollAnswer({ ...opts, userId: ctx.user.id, realmId: ctx.user.realmId, includeSubscribers: false });
}

export const deleteEvents = endpoint({
  method: 'DELETE',
  path: '/events',
  auth: 'user',
  params: { queue_id: p.str() },
  handler: async (ctx, { queue_id }) => {
    await ctx.app.queues.delete(ctx.user.id, queue_id);
    return {};
  },
});

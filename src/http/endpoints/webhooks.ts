import { z } from 'zod';
import { checkAndSendMessage } from '../../domain/actions/message-send.js';
import { JsonableError } from '../../domain/errors.js';
import { internalSendDirectMessage } from '../../domain/actions/internal-send.js';
import { fakeEmailDomain } from '../../config.js';
import { apiEmail } from '../../presenters/user.js';
import { INTEGRATIONS } from '../../integrations/index.js';
import type { Integration, WebhookResult } from '../../integrations/types.js';
import { endpoint, type AnyEndpoint, type AuthedCtx } from '../endpoint.js';
import { p, type Param } from '../params.js';

/**
 * Incoming webhooks: POST /api/v1/external/{integration}, as Zulip's
 * webhook_view + check_send_webhook_message (zerver/decorator.py,
 * zerver/lib/webhooks/common.py):
 * - `stream` (name, or digits for an id) sends to that channel; without it the
 *   message is a DM to the bot's owner (to the caller itself for a human key);
 * - `topic` overrides the integration's topic (and the integration then puts
 *   the title in the content: include_title);
 * - `only_events` / `exclude_events`: JSON lists of fnmatch patterns matched
 *   against the event type; a filtered event is a silent success;
 * - a body that is not JSON is 400 INVALID_JSON "Malformed JSON";
 * - an unsupported event is HTTP 200, result "success", code
 *   UNSUPPORTED_WEBHOOK_EVENT_TYPE, msg "The '<event>' event isn't currently
 *   supported by the <Name> webhook; ignoring" (UnsupportedWebhookEventTypeError);
 * - a channel that does not exist is swallowed (Zulip's view passes on
 *   StreamDoesNotExistError); other send errors are the usual ones. Zulip's
 *   Notification Bot also DMs the owner (rate-limited) "Your bot `<email>`
 *   tried to send a message to channel #**<name>**, but that channel does not
 *   exist. Click [here](#channels/new) to create it." (by id: "... to channel
 *   ID <id>, but there is no channel with that ID."), at most once per
 *   BOT_OWNER_STREAM_ALERT_WAITPERIOD (1 minute) per bot.
 */

/** Zulip's MAX_TOPIC_NAME_LENGTH and truncate_topic ("..." suffix). */
const MAX_TOPIC = 60;
export function truncateTopic(topic: string): string {
  const chars = [...topic];
  return chars.length <= MAX_TOPIC ? topic : chars.slice(0, MAX_TOPIC - 3).join('') + '...';
}

/** Python's fnmatch.fnmatch (POSIX: case-sensitive): *, ?, [seq], [!seq]. */
export function fnmatch(name: string, pattern: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = '^' + body.slice(1);
        else if (body.startsWith('^')) body = '\\' + body;
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(name);
}

const eventList = z.array(z.string());

function paramsFor(integration: Integration): Record<string, Param<any>> {
  const params: Record<string, Param<any>> = {
    api_key: p.str().optional(),
    stream: p.str().optional(),
    topic: p.str().optional(),
    only_events: p.json(eventList).optional(),
    exclude_events: p.json(eventList).optional(),
  };
  for (const name of integration.ownParams) params[name] = p.str().optional();
  return params;
}

function decodePayload(ctx: AuthedCtx): unknown {
  const raw = ctx.rawBody;
  if (!raw || raw.length === 0) throw new JsonableError('Malformed JSON', { code: 'INVALID_JSON' });
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new JsonableError('Malformed JSON', { code: 'INVALID_JSON' });
  }
}

function stringParams(ctx: AuthedCtx): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((ctx.req.query ?? {}) as Record<string, unknown>)) {
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    if (typeof last === 'string') out[k] = last;
  }
  return out;
}

function headerMap(ctx: AuthedCtx): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(ctx.req.headers)) out[k.toLowerCase()] = Array.isArray(v) ? v[v.length - 1] : v;
  return out;
}

interface SharedParams {
  stream?: string;
  topic?: string;
  only_events?: string[];
  exclude_events?: string[];
}

async function deliver(ctx: AuthedCtx, integration: Integration, result: WebhookResult, params: SharedParams): Promise<Record<string, unknown>> {
  if (result.kind === 'ignore') return {};
  if (result.kind === 'unsupported') {
    return {
      msg: `The '${result.event}' event isn't currently supported by the ${integration.displayName} webhook; ignoring`,
      code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE',
      webhook_name: integration.displayName,
      event_type: result.event,
    };
  }
  if (result.kind === 'messages') {
    for (const m of result.messages) await sendOne(ctx, integration, m, params);
    return {};
  }
  await sendOne(ctx, integration, result, params);
  return {};
}

async function sendOne(ctx: AuthedCtx, integration: Integration, result: { topic: string; content: string; event?: string }, params: SharedParams): Promise<void> {
  if (result.event !== undefined) {
    const event = result.event;
    if (params.only_events !== undefined && !params.only_events.some((pat) => fnmatch(event, pat))) return;
    if (params.exclude_events !== undefined && params.exclude_events.some((pat) => fnmatch(event, pat))) return;
  }
  const client = `Zulip${integration.displayName.replace(/\s+/g, '')}Webhook`;
  if (params.stream === undefined) {
    const to = ctx.userRow.bot_owner_id ?? ctx.userRow.id;
    await checkAndSendMessage(ctx.app, ctx.userRow, { type: 'private', to: JSON.stringify([to]), topic: undefined, content: result.content, client, readBySender: false });
    return;
  }
  const topic = truncateTopic(params.topic ?? result.topic);
  // Zulip: stream.isdecimal() means an id, anything else a name.
  const to = /^\d+$/.test(params.stream) ? params.stream : JSON.stringify(params.stream);
  try {
    await checkAndSendMessage(ctx.app, ctx.userRow, { type: 'stream', to, topic, content: result.content, client, readBySender: false });
  } catch (err) {
    if (err instanceof JsonableError && err.code === 'STREAM_DOES_NOT_EXIST') return noticeMissingChannel(ctx, params.stream);
    throw err;
  }
}

/** Zulip's send_rate_limited_pm_notification_to_bot_owner for a webhook aimed at a channel that does not exist. */
async function noticeMissingChannel(ctx: AuthedCtx, stream: string): Promise<void> {
  const bot = ctx.userRow;
  if (bot.bot_owner_id === null) return;
  const window = await ctx.app.limiter.consume(`webhook-missing-channel:${bot.id}`, 1, 60);
  if (!window.allowed) return;
  const email = apiEmail(bot, fakeEmailDomain(ctx.app.config));
  const content = /^\d+$/.test(stream)
    ? `Your bot \`${email}\` tried to send a message to channel ID ${stream}, but there is no channel with that ID.`
    : `Your bot \`${email}\` tried to send a message to channel #**${stream}**, but that channel does not exist. Click [here](#channels/new) to create it.`;
  await internalSendDirectMessage(ctx.app, { realmId: bot.realm_id, bot: 'notification', recipientId: bot.bot_owner_id, content });
}

function webhookEndpoint(integration: Integration): AnyEndpoint {
  return endpoint({
    method: 'POST',
    path: `/external/${integration.name}`,
    auth: 'webhook',
    params: paramsFor(integration),
    handler: async (ctx, params) => {
      const payload = decodePayload(ctx);
      const shared = params as SharedParams;
      const result = integration.handle({ payload, headers: headerMap(ctx), params: stringParams(ctx), includeTitle: shared.topic !== undefined });
      return deliver(ctx, integration, result, shared);
    },
  });
}

/** One POST route per integration, in the order of INTEGRATIONS. */
export const webhookRoutes: readonly AnyEndpoint[] = INTEGRATIONS.map(webhookEndpoint);

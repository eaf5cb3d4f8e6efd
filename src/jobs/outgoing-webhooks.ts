import { fakeEmailDomain, realmUrl } from '../config.js';
import type { AppCtx, Tx } from '../domain/context.js';
import { JsonableError } from '../domain/errors.js';
import { checkAndSendMessage, type SendInput } from '../domain/actions/message-send.js';
import { doUpdateMessageFlags } from '../domain/actions/message-flags.js';
import { channelSlug, encodeHashComponent } from '../domain/rules/markdown/index.js';
import { isPublicAddress, safePost, FetchRefused, FetchTimedOut, type PostedAnswer } from '../net/safe-fetch.js';
import { ZULIP_VERSION } from '../domain/version.js';
import { apiEmail } from '../presenters/user.js';
import {
  claimDueWebhookJobs,
  nextWebhookDue,
  retryWebhookJob,
  servicesOfBots,
  settleWebhookJob,
  type BotServiceRow,
  type OutgoingWebhookJobRow,
} from '../store/bot-services.js';
import { userById, type UserRow } from '../store/users.js';
import type { JobSource } from './scheduler.js';

/**
 * Outgoing webhooks (Zulip's outgoing_webhooks queue worker and
 * zerver/lib/outgoing_webhook.py), as a job source of the scheduler.
 *
 * A triggered message left a row in outgoing_webhook_jobs (stored with the
 * message). A process claims due rows (SKIP LOCKED on PostgreSQL, a
 * conditional UPDATE on SQLite) for a lease longer than the request's time
 * limit, POSTs to the bot's URL, and then settles the row: the row is
 * deleted in the transaction that stores the bot's answer (or its failure
 * notice), on the condition that our claim still holds, so an answer is
 * posted once even if a lease ran out and another process tried too.
 *
 * Zulip's rules, as its code has them:
 * - generic interface: JSON {data, message, bot_email, bot_full_name,
 *   token, trigger}; Slack interface: a form with Slack's outgoing-webhook
 *   fields, and "Slack outgoing webhooks don't support direct messages."
 *   for a DM;
 * - a 2xx answer: JSON, `""` or response_not_required means no answer;
 *   `content` (or the older `response_string`; Slack: `text`) is posted by
 *   the bot where the message was, unless empty; not JSON: "Invalid JSON in
 *   response", not an object: "Invalid response format" (each posted as
 *   "Failure! ..." and told to the owner);
 * - any other status (5xx included: Zulip does not retry them): "Failure!
 *   Third party responded with N" where the message was, and the owner is
 *   told the status and the answer's body;
 * - a time-out or a connection error: tried again, up to MAX_RETRIES more
 *   times (Zulip's retry_event); then "Failure! Bot is unavailable" and the
 *   owner is told why;
 * - a target refused as non-public: what Zulip's smokescreen proxy gives,
 *   status 407 ("The URL configured for the webhook is for a private or
 *   disallowed network.").
 * The owner's notice is a DM from the bot itself to its owner, as Zulip's
 * notify_bot_owner sends it.
 */

/** Zulip's MAX_REQUEST_RETRIES: tries after the first. */
export const MAX_RETRIES = 3;
const BATCH = 20;
/** Most of an answer kept (the rest is not read). */
const MAX_ANSWER_BYTES = 1_048_576;

/** Service.interface: 1 generic (Zulip's GENERIC, the default), 2 Slack-compatible. */
const SLACK = 2;

class AlreadySettled extends Error {}

type Message = Record<string, any>;

/** Python's truthiness of a JSON value (empty containers are false). */
function pyTruthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

/** Python's str() of a JSON value, as Zulip applies it to `content`. */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  // Lists and objects: Python would print its repr; the JSON text is close enough for a reply.
  return JSON.stringify(v);
}

/** Python's repr() of the answer body (`bytes` for response.content, str for response.text). */
export function pyRepr(text: string, bytes: boolean): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  const units = bytes ? [...Buffer.from(text, 'utf8')].map((b) => String.fromCharCode(b)) : [...text];
  for (const ch of units) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f || (bytes && c > 0x7f)) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return (bytes ? 'b' : '') + quote + out + quote;
}

/** Zulip's message_link_url (a near link) for the triggering message. */
function messageLink(base: string, m: Message): string {
  if (m.type === 'stream') {
    return `${base}/#narrow/channel/${channelSlug(m.stream_id, String(m.display_recipient))}/topic/${encodeHashComponent(String(m.subject))}/near/${m.id}`;
  }
  const ids = (m.display_recipient as { id: number }[]).map((r) => r.id).sort((a, b) => a - b);
  return `${base}/#narrow/dm/${ids.join(',')}-${ids.length > 2 ? 'group' : 'dm'}/near/${m.id}`;
}

type Outcome =
  | { kind: 'answer'; answer: PostedAnswer }
  | { kind: 'timeout' }
  | { kind: 'connection' }
  | { kind: 'refused' }
  | { kind: 'no-request' };

export class OutgoingWebhookDelivery implements JobSource {
  readonly name = 'outgoing_webhooks';
  constructor(private readonly app: AppCtx) {}

  private get leaseSec(): number {
    return Math.ceil(this.app.config.outgoingWebhookTimeoutMs / 1000) + 60;
  }

  async nextDueAt(): Promise<number | null> {
    const t = await nextWebhookDue(this.app.db, Math.floor(Date.now() / 1000));
    return t === null ? null : t * 1000;
  }

  async runDue(nowMs: number): Promise<number> {
    const now = Math.floor(nowMs / 1000);
    let total = 0;
    for (;;) {
      const jobs = await claimDueWebhookJobs(this.app.db, this.app.store.dialect, now, this.leaseSec, BATCH);
      // The requests of one batch run side by side: one slow bot does not hold up the others.
      await Promise.all(
        jobs.map((job) =>
          this.runOne(job).catch((err) => {
            if (!(err instanceof AlreadySettled)) this.app.log.error({ err, jobId: job.id }, 'outgoing webhook job failed');
          }),
        ),
      );
      total += jobs.length;
      if (jobs.length < BATCH) return total;
    }
  }

  private settle(job: OutgoingWebhookJobRow) {
    return async (tx: Tx): Promise<void> => {
      if (!(await settleWebhookJob(tx.db, job.id, job.claimed_until))) throw new AlreadySettled();
    };
  }

  /** Settles without a message (no answer needed, or the bot is gone). */
  private async settleQuietly(job: OutgoingWebhookJobRow): Promise<void> {
    await settleWebhookJob(this.app.db, job.id, job.claimed_until);
  }

  private async runOne(job: OutgoingWebhookJobRow): Promise<void> {
    const bot = await userById(this.app.db, job.realm_id, job.bot_id);
    const service = bot ? (await servicesOfBots(this.app.db, [bot.id])).get(bot.id)?.[0] : undefined;
    if (!bot || !bot.is_active || !service) return this.settleQuietly(job);
    const message = JSON.parse(job.message_json) as Message;
    const outcome = await this.request(bot, service, job, message);
    // Zulip's worker then marks the message read for the bot (do_flag_service_bots_messages_as_processed);
    // here once, after the first try.
    if (job.failed_tries === 0) await this.markProcessed(bot, Number(message.id));
    switch (outcome.kind) {
      case 'no-request':
        return;
      case 'timeout':
        return this.retry(job, bot, message, `Request timed out after ${this.app.config.outgoingWebhookTimeoutMs / 1000} seconds.`);
      case 'connection':
        return this.retry(job, bot, message, 'A connection error occurred. Is my bot server down?');
      case 'refused':
        // Zulip's smokescreen answers 407 for a private or disallowed network.
        this.app.log.warn({ botId: bot.id, jobId: job.id }, 'outgoing webhook to a non-public address refused');
        return this.failAndNotify(job, bot, message, 'Third party responded with 407', { status: 407 });
      case 'answer':
        return this.handleAnswer(job, bot, service, message, outcome.answer);
    }
  }

  private async markProcessed(bot: UserRow, messageId: number): Promise<void> {
    try {
      const caller = {
        id: bot.id,
        realmId: bot.realm_id,
        role: bot.role,
        isBot: true,
        botType: bot.bot_type,
        email: apiEmail(bot, fakeEmailDomain(this.app.config)),
        deliveryEmail: bot.delivery_email,
        fullName: bot.full_name,
      };
      await doUpdateMessageFlags(this.app, caller, 'add', 'read', [messageId]);
    } catch (err) {
      this.app.log.warn({ err, botId: bot.id, messageId }, 'could not mark a message processed for an outgoing-webhook bot');
    }
  }

  /** Zulip's make_request for the two interfaces; a Slack bot in a DM gets its failure and no request. */
  private async request(bot: UserRow, service: BotServiceRow, job: OutgoingWebhookJobRow, message: Message): Promise<Outcome> {
    const domain = fakeEmailDomain(this.app.config);
    let contentType: string;
    let data: string;
    if (service.interface === SLACK) {
      if (message.type === 'private') {
        await this.failWithMessage(job, bot, message, "Slack outgoing webhooks don't support direct messages.", true);
        return { kind: 'no-request' };
      }
      const host = new URL(realmUrl(this.app.config)).host;
      const fields: [string, string][] = [
        ['token', service.token],
        ['team_id', `T${job.realm_id}`],
        ['team_domain', host],
        ['channel_id', `C${message.stream_id}`],
        ['channel_name', String(message.display_recipient)],
        ['thread_ts', String(message.timestamp)],
        ['timestamp', String(message.timestamp)],
        ['user_id', `U${message.sender_id}`],
        ['user_name', String(message.sender_full_name)],
        ['text', String(message.content)],
        ['trigger_word', job.trigger],
        ['service_id', String(bot.id)],
      ];
      contentType = 'application/x-www-form-urlencoded';
      data = new URLSearchParams(fields).toString();
    } else {
      contentType = 'application/json';
      data = JSON.stringify({
        data: message.content,
        message,
        bot_email: apiEmail(bot, domain),
        bot_full_name: bot.full_name,
        token: service.token,
        trigger: job.trigger,
      });
    }
    const cfg = this.app.config;
    const allowAddress = (ip: string) => cfg.outgoingWebhookAllowPrivate || isPublicAddress(ip) || cfg.outgoingWebhookAllowedAddresses.includes(ip.toLowerCase());
    try {
      const answer = await safePost(
        service.base_url,
        { contentType, data, userAgent: `ZulipOutgoingWebhook/${ZULIP_VERSION}` },
        { timeoutMs: cfg.outgoingWebhookTimeoutMs, maxBytes: MAX_ANSWER_BYTES, allowAddress },
      );
      return { kind: 'answer', answer };
    } catch (err) {
      if (err instanceof FetchTimedOut) return { kind: 'timeout' };
      if (err instanceof FetchRefused) return { kind: 'refused' };
      return { kind: 'connection' };
    }
  }

  /** Zulip's do_rest_call after the request: a 2xx answer is processed, any other status is a failure. */
  private async handleAnswer(job: OutgoingWebhookJobRow, bot: UserRow, service: BotServiceRow, message: Message, answer: PostedAnswer): Promise<void> {
    if (answer.status < 200 || answer.status >= 300) {
      this.app.log.warn({ botId: bot.id, status: answer.status }, 'outgoing webhook answered with an error status');
      return this.failAndNotify(job, bot, message, `Third party responded with ${answer.status}`, { status: answer.status, content: answer.body, bytes: true });
    }
    let content: string | undefined;
    try {
      content = this.answerContent(service, answer.body);
      if (content === undefined) return await this.settleQuietly(job);
      await this.send(bot, message, content, this.settle(job));
    } catch (err) {
      if (!(err instanceof JsonableError)) throw err;
      const failure = `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${err.message}`;
      return this.failAndNotify(job, bot, message, err.message, { failure, content: answer.body, bytes: false });
    }
  }

  /** Zulip's process_success_response and the interfaces' process_success: the content to post, or undefined for none. */
  private answerContent(service: BotServiceRow, body: string): string | undefined {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new JsonableError('Invalid JSON in response');
    }
    // Bot servers before 2021-05 answered json.dumps("") for "no response".
    if (json === '') return undefined;
    if (!json || typeof json !== 'object' || Array.isArray(json)) throw new JsonableError('Invalid response format');
    const r = json as Record<string, unknown>;
    let content: string | undefined;
    if (service.interface === SLACK) {
      if ('text' in r) content = pyStr(r.text);
    } else {
      if (pyTruthy(r.response_not_required)) return undefined;
      if ('response_string' in r) content = pyStr(r.response_string);
      else if ('content' in r) content = pyStr(r.content);
    }
    if (content === undefined || content.trim() === '') return undefined;
    return content;
  }

  /**
   * Zulip's send_response_message: the bot posts where the triggering
   * message was (same channel and topic, or the same DM conversation). The
   * channel-access check is skipped, as Zulip's skip_stream_access_check
   * does (here: the internal send path).
   */
  private async send(bot: UserRow, message: Message, content: string, inTransaction: SendInput['inTransaction']): Promise<void> {
    const isChannel = message.type === 'stream';
    await checkAndSendMessage(this.app, bot, {
      type: isChannel ? 'stream' : 'private',
      to: isChannel ? JSON.stringify(message.stream_id) : JSON.stringify((message.display_recipient as { id: number }[]).map((r) => r.id)),
      topic: isChannel ? String(message.subject) : undefined,
      content,
      client: 'OutgoingWebhookResponse',
      readBySender: false,
      internal: { realmId: bot.realm_id, readBy: [] },
      ...(inTransaction ? { inTransaction } : {}),
    });
  }

  /** Zulip's fail_with_message: "Failure! ..." where the message was; a send that fails is dropped. */
  private async failWithMessage(job: OutgoingWebhookJobRow, bot: UserRow, message: Message, failure: string, settles: boolean): Promise<void> {
    try {
      await this.send(bot, message, `Failure! ${failure}`, settles ? this.settle(job) : undefined);
    } catch (err) {
      if (err instanceof AlreadySettled) throw err;
      if (!(err instanceof JsonableError)) throw err;
      if (settles) await this.settleQuietly(job);
    }
  }

  /** Zulip's notify_bot_owner: a DM from the bot to its owner about the triggering message. */
  private async notifyOwner(bot: UserRow, message: Message, o: { status?: number; content?: string; bytes?: boolean; failure?: string }): Promise<void> {
    if (bot.bot_owner_id === null) return;
    const owner = await userById(this.app.db, bot.realm_id, bot.bot_owner_id);
    if (!owner || !owner.is_active) return;
    let text = `[A message](${messageLink(realmUrl(this.app.config), message)}) to your bot @_**${bot.full_name}** triggered an outgoing webhook.`;
    if (o.failure) text += '\n' + o.failure;
    else if (o.status === 407) text += '\nThe URL configured for the webhook is for a private or disallowed network.';
    else if (o.status) text += `\nThe webhook got a response with status code *${o.status}*.`;
    if (o.content) text += `\nThe response contains the following payload:\n\`\`\`\n${pyRepr(o.content, o.bytes ?? false)}\n\`\`\``;
    try {
      await checkAndSendMessage(this.app, bot, {
        type: 'private',
        to: JSON.stringify([owner.id]),
        topic: undefined,
        content: text,
        client: 'OutgoingWebhookResponse',
        readBySender: false,
        internal: { realmId: bot.realm_id, readBy: [] },
      });
    } catch (err) {
      if (!(err instanceof JsonableError)) throw err;
      this.app.log.warn({ err, botId: bot.id }, 'could not tell the bot owner about a failed outgoing webhook');
    }
  }

  /** The failure where the message was (settling the job with it), then the owner's notice. */
  private async failAndNotify(
    job: OutgoingWebhookJobRow,
    bot: UserRow,
    message: Message,
    failure: string,
    notice: { status?: number; content?: string; bytes?: boolean; failure?: string },
  ): Promise<void> {
    await this.failWithMessage(job, bot, message, failure, true);
    await this.notifyOwner(bot, message, notice);
  }

  /** Zulip's request_retry / retry_event: again at once, until MAX_RETRIES further tries have failed. */
  private async retry(job: OutgoingWebhookJobRow, bot: UserRow, message: Message, failure: string): Promise<void> {
    const tries = job.failed_tries + 1;
    if (tries > MAX_RETRIES) {
      this.app.log.warn({ botId: bot.id, jobId: job.id }, 'outgoing webhook: maximum retries exceeded');
      return this.failAndNotify(job, bot, message, 'Bot is unavailable', { failure });
    }
    await retryWebhookJob(this.app.db, job.id, job.claimed_until, tries, Math.floor(Date.now() / 1000));
    this.app.jobs?.wake();
  }
}

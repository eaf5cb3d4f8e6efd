import type { AppCtx, Tx } from '../context.js';
import type { Linkifier, RenderResult } from '../rules/markdown/index.js';
import type { RealmSettings } from '../rules/realm-settings.js';
import { BOT_OUTGOING_WEBHOOK } from '../rules/users.js';
import { presentMessage } from '../../presenters/message.js';
import { insertWebhookJobs } from '../../store/bot-services.js';
import type { MessageRelations } from '../../store/message-relations.js';
import type { RealmRow } from '../../store/realms.js';
import type { UserRow } from '../../store/users.js';
import { nowSeconds, type Db } from '../../store/db.js';
import type { TxDb } from '../context.js';

type AnyDb = Db | TxDb;
import { messageViewFor } from './message-events.js';

/**
 * Which outgoing-webhook bots a new message triggers (Zulip's
 * get_service_bot_events): never for a message sent by a bot (no loops);
 * a channel message triggers the bots it mentions ("mention"); a direct
 * message, 1:1 or group, triggers every bot among its recipients
 * ("direct_message"). Mentions are the rendered ones (not in code blocks or
 * quotes, not silent), so no extra query: the renderer's user lookup
 * carries the bot type.
 */
export interface WebhookTrigger {
  readonly botId: number;
  readonly trigger: 'mention' | 'direct_message';
}

export async function webhookTriggers(
  db: AnyDb,
  sender: Pick<UserRow, 'id' | 'is_bot'>,
  a: { readonly channel: unknown; readonly participants: readonly UserRow[]; readonly recipients: readonly number[] },
  rendered: Pick<RenderResult, 'mentionedServiceBotIds'>,
  groupMembers: ReadonlySet<number>,
): Promise<WebhookTrigger[]> {
  if (sender.is_bot) return [];
  if (a.channel) {
    const ids = new Set(rendered.mentionedServiceBotIds ?? []);
    // A mentioned group's members count as mentioned (Zulip adds them to mentions_user_ids); Zulip's
    // service-bot candidates are the channel's subscribers and the directly mentioned users, so a bot
    // reached through a group triggers when it is subscribed. One query, only for group mentions.
    if (groupMembers.size) {
      const subscribed = new Set(a.recipients);
      const candidates = [...groupMembers].filter((id) => subscribed.has(id) && !ids.has(id));
      if (candidates.length) {
        const rows = await db.selectFrom('users').select('id').where('id', 'in', candidates).where('bot_type', '=', BOT_OUTGOING_WEBHOOK).where('is_active', '=', 1).execute();
        for (const r of rows) ids.add(r.id);
      }
    }
    return [...ids].sort((x, y) => x - y).map((botId) => ({ botId, trigger: 'mention' }));
  }
  return a.participants
    .filter((u) => u.id !== sender.id && u.bot_type === BOT_OUTGOING_WEBHOOK && u.is_active === 1)
    .map((u) => ({ botId: u.id, trigger: 'direct_message' }));
}

/**
 * Stores one job per triggered bot in the send's transaction, so a message
 * and its webhook jobs commit (or roll back) together. The job keeps the
 * message as the webhook will see it (Zulip's MessageDict.finalize_payload
 * with apply_markdown=False, client_gravatar=False, keep_rendered_content,
 * empty topics as they are): raw Markdown in `content`, `content_type`
 * "text/x-markdown", the HTML in `rendered_content`, the avatar URL always
 * given, no flags; for a 1:1 DM to the bot, `recipient_id` is the sender's
 * (is_incoming_1_to_1).
 */
export async function enqueueWebhookJobs(
  app: AppCtx,
  tx: Tx,
  realm: RealmRow,
  settings: RealmSettings,
  m: Parameters<typeof presentMessage>[0],
  rel: MessageRelations,
  linkifiers: readonly Linkifier[],
  triggers: readonly WebhookTrigger[],
  senderRecipientId: number | undefined,
): Promise<void> {
  const view = messageViewFor(app, realm, settings, { applyMarkdown: false, clientGravatar: false, allowEmptyTopicName: true }, linkifiers);
  const base = presentMessage(m, rel, view);
  base.rendered_content = m.rendered_content;
  const now = nowSeconds();
  await insertWebhookJobs(
    tx.db,
    triggers.map((t) => {
      const message = senderRecipientId !== undefined && m.stream_id === null ? { ...base, recipient_id: senderRecipientId } : base;
      return {
        realm_id: realm.id,
        bot_id: t.botId,
        message_id: m.id,
        trigger: t.trigger,
        message_json: JSON.stringify(message),
        failed_tries: 0,
        due_at: now,
        claimed_until: null,
      };
    }),
  );
}

import { fakeEmailDomain } from '../../config.js';
import type { AppCtx } from '../context.js';
import { registerShaper } from '../../events/delivery.js';
import type { ParleyEvent } from '../../events/types.js';
import type { EditHistoryPolicy, MessageViewOptions } from '../../presenters/message.js';
import type { RealmRow } from '../../store/realms.js';
import type { RealmSettings } from '../rules/realm-settings.js';
import type { Linkifier } from '../rules/markdown/index.js';

/**
 * Per-queue delivery of message events. Message actions emit each event
 * once, in its richest form, with `__` hints; these shapers produce what
 * one queue gets (Zulip's finalize_payload in Tornado):
 *
 * - message: content as HTML or raw Markdown (apply_markdown), avatar_url
 *   null for gravatars the client computes itself (client_gravatar), the
 *   empty topic as the realm's display name for clients without
 *   empty_topic_name, the recipient's own flags, and local_message_id for
 *   the sending queue.
 * - update_message: each user's flags (subscribers without a row: read),
 *   empty-topic display in the legacy subject / orig_subject fields.
 * - reaction, delete_message, update_message_flags need no shaping beyond
 *   what issue 3's built-in shapers do.
 */

export function editHistoryPolicy(settings: RealmSettings): EditHistoryPolicy {
  const p = settings.message_edit_history_visibility_policy;
  if (p === 'moves' || p === 'none') return p;
  if (settings.allow_edit_history === false) return 'none';
  return 'all';
}

export function messageViewFor(
  app: AppCtx,
  realm: RealmRow,
  settings: RealmSettings,
  opts: { applyMarkdown: boolean; clientGravatar: boolean; allowEmptyTopicName: boolean },
  linkifiers: readonly Linkifier[] = [],
): MessageViewOptions {
  return {
    ...opts,
    linkifiers,
    emptyTopicName: settings.realm_empty_topic_display_name,
    editHistoryPolicy: editHistoryPolicy(settings),
    realmStr: realm.string_id,
    fakeEmailDomain: fakeEmailDomain(app.config),
  };
}

const asRecord = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

registerShaper('message', ({ event, clean, queue, userId, memo }) => {
  const allowEmpty = queue.capabilities.empty_topic_name;
  const key = `${queue.applyMarkdown ? 1 : 0}${queue.clientGravatar ? 1 : 0}${allowEmpty ? 1 : 0}`;
  let message = memo.get(key) as Record<string, unknown> | undefined;
  if (!message) {
    const m = { ...asRecord(clean.message) };
    if (!queue.applyMarkdown) {
      m.content = event.__raw_content;
      m.content_type = 'text/x-markdown';
    }
    if (queue.clientGravatar && event.__avatar_gravatar === true) m.avatar_url = null;
    if (!allowEmpty && m.type === 'stream' && m.subject === '') m.subject = event.__empty_topic_name ?? 'general chat';
    message = m;
    memo.set(key, message);
  }
  const raw = asRecord(event.__flags)[String(userId)];
  const flags = Array.isArray(raw) ? (raw as string[]) : [];
  const ownLocal = event.__local_id !== undefined && event.__sender_queue_id === queue.id && event.__sender_id === userId;
  // Restricted guests who cannot access the sender see Zulip's placeholder (domain/access/user-access-delivery.ts).
  if (event.__unknown_sender || ownLocal) {
    if (event.__unknown_sender) message = { ...message, ...asRecord(event.__unknown_sender) };
    const out: Record<string, unknown> = { type: 'message', message, flags };
    if (ownLocal) out.local_message_id = event.__local_id;
    return out as ParleyEvent;
  }
  // Queues of the same variant whose user has the same flags share one event object (events are immutable
  // once queued): it is serialized once per fan-out, and a Redis append carries it once (P4, P11).
  const sharedKey = key + '|' + flags.join(',');
  let shared = memo.get(sharedKey) as ParleyEvent | undefined;
  if (!shared) {
    shared = { type: 'message', message, flags } as ParleyEvent;
    memo.set(sharedKey, shared);
  }
  return shared;
});

registerShaper('update_message', ({ event, clean, queue, userId }) => {
  const out: Record<string, unknown> = { ...clean };
  if ('__flags' in event) {
    const flags = asRecord(event.__flags)[String(userId)];
    out.flags = Array.isArray(flags) ? flags : ['read'];
  }
  if (!queue.capabilities.empty_topic_name) {
    const display = (event.__empty_topic_name as string | undefined) ?? 'general chat';
    for (const k of ['subject', 'orig_subject', 'topic']) if (out[k] === '' && 'stream_id' in out) out[k] = display;
  }
  return out as ParleyEvent;
});

/** "Mark as unread" details name topics; the empty one is shown by name to clients without empty_topic_name. */
registerShaper('update_message_flags', ({ event, clean, queue }) => {
  const details = clean.message_details as Record<string, Record<string, unknown>> | undefined;
  if (!details || queue.capabilities.empty_topic_name) return clean;
  if (!Object.values(details).some((d) => d.type === 'stream' && d.topic === '')) return clean;
  const display = (event.__empty_topic_name as string | undefined) ?? 'general chat';
  const shaped: Record<string, Record<string, unknown>> = {};
  for (const [id, d] of Object.entries(details)) shaped[id] = d.type === 'stream' && d.topic === '' ? { ...d, topic: display } : d;
  return { ...clean, message_details: shaped } as ParleyEvent;
});

import { ALL, userAccessIn } from './access/user-access.js';
import { isPossibleId } from './rules/ids.js';
import { BOT_OUTGOING_WEBHOOK, ROLE_GUEST } from './rules/users.js';
import { realmUrl } from '../config.js';
import type { Db } from '../store/db.js';
import type { AppCtx, TxDb } from './context.js';
import { badRequest } from './errors.js';
import {
  emptyMarkdownContext,
  renderMarkdownSafe,
  type ChannelRef,
  type MarkdownContext,
  type MentionGroup,
  type MentionUser,
  type RenderResult,
  type UploadedImage,
} from './rules/markdown/index.js';
import { attachmentsByPathIds, THUMBNAIL_DONE, THUMBNAIL_PENDING } from '../store/attachments.js';
import type { RealmSettings } from './rules/realm-settings.js';
import { userSettings } from './rules/user-settings.js';
import { linkifiersForRealm } from './access/linkifiers.js';
import { customEmojiByName } from './access/realm-emoji.js';

type AnyDb = Db | TxDb;

/**
 * Builds the renderer's context for one message. Like Zulip's MentionData,
 * it looks up only what the content can refer to: users when it has user
 * mention syntax, groups for group mentions, channels for channel links, so
 * a plain message costs no query here.
 */
const USER_MENTION = /@_?\*\*([^*\n]+?)\*\*/g;
const GROUP_MENTION = /@_?\*([^*\n]+?)\*/g;
const CHANNEL_LINK = /#\*\*([^*\n>]+)/g;

export interface RenderSender {
  readonly id: number;
  readonly settings: string;
  /** For restricted guests: mentions resolve only to users they can access. */
  readonly role?: number;
}

export async function markdownContextFor(app: AppCtx, db: AnyDb, realmId: number, settings: RealmSettings, sender: RenderSender | null, content: string): Promise<MarkdownContext> {
  const ctx: MarkdownContext = {
    ...emptyMarkdownContext(realmUrl(app.config)),
    emptyTopicName: settings.realm_empty_topic_display_name,
    defaultCodeBlockLanguage: (settings.default_code_block_language as string | null | undefined) ?? null,
    inlineImagePreview: settings.inline_image_preview !== false,
  };
  // Uploaded images: their dimensions and thumbnail state, only when the content links an upload.
  if (content.includes('user_uploads/')) {
    const uploads = await uploadedImagesIn(db, realmId, content);
    ctx.uploadedImage = (pathId) => uploads.get(pathId);
  }
  if (sender) ctx.sender = { id: sender.id, translateEmoticons: userSettings(sender.settings).translate_emoticons === true };
  // Both cached per realm: no query once loaded (outside transactions).
  ctx.linkifiers = await linkifiersForRealm(db, realmId);
  if (content.includes(':')) ctx.customEmoji = await customEmojiByName(db, realmId);

  const names = new Set<string>();
  const ids = new Set<number>();
  for (const m of content.matchAll(USER_MENTION)) {
    const text = m[1]!;
    const bar = /^(.*)\|(\d{1,15})$/.exec(text);
    if (bar) {
      // An id no row can have (e.g. beyond 32 bits) mentions nobody, without a PostgreSQL error.
      if (isPossibleId(Number(bar[2]))) ids.add(Number(bar[2]));
      if (bar[1]) names.add(bar[1].toLowerCase());
    } else names.add(text.toLowerCase());
  }
  const groupNames = new Set<string>();
  for (const m of content.matchAll(GROUP_MENTION)) if (!m[1]!.startsWith('*')) groupNames.add(m[1]!.toLowerCase());
  const channelNames = new Set<string>();
  for (const m of content.matchAll(CHANNEL_LINK)) channelNames.add(m[1]!.toLowerCase());

  let [users, groups, channels] = await Promise.all([
    names.size || ids.size
      ? db
          .selectFrom('users')
          .select(['id', 'full_name', 'is_active', 'bot_type'])
          .where('realm_id', '=', realmId)
          .where((eb) =>
            eb.or([
              ...(ids.size ? [eb('id', 'in', [...ids])] : []),
              ...(names.size ? [eb(eb.fn('lower', ['full_name']), 'in', [...names])] : []),
            ]),
          )
          .execute()
      : Promise.resolve([]),
    groupNames.size
      ? db
          .selectFrom('user_groups')
          .select(['id', 'name', 'deactivated', 'is_system_group'])
          .where('realm_id', '=', realmId)
          .where(db.fn('lower', ['name']), 'in', [...groupNames])
          .execute()
      : Promise.resolve([]),
    channelNames.size
      ? db
          .selectFrom('channels')
          .select(['id', 'name'])
          .where('realm_id', '=', realmId)
          .where('name_lower', 'in', [...channelNames])
          .where((eb) =>
            eb.or([
              eb('invite_only', '=', 0),
              eb.exists(
                eb
                  .selectFrom('subscriptions')
                  .select('subscriptions.id')
                  .whereRef('subscriptions.channel_id', '=', 'channels.id')
                  .where('subscriptions.user_id', '=', sender?.id ?? -1)
                  .where('subscriptions.active', '=', 1),
              ),
            ]),
          )
          .execute()
      : Promise.resolve([]),
  ]);

  // Zulip's MentionBackend.get_full_name_info_list: a guest restricted by can_access_all_users_group
  // mentions only users it can access; other names stay plain text.
  const access = users.length && sender?.role === ROLE_GUEST ? await userAccessIn(db, { id: sender.id, realmId, role: sender.role }) : ALL;
  if (access !== ALL) users = users.filter((u) => access.has(u.id));
  if (users.length) {
    const list: MentionUser[] = users.map((u) => ({ id: u.id, fullName: u.full_name, isActive: u.is_active === 1, botType: u.bot_type }));
    ctx.users = {
      byId: (id) => list.find((u) => u.id === id),
      byName: (name) => list.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
    };
  }
  if (groups.length) {
    const list: MentionGroup[] = groups.map((g) => ({ id: g.id, name: g.name ?? '', deactivated: g.deactivated === 1, isSystemGroup: g.is_system_group === 1 }));
    ctx.groups = { byName: (name) => list.find((g) => g.name.toLowerCase() === name.toLowerCase()) };
  }
  if (channels.length) {
    const list: ChannelRef[] = channels.map((c) => ({ id: c.id, name: c.name }));
    ctx.channels = { byName: (name) => list.find((c) => c.name === name), byId: (id) => list.find((c) => c.id === id) };
  }
  return ctx;
}

const UPLOAD_LINK = /user_uploads\/(\d{1,15}\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{1,64}\/[^\s)\]>"'/]+)/g;

async function uploadedImagesIn(db: AnyDb, realmId: number, content: string): Promise<Map<string, UploadedImage>> {
  const ids = new Set<string>();
  for (const m of content.matchAll(UPLOAD_LINK)) {
    ids.add(m[1]!);
    try {
      ids.add(decodeURIComponent(m[1]!));
    } catch {
      /* not percent-encoded text */
    }
  }
  const rows = await attachmentsByPathIds(db, realmId, [...ids].slice(0, 100));
  const out = new Map<string, UploadedImage>();
  for (const r of rows) {
    const state = r.thumbnail_state === THUMBNAIL_DONE ? 'done' : r.thumbnail_state === THUMBNAIL_PENDING ? 'pending' : 'none';
    out.set(r.path_id, { contentType: r.content_type, width: r.image_width ?? 0, height: r.image_height ?? 0, frames: r.image_frames ?? 1, state });
  }
  return out;
}

/** Renders a message body; a renderer failure refuses the message, as Zulip does. */
export async function renderMessageContent(
  app: AppCtx,
  db: AnyDb,
  realmId: number,
  settings: RealmSettings,
  sender: RenderSender | null,
  content: string,
): Promise<RenderResult> {
  const ctx = await markdownContextFor(app, db, realmId, settings, sender, content);
  const out = renderMarkdownSafe(content, ctx, (message, details) => app.log.error(details, message));
  if (!out.ok) throw badRequest(out.error ?? 'Unable to render message');
  // Outgoing-webhook bots among the mentioned users (their mention triggers the webhook); no extra query.
  if (out.mentionedUserIds.size && ctx.users) {
    const bots = [...out.mentionedUserIds].filter((id) => ctx.users!.byId(id)?.botType === BOT_OUTGOING_WEBHOOK);
    if (bots.length) out.mentionedServiceBotIds = bots;
  }
  return out;
}

/** has_link / has_image / has_attachment of a rendered message (for the has: narrows). */
export function contentTraits(html: string, links: readonly string[]): { has_link: number; has_image: number; has_attachment: number } {
  return {
    has_link: links.length > 0 ? 1 : 0,
    has_image: html.includes('class="message_inline_image"') ? 1 : 0,
    has_attachment: links.some((l) => l.startsWith('/user_uploads/') || l.startsWith('user_uploads/')) ? 1 : 0,
  };
}

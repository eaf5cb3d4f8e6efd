import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Config } from '../config.js';
import type { AppCtx } from '../domain/context.js';
import { LocalStorage } from './local.js';
import { S3Storage } from './s3.js';
import { thumbnailKey, type FileStorage } from './storage.js';
import { makeThumbnails, type ImageFacts } from './thumbnails.js';
import { attachmentById, fileSecret, THUMBNAIL_DONE, THUMBNAIL_FAILED, THUMBNAIL_PENDING, type AttachmentRow } from '../store/attachments.js';
import { cleanUnclaimedUploads, doFinishThumbnail, doRenderingOnlyUpdate } from '../domain/actions/attachments.js';
import { transact } from '../domain/context.js';
import { openTag } from '../domain/rules/markdown/html.js';
import { thumbnailAttrs } from '../domain/rules/markdown/previews.js';
import { uploadUrl } from './names.js';
import { embedLinkPreview } from '../domain/link-embeds.js';
import type { SafeFetchLimits } from '../net/safe-fetch.js';

export function createStorage(config: Config): FileStorage {
  const s = config.s3;
  if (!s.bucket) return new LocalStorage(config.dataDir);
  return new S3Storage({ ...s, bucket: s.bucket });
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Replaces an upload's loading placeholder: by its thumbnail when done, by nothing (no preview) when it failed. */
function placeholderSwap(row: AttachmentRow, state: number): (html: string) => string {
  const href = escapeRe(escapeAttr(uploadUrl(row.path_id)));
  // The <a> around the placeholder carries the upload's URL (relative, or under the realm URL).
  const re = new RegExp(`(<a href="(?:[^"]*)?${href}"[^>]*>)<img class="image-loading-placeholder"[^>]*>`, 'g');
  if (state === THUMBNAIL_DONE) {
    const facts = { contentType: row.content_type, width: row.image_width ?? 0, height: row.image_height ?? 0, frames: row.image_frames ?? 1 };
    const img = openTag('img', thumbnailAttrs(row.path_id, facts));
    return (html) => html.replace(re, (_m, a: string) => a + img);
  }
  return (html) => html.replace(new RegExp(`\\n?<div class="message_inline_image">${re.source}</a></div>`, 'g'), '');
}

/**
 * Background work on uploads in this process: thumbnails (made after the
 * upload's transaction commits, never inside it, then swapped into the
 * messages that link the image with rendering_only update_message events,
 * as Zulip's thumbnail worker does), the unclaimed-upload cleaner on a timer,
 * and the secret signing temporary URLs.
 *
 * There is no jobs table on this branch: the cleaner is a timer in every
 * process, and its deletes are idempotent (a row goes in exactly one
 * transaction, files are removed after, a missing file is not an error).
 */
export class FileService {
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private secret: Promise<Buffer> | undefined;
  constructor(
    private readonly app: AppCtx,
    readonly storage: FileStorage,
  ) {}

  start(): void {
    const every = this.app.config.uploadCleanerIntervalMs;
    if (every > 0) {
      this.timer = setInterval(() => void this.clean().catch((e) => this.app.log.warn({ err: (e as Error).message }, 'upload cleaner failed')), every);
      this.timer.unref();
    }
  }

  clean(now?: number): Promise<number> {
    return cleanUnclaimedUploads(this.app, this.storage, this.app.config.uploadGraceDays, now);
  }

  /** Makes an upload's thumbnails in the background. */
  scheduleThumbnail(row: AttachmentRow): void {
    this.track(this.thumbnail(row).catch((e) => this.app.log.warn({ err: (e as Error).message, attachment: row.id }, 'thumbnailing failed')));
  }

  /** Test hook: widen what link previews may connect to (e.g. a loopback test server). */
  embedLimits: Partial<SafeFetchLimits> | undefined;

  /** Fetches a link preview for a sent message in the background (caller checked the settings). */
  scheduleEmbed(messageId: number, url: string): void {
    this.track(embedLinkPreview(this.app, messageId, url, this.embedLimits).catch((e) => this.app.log.info({ err: (e as Error).message, messageId }, 'no link preview')));
  }

  private track(p: Promise<unknown>): void {
    const done = p.then(() => undefined);
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
  }

  /** Resolves when no background work (thumbnails, link previews) is under way (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /**
   * Writes an upload's thumbnail files again (an imported organization: the
   * export carries the originals, and its messages already point at the
   * thumbnails). Returns false when the image cannot be thumbnailed.
   */
  async rewriteThumbnails(row: AttachmentRow): Promise<boolean> {
    try {
      await this.writeThumbnails(row);
      return true;
    } catch {
      return false;
    }
  }

  /** Makes the thumbnails of a stored image and writes them beside it; throws when it cannot. */
  private async writeThumbnails(row: AttachmentRow): Promise<void> {
    const facts: ImageFacts = { width: row.image_width ?? 0, height: row.image_height ?? 0, frames: row.image_frames ?? 1, thumbnail: true };
    const thumbs = await makeThumbnails(async () => {
      const f = await this.storage.open(row.path_id);
      if (!f) throw new Error('upload vanished');
      return f.stream;
    }, facts);
    for (const [name, data] of thumbs) await this.storage.put(thumbnailKey(row.path_id, name), Readable.from([data]), data.length, 'image/webp');
  }

  private async thumbnail(row: AttachmentRow): Promise<void> {
    let state = THUMBNAIL_DONE;
    try {
      await this.writeThumbnails(row);
    } catch {
      state = THUMBNAIL_FAILED;
    }
    const current = await attachmentById(this.app.db, row.id);
    if (!current || current.thumbnail_state !== THUMBNAIL_PENDING) return;
    await doFinishThumbnail(this.app, row, placeholderSwap(row, state), state);
  }

  /**
   * A message rendered while a thumbnail was pending, whose thumbnail finished
   * before the message was committed (so the finishing step did not see it):
   * swap now. Called after a send whose HTML holds a placeholder.
   */
  refreshPlaceholders(messageId: number): void {
    this.track(
      (async () => {
        const rows = await this.app.db
          .selectFrom('attachments')
          .innerJoin('attachment_messages', 'attachment_messages.attachment_id', 'attachments.id')
          .selectAll('attachments')
          .where('attachment_messages.message_id', '=', messageId)
          .where('attachments.thumbnail_state', 'in', [THUMBNAIL_DONE, THUMBNAIL_FAILED])
          .execute();
        if (rows.length === 0) return;
        await transact(this.app, (tx) => doRenderingOnlyUpdate(tx, [messageId], (html) => rows.reduce((h, r) => placeholderSwap(r, r.thumbnail_state)(h), html)));
      })().catch((e) => this.app.log.warn({ err: (e as Error).message, messageId }, 'placeholder refresh failed')),
    );
  }

  private key(): Promise<Buffer> {
    this.secret ??= fileSecret(this.app.db, 'temporary_url', randomBytes(32).toString('hex')).then((v) => Buffer.from(v, 'hex'));
    return this.secret;
  }

  /** A /user_uploads/temporary/<token>/<name> URL for one upload, valid for config.temporaryUrlSeconds. */
  async temporaryUrl(row: AttachmentRow): Promise<string> {
    const exp = Math.floor(Date.now() / 1000) + this.app.config.temporaryUrlSeconds;
    const body = `${row.id.toString(36)}.${exp.toString(36)}`;
    const mac = createHmac('sha256', await this.key()).update(`${body}:${row.path_id}`).digest('base64url').slice(0, 32);
    const name = row.path_id.split('/').pop()!;
    return `/user_uploads/temporary/${body}.${mac}/${encodeURIComponent(name)}`;
  }

  /** The attachment id a temporary token names, or null when it is malformed, forged or expired. */
  async checkTemporaryToken(token: string, lookup: (id: number) => Promise<AttachmentRow | undefined>): Promise<AttachmentRow | null> {
    const m = /^([0-9a-z]{1,11})\.([0-9a-z]{1,8})\.([A-Za-z0-9_-]{32})$/.exec(token);
    if (!m) return null;
    const id = parseInt(m[1]!, 36);
    const exp = parseInt(m[2]!, 36);
    if (exp < Math.floor(Date.now() / 1000)) return null;
    const row = await lookup(id);
    if (!row) return null;
    const want = createHmac('sha256', await this.key()).update(`${m[1]}.${m[2]}:${row.path_id}`).digest('base64url').slice(0, 32);
    if (!timingSafeEqual(Buffer.from(want), Buffer.from(m[3]!))) return null;
    return row;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.idle();
    await this.storage.close?.();
  }
}

import { createReadStream } from 'node:fs';
import { transact } from '../../domain/context.js';
import { badRequest, JsonableError, notFound } from '../../domain/errors.js';
import { canReadUpload } from '../../domain/access/attachments.js';
import { doCreateAttachment, doDeleteAttachment, listAttachments } from '../../domain/actions/attachments.js';
import { isPossibleId } from '../../domain/rules/ids.js';
import { invalidAttachment } from '../../domain/access/attachments.js';
import { detectContentType, isThumbnailableImage } from '../../files/content-type.js';
import { newPathId, parsePathId, uploadUrl } from '../../files/names.js';
import { probeImage } from '../../files/thumbnails.js';
import { attachmentByPathId } from '../../store/attachments.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { discardStaged } from '../../files/staging.js';
import { p } from '../params.js';

/**
 * POST /user_uploads (Zulip's upload_file_backend): one file of any field
 * name, at most max_file_upload_size_mib, within the realm's quota. The
 * answer: {"uri": url, "url": url, "filename": name} (uri is Zulip's
 * deprecated alias; filename, feature level 285, is the name as uploaded).
 */
export const uploadFile = endpoint({
  method: 'POST',
  path: '/user_uploads',
  auth: 'user',
  params: {},
  handler: async (ctx) => {
    try {
      return await storeUpload(ctx);
    } finally {
      // Temporary files go as soon as the answer is known (the onResponse hook is the safety net).
      await discardStaged(ctx.files.flatMap((f) => (f.staged ? [f.staged] : [])));
    }
  },
});

async function storeUpload(ctx: AuthedCtx): Promise<{ uri: string; url: string; filename: string }> {
  const app = ctx.app;
  if (ctx.files.length === 0) throw badRequest('You must specify a file to upload');
  if (ctx.files.length !== 1) throw badRequest('You may only upload one file at a time');
  const file = ctx.files[0]!;
  const staged = file.staged;
  const maxMib = app.config.maxFileUploadSizeMib;
  const size = staged ? staged.size : file.data.length;
  if (!staged || staged.truncated || size > maxMib * 1024 * 1024) {
    throw new JsonableError(`File is larger than this server's configured maximum upload size (${maxMib} MiB).`);
  }
  // Django unquotes the client's name (Zulip's get_file_info); a bad escape keeps it as sent.
  let name = file.filename;
  try {
    name = decodeURIComponent(name);
  } catch {
    /* keep the raw name */
  }
  const contentType = detectContentType(name, staged.head);
  const image = isThumbnailableImage(contentType) ? await probeImage(staged.path) : null;
  const pathId = newPathId(ctx.user.realmId, name);
  await app.files.storage.put(pathId, createReadStream(staged.path), size, contentType);
  let row;
  try {
    row = await transact(app, (tx) => doCreateAttachment(tx, ctx.user, { pathId, fileName: name, size, contentType, image }));
  } catch (e) {
    await app.files.storage.remove([pathId]).catch(() => undefined);
    throw e;
  }
  if (row.thumbnail_state === 1) app.files.scheduleThumbnail(row);
  const url = uploadUrl(pathId);
  return { uri: url, url, filename: name };
}

/**
 * GET /user_uploads/{realm_id_str}/{filename} under /api/v1 (Zulip's
 * serve_file_url_backend): a temporary URL for apps that download with a
 * plain HTTP client. Same access rule and same 404 as the file itself.
 */
export const getFileTemporaryUrl = endpoint({
  method: 'GET',
  path: '/user_uploads/:realm_id_str/*',
  auth: 'user',
  params: { realm_id_str: p.pathStr(), '*': p.pathStr() },
  handler: async (ctx, params) => {
    const parsed = parsePathId(`${params.realm_id_str}/${params['*']}`);
    const row = parsed && parsed.realmId === ctx.user.realmId ? await attachmentByPathId(ctx.app.db, parsed.pathId) : undefined;
    // Under /api/v1 the missing-file answer is a JSON 404 (the root-level file route answers Zulip's HTML one).
    if (!row || !(await canReadUpload(ctx.app.db, ctx.user, row))) throw notFound('File not found');
    return { url: await ctx.app.files.temporaryUrl(row) };
  },
});

/** GET /attachments: the caller's uploads and the organization's space used. */
export const getAttachments = endpoint({
  method: 'GET',
  path: '/attachments',
  auth: 'user',
  params: {},
  handler: async (ctx) => listAttachments(ctx.app, ctx.user),
});

/** DELETE /attachments/{attachment_id}: only the uploader; anything else is "Invalid attachment". */
export const removeAttachment = endpoint({
  method: 'DELETE',
  path: '/attachments/:attachment_id',
  auth: 'user',
  params: { attachment_id: p.pathId() },
  handler: async (ctx, { attachment_id }) => {
    if (!isPossibleId(attachment_id)) throw invalidAttachment();
    await doDeleteAttachment(ctx.app, ctx.app.files.storage, ctx.user, attachment_id);
    return {};
  },
});

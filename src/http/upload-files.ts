import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppCtx, Caller } from '../domain/context.js';
import { JsonableError } from '../domain/errors.js';
import { canReadUpload } from '../domain/access/attachments.js';
import { authenticate } from './auth.js';
import { noteUser } from './logging.js';
import { sessionOf } from './sessions.js';
import { parsePathId } from '../files/names.js';
import { INLINE_TYPES } from '../files/content-type.js';
import { SERVER_THUMBNAIL_FORMATS, STILL_FORMAT } from '../files/thumbnails.js';
import { isValidKey, thumbnailKey, type ByteRange } from '../files/storage.js';
import { realmExportByPath } from '../domain/actions/realm-export.js';
import { attachmentById, attachmentByPathId, THUMBNAIL_DONE, type AttachmentRow } from '../store/attachments.js';

/**
 * Uploaded files at the site root, as Zulip serves them (zerver/urls.py,
 * zerver/views/upload.py):
 *   GET /user_uploads/{realm_id}/{xx}/{token}/{name}        the file (authenticated)
 *   GET /user_uploads/download/{realm_id}/{xx}/{token}/{name} the same, always as an attachment
 *   GET /user_uploads/thumbnail/{path_id}/{format}          a thumbnail (same access as the file)
 *   GET /user_uploads/temporary/{token}/{name}              no credentials: a short-lived signed URL
 *                                                           from GET /api/v1/user_uploads/{realm_id_str}/{filename}
 * A missing file, a malformed path (traversal included) and a file the caller
 * may not read all get the same 404 "<p>File not found.</p>" (Zulip answers
 * 403 for "exists but not yours"; we do not confirm existence).
 *
 * Every response carries nosniff and a sandboxing CSP: an uploaded HTML or
 * SVG document opened from our origin runs no script and reaches nothing.
 */

/**
 * THE authentication of the root-level file routes. Today: HTTP Basic with
 * an API key (apps). The web app's session cookie is to be accepted here
 * too when the web branch is merged: one place, every file route follows.
 */
export async function authenticateFileRequest(app: AppCtx, req: FastifyRequest): Promise<Caller> {
  // A browser's <img>/<a> carries the web app's session cookie (a GET: no CSRF
  // token is needed, as for any Zulip GET); apps send their API key.
  if (req.headers.authorization === undefined) {
    const session = await sessionOf(app, req);
    if (session) {
      noteUser(req, session.caller.id);
      return session.caller;
    }
  }
  const { caller } = await authenticate(app, req.headers.authorization);
  noteUser(req, caller.id);
  return caller;
}

const SANDBOX_CSP = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox";
// Browsers' PDF viewers do not run inside a sandboxed document; PDF is still script-free from our origin's view.
const PDF_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; object-src 'self'";

function safetyHeaders(reply: FastifyReply, contentType: string): void {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', contentType === 'application/pdf' ? PDF_CSP : SANDBOX_CSP);
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-resource-policy', 'same-origin');
}

export function fileNotFound(reply: FastifyReply): FastifyReply {
  safetyHeaders(reply, 'text/html');
  return reply.code(404).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send('<p>File not found.</p>');
}

/** Zulip's patch_disposition_header: ASCII names quoted, others as RFC 8187 filename*. */
export function contentDisposition(name: string, attachment: boolean): string {
  const kind = attachment ? 'attachment' : 'inline';
  if (/^[\x20-\x7e]*$/.test(name)) return `${kind}; filename="${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return `${kind}; filename*=utf-8''${encodeURIComponent(name)}`;
}

/** One "bytes=a-b", "bytes=a-" or "bytes=-n" range of a file of `size` bytes; null: serve it whole; 'bad': unsatisfiable. */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'bad' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null; // several ranges or another unit: the whole file, as RFC 9110 allows
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (!Number.isSafeInteger(start) || start >= size || end < start) return 'bad';
  return { start, end };
}

async function sendStored(app: AppCtx, req: FastifyRequest, reply: FastifyReply, key: string, contentType: string, name: string, download: boolean, size?: number): Promise<FastifyReply> {
  // Media players seek with Range requests (Safari will not play video without them).
  const range = size !== undefined ? parseRange(req.headers.range, size) : null;
  if (range === 'bad') {
    safetyHeaders(reply, 'text/plain');
    return reply.code(416).header('content-range', `bytes */${size}`).header('content-type', 'text/plain').send('');
  }
  const file = await app.files.storage.open(key, range ?? undefined);
  if (!file) return fileNotFound(reply);
  safetyHeaders(reply, contentType);
  const attachment = download || !INLINE_TYPES.has(contentType);
  reply
    .header('content-type', contentType)
    .header('accept-ranges', 'bytes')
    .header('content-disposition', contentDisposition(name, attachment))
    .header('cache-control', 'private, immutable');
  if (range) {
    return reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
      .header('content-length', String(range.end - range.start + 1))
      .send(file.stream);
  }
  return reply.code(200).header('content-length', String(file.size)).send(file.stream);
}

/** The upload named by the rest of a /user_uploads/ URL (decoded), if the caller may read it. */
async function readableUpload(app: AppCtx, caller: Caller, rawPath: string): Promise<AttachmentRow | null> {
  const parsed = parsePathId(rawPath);
  if (!parsed || parsed.realmId !== caller.realmId) return null;
  const row = await attachmentByPathId(app.db, parsed.pathId);
  if (!row || !(await canReadUpload(app.db, caller, row))) return null;
  return row;
}

const baseName = (pathId: string): string => pathId.split('/').pop()!;

export function registerUploadFiles(fastify: FastifyInstance, app: AppCtx): void {
  const serve = (download: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const params = req.params as { realm_id: string; '*': string };
    const caller = await authenticateFileRequest(app, req);
    const row = await readableUpload(app, caller, `${params.realm_id}/${params['*']}`);
    if (!row) return fileNotFound(reply);
    return sendStored(app, req, reply, row.path_id, row.content_type, baseName(row.path_id), download, Number(row.size));
  };
  // Organization export tarballs (issue 19): only the realm's administrators, only while the export exists.
  fastify.get('/user_uploads/exports/*', async (req, reply) => {
    const caller = await authenticateFileRequest(app, req);
    const key = `exports/${(req.params as { '*': string })['*']}`;
    if (caller.role > 200 || caller.isBot || !isValidKey(key)) return fileNotFound(reply);
    const row = await realmExportByPath(app.db, caller.realmId, key);
    if (!row) return fileNotFound(reply);
    return sendStored(app, req, reply, key, 'application/gzip', baseName(key), true, row.tarball_size_bytes === null ? undefined : Number(row.tarball_size_bytes));
  });
  fastify.get('/user_uploads/:realm_id/*', serve(false));
  fastify.get('/user_uploads/download/:realm_id/*', serve(true));

  fastify.get('/user_uploads/thumbnail/*', async (req, reply) => {
    const caller = await authenticateFileRequest(app, req);
    const rest = (req.params as { '*': string })['*'];
    const slash = rest.lastIndexOf('/');
    const formatName = rest.slice(slash + 1);
    const format = SERVER_THUMBNAIL_FORMATS.find((f) => f.name === formatName);
    if (slash < 0 || !format) return fileNotFound(reply);
    const row = await readableUpload(app, caller, rest.slice(0, slash));
    if (!row || row.thumbnail_state !== THUMBNAIL_DONE) return fileNotFound(reply);
    // A still image has no animated variant: Zulip serves the still one.
    const name = format.animated && (row.image_frames ?? 1) <= 1 ? STILL_FORMAT.name : format.name;
    return sendStored(app, req, reply, thumbnailKey(row.path_id, name), 'image/webp', name, false);
  });

  fastify.get('/user_uploads/temporary/:token/:filename', async (req, reply) => {
    const { token, filename } = req.params as { token: string; filename: string };
    const row = await app.files.checkTemporaryToken(token, (id) => attachmentById(app.db, id));
    // Zulip's serve_local_file_unauthed errors, verbatim.
    if (!row) throw new JsonableError('Invalid token');
    if (baseName(row.path_id) !== filename) throw new JsonableError('Invalid filename');
    return sendStored(app, req, reply, row.path_id, row.content_type, baseName(row.path_id), false, Number(row.size));
  });
}

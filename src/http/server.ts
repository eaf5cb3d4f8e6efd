import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { AppCtx } from '../domain/context.js';
import { JsonableError, notFound, rateLimited } from '../domain/errors.js';
import { authenticate } from './auth.js';
import type { AnyEndpoint, AuthedCtx, Method, PublicCtx, UploadedFile } from './endpoint.js';
import { parseParams } from './params.js';
import { routes } from './routes.js';
import { registerAvatarFiles } from './avatar-files.js';
import { registerClientCompat } from './client-compat.js';

export const API_PREFIX = '/api/v1';
const BODY_LIMIT = 30 * 1024 * 1024;
const FILE_LIMIT = 25 * 1024 * 1024;

const COMMON_HEADERS = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'cache-control': 'no-store',
};

/** Zulip-style JSON body: compact JSON with a trailing newline, with our security headers. */
function sendJson(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return reply.code(status).headers(COMMON_HEADERS).send(JSON.stringify(body) + '\n');
}

export function sendError(reply: FastifyReply, err: JsonableError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return sendJson(reply, err.status, { result: 'error', msg: err.message, code: err.code, ...err.data });
}

/** A form or multipart field may repeat; like Django's QueryDict[key], the last value wins. */
function flatten(obj: unknown, files: UploadedFile[] | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!obj || typeof obj !== 'object') return out;
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    const items = Array.isArray(v) ? v : [v];
    for (const item of items) {
      if (typeof item === 'string') out[k] = item;
      else if (item && typeof item === 'object' && 'type' in item) {
        const part = item as { type: string; value?: unknown; filename?: string; mimetype?: string; _buf?: Buffer };
        if (part.type === 'file') files?.push({ field: k, filename: part.filename ?? '', mimetype: part.mimetype ?? '', data: part._buf ?? Buffer.alloc(0) });
        else out[k] = String(part.value ?? '');
      }
    }
  }
  return out;
}

/** "ZulipPython/0.9.1 (Debian...)" -> "ZulipPython", as Zulip derives the message client. */
export function clientNameFromUserAgent(ua: string | undefined): string {
  if (!ua) return 'Unspecified';
  const m = /^([^\s/]+)\//.exec(ua);
  return m ? m[1]! : ua.split(/\s/)[0]!.slice(0, 30) || 'Unspecified';
}

// Long-polls are not counted: a client holds one open most of the time (Zulip exempts them too).
const RATE_LIMIT_EXEMPT = new Set(['GET /events', 'DELETE /events']);

/**
 * Zulip's API rate limits: per user for authenticated requests, per client
 * address otherwise, with X-RateLimit-* headers and 429 RATE_LIMIT_HIT.
 */
async function applyRateLimit(app: AppCtx, reply: FastifyReply, key: string, limit: number): Promise<void> {
  if (limit <= 0) return;
  const r = await app.limiter.consume(key, limit, 60);
  reply.headers({ 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(r.remaining), 'x-ratelimit-reset': String(r.resetAt) });
  if (!r.allowed) throw rateLimited(r.retryAfter);
}

function mount(fastify: FastifyInstance, app: AppCtx, ep: AnyEndpoint): void {
  const limited = !RATE_LIMIT_EXEMPT.has(`${ep.method} ${ep.path}`);
  fastify.route({
    method: ep.method,
    url: API_PREFIX + ep.path,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      (req as { parleyInHandler?: boolean }).parleyInHandler = true;
      const files: UploadedFile[] = [];
      const body = flatten(req.body, files);
      const query = flatten(req.query, null);
      const base: PublicCtx = { app, req, reply, files, clientName: clientNameFromUserAgent(req.headers['user-agent']) };
      let ctx: PublicCtx | AuthedCtx = base;
      if (ep.auth === 'user') {
        const { caller, row } = await authenticate(app, req.headers.authorization);
        ctx = { ...base, user: caller, userRow: row };
        if (limited) await applyRateLimit(app, reply, `api:user:${caller.id}`, app.config.rateLimitPerUser);
      } else if (limited) {
        await applyRateLimit(app, reply, `api:ip:${req.ip}`, app.config.rateLimitPerIp);
      }
      if (ep.guard) await ep.guard(ctx as never);
      const parsed = parseParams(ep.params, { body, query, path: (req.params ?? {}) as Record<string, string> });
      const result = await ep.handler(ctx as never, parsed.values);
      if ('raw' in result && result.raw === true) return reply;
      const out: Record<string, unknown> = { result: 'success', msg: '', ...result };
      if (parsed.ignored.length) out.ignored_parameters_unsupported = parsed.ignored;
      return sendJson(reply, 200, out);
    },
  });
}

export async function buildHttpServer(app: AppCtx, opts: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const fastify = Fastify({
    logger: opts.logger === false ? false : (app.log as never),
    bodyLimit: BODY_LIMIT,
    // Zulip accepts paths with and without a trailing slash on some routes; be lenient.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });

  // Zulip reads parameters only from form and multipart bodies; any other body
  // (JSON, text) is accepted and ignored rather than rejected.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
  await fastify.register(formbody, { bodyLimit: BODY_LIMIT });
  await fastify.register(multipart, {
    attachFieldsToBody: true,
    limits: { fileSize: FILE_LIMIT, fieldSize: BODY_LIMIT, files: 10, fields: 1000 },
    onFile: async (part) => {
      (part as unknown as { _buf: Buffer })._buf = await part.toBuffer();
    },
  });

  // The router matches parameters by position, so one path shape has one set of methods.
  const byPath = new Map<string, Set<Method>>();
  const seen = new Map<string, string>();
  for (const ep of routes) {
    const shape = ep.path.replace(/:[A-Za-z_]+/g, ':');
    const key = `${ep.method} ${shape}`;
    if (seen.has(key)) throw new Error(`route ${ep.method} ${ep.path} duplicates ${seen.get(key)}`);
    seen.set(key, ep.path);
    mount(fastify, app, ep);
    if (!byPath.has(shape)) byPath.set(shape, new Set());
    byPath.get(shape)!.add(ep.method);
  }
  // Wrong method on a known path: 405 with the allowed methods (Zulip's body has no code).
  const samplePath = new Map(routes.map((ep) => [ep.path.replace(/:[A-Za-z_]+/g, ':'), ep.path]));
  for (const [shape, methods] of byPath) {
    const path = samplePath.get(shape)!;
    const missing = (['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as Method[]).filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    const allowed = [...methods].sort();
    fastify.route({
      method: missing,
      url: API_PREFIX + path,
      handler: async (_req, reply) => {
        reply.header('allow', allowed.join(', '));
        return sendJson(reply, 405, { result: 'error', msg: 'Method Not Allowed', allowed_methods: allowed });
      },
    });
  }

  // Uploaded avatars (issue 11), outside /api/v1 as in Zulip.
  registerAvatarFiles(fastify, app);
  // Custom emoji images and the presence state's lifecycle (issue 10).
  registerClientCompat(fastify, app);

  fastify.setNotFoundHandler(async (_req, reply) => sendError(reply, notFound()));

  fastify.setErrorHandler(async (err: unknown, req, reply) => {
    if (err instanceof JsonableError) return sendError(reply, err);
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.code === 'FST_REQ_FILE_TOO_LARGE' || e.code === 'FST_FILES_LIMIT' || e.code === 'FST_FIELDS_LIMIT' || e.statusCode === 413) {
      return sendError(reply, new JsonableError('Request too large', { code: 'REQUEST_TOO_LARGE', status: 413 }));
    }
    const beforeHandler = !(req as { parleyInHandler?: boolean }).parleyInHandler;
    if ((typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) || beforeHandler) {
      // Malformed bodies and headers the framework refused (anything failing before the
      // handler runs is request parsing, e.g. truncated multipart): a client error, not a crash.
      return sendError(reply, new JsonableError('Malformed request', { status: 400 }));
    }
    req.log.error({ err }, 'unhandled error');
    if (process.env.PARLEY_DEBUG_ERRORS) console.error(err);
    return sendJson(reply, 500, { result: 'error', msg: 'Internal server error' });
  });

  return fastify;
}

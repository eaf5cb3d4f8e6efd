import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { AppCtx } from '../domain/context.js';
import { JsonableError, notFound, rateLimited } from '../domain/errors.js';
import { authenticate, authenticateWebhook } from './auth.js';
import { SerializedFields, type AnyEndpoint, type AuthedCtx, type Method, type PublicCtx, type UploadedFile } from './endpoint.js';
import { paramParser, type ParamDefs, type ParamSource, type Parsed } from './params.js';
import { routes } from './routes.js';
import { updateSettings } from './endpoints/settings.js';
import { getOwnUser } from './endpoints/users.js';
import { getEvents } from './endpoints/events.js';
import { checkJsonCsrf, keepSessionAfterPasswordChange, registerSessionRoutes, requireSession, sessionOf, type SessionAuth } from './sessions.js';
import { registerWebApp } from './web.js';
import { registerAvatarFiles } from './avatar-files.js';
import { registerEmojiData } from './emoji-data.js';
import { registerUploadFiles } from './upload-files.js';
import { discardStaged, stageStream, type StagedFile } from '../files/staging.js';
import { registerClientCompat } from './client-compat.js';
import { JsonBody } from './json-reply.js';
import { genRequestId, loggableError, logRequest, markHead, noteUser, registerRequestLogging, requestMethod } from './logging.js';
import { Metrics, registerMetricsRoute } from './metrics.js';
import { PollAnswer, type PollSink } from '../events/queues.js';
import type { Caller } from '../domain/context.js';
import type { UserRow } from '../store/users.js';

export const API_PREFIX = '/api/v1';
/** Zulip's mirror of the API for the signed-in browser: the same routes, authenticated by the session cookie only. */
export const JSON_PREFIX = '/json';
const BODY_LIMIT = 30 * 1024 * 1024;
/**
 * Fastify's router options, and those of the two find-my-way tables built beside it (the 405/OPTIONS
 * table and the /json router), so that all three match a path alike. Zulip accepts paths with and
 * without a trailing slash on some routes; be lenient.
 */
const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 500 } as const;
const FILE_LIMIT = 25 * 1024 * 1024;

const COMMON_HEADERS = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'cache-control': 'no-store',
};

/** COMMON_HEADERS as writeHead's flat list (name, value, ...), in the same order. */
const COMMON_HEADER_LIST: readonly string[] = Object.entries(COMMON_HEADERS).flat();
/** The headers of a lean 200 answer, flat: X-Request-Id, the common headers, Content-Length (the Fastify path's order). */
const SUCCESS_HEADERS: readonly (string | number)[] = ['x-request-id', '', ...COMMON_HEADER_LIST, 'content-length', 0];
function successHeaders(reqId: string, body: string): (string | number)[] {
  const h = SUCCESS_HEADERS.slice();
  h[1] = reqId;
  h[h.length - 1] = Buffer.byteLength(body);
  return h;
}

/** Zulip-style JSON body: compact JSON with a trailing newline, with our security headers. */
export function sendJson(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return reply.code(status).headers(COMMON_HEADERS).send(JSON.stringify(body) + '\n');
}

/**
 * A 200 JSON success body (already serialized), written straight to the raw
 * response: the same status, headers (those set on the reply so far, e.g.
 * X-Request-Id and X-RateLimit-*, then ours) and bytes as sendJson, without
 * Fastify's send pipeline. onResponse hooks (request log, metrics) still run
 * when the response finishes.
 */
function sendSuccessRaw(reply: FastifyReply, body: string): FastifyReply {
  reply.hijack();
  const headers = reply.getHeaders() as Record<string, string | number | string[]>;
  Object.assign(headers, COMMON_HEADERS);
  headers['content-length'] = Buffer.byteLength(body);
  reply.raw.writeHead(200, headers);
  reply.raw.end(body);
  return reply;
}

/**
 * Authenticated callers by Authorization header. An entry is valid while the
 * API-key cache still holds the very row it was derived from (AuthCache drops
 * rows on any write to users or realms), so it answers exactly as
 * authenticate() would, without decoding the header or rebuilding the caller.
 */
interface AuthMemo {
  readonly key: string;
  readonly row: unknown;
  readonly result: { caller: Caller; row: UserRow };
}
const AUTH_MEMO_MAX = 10_000;

function apiKeyOf(header: string): string {
  const space = header.indexOf(' ');
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1).trim();
}

/** The memoized caller for this header when it is still valid (see AuthMemo), without a promise. */
function memoizedAuth(app: AppCtx, memo: Map<string, AuthMemo>, header: string | undefined): { caller: Caller; row: UserRow } | undefined {
  if (header === undefined) return undefined;
  const m = memo.get(header);
  if (m === undefined) return undefined;
  if (app.authCache.get(m.key) === m.row) return m.result;
  memo.delete(header);
  return undefined;
}

async function authenticateMemo(app: AppCtx, memo: Map<string, AuthMemo>, header: string | undefined): Promise<{ caller: Caller; row: UserRow }> {
  const hit = memoizedAuth(app, memo, header);
  if (hit !== undefined) return hit;
  const result = await authenticate(app, header);
  const key = apiKeyOf(header!);
  const row = app.authCache.get(key);
  if (row !== undefined) {
    if (memo.size >= AUTH_MEMO_MAX) memo.clear();
    memo.set(header!, { key, row, result });
  }
  return result;
}

export function sendError(reply: FastifyReply, err: JsonableError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return sendJson(reply, err.status, errorFields(err));
}

const errorFields = (err: JsonableError): Record<string, unknown> => ({ result: 'error', msg: err.message, code: err.code, ...err.data });

/** POST /user_uploads under /api/v1 or the web app's /json mirror. */
const isStagedUploadUrl = (url: string): boolean => /^\/(?:api\/v1|json)\/user_uploads\/?(?:\?|$)/.test(url);

/** What flatten() gives for no fields: shared, never written to. */
const NO_FIELDS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** A form or multipart field may repeat; like Django's QueryDict[key], the last value wins. */
function flatten(obj: unknown, files: UploadedFile[] | null): Record<string, string> {
  if (!obj || typeof obj !== 'object') return NO_FIELDS;
  let out: Record<string, string> | undefined;
  for (const k in obj as Record<string, unknown>) {
    if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
    out ??= {};
    const v = (obj as Record<string, unknown>)[k];
    const items = Array.isArray(v) ? v : [v];
    for (const item of items) {
      if (typeof item === 'string') out[k] = item;
      else if (item && typeof item === 'object' && 'type' in item) {
        const part = item as { type: string; value?: unknown; filename?: string; mimetype?: string; _buf?: Buffer; _staged?: StagedFile };
        if (part.type === 'file') {
          const file: UploadedFile = { field: k, filename: part.filename ?? '', mimetype: part.mimetype ?? '', data: part._buf ?? Buffer.alloc(0) };
          files?.push(part._staged ? { ...file, staged: part._staged } : file);
        }
        else out[k] = String(part.value ?? '');
      }
    }
  }
  return out ?? NO_FIELDS;
}

/** "ZulipPython/0.9.1 (Debian...)" -> "ZulipPython", as Zulip derives the message client. */
export function clientNameFromUserAgent(ua: string | undefined): string {
  if (!ua) return 'Unspecified';
  const m = /^([^\s/]+)\//.exec(ua);
  return m ? m[1]! : ua.split(/\s/)[0]!.slice(0, 30) || 'Unspecified';
}

/** clientNameFromUserAgent, remembered per User-Agent (a client sends the same one on every request). */
const clientNames = new Map<string, string>();
function clientNameOf(ua: string | undefined): string {
  if (ua === undefined) return 'Unspecified';
  let name = clientNames.get(ua);
  if (name === undefined) {
    name = clientNameFromUserAgent(ua);
    if (clientNames.size >= 1000) clientNames.clear();
    clientNames.set(ua, name);
  }
  return name;
}

/** Our per-request fields, declared on every Request (decorateRequest) so requests keep one shape. */
interface ParleyRequest extends FastifyRequest {
  parleyInHandler: boolean;
  /** The route pattern, for the request log and metrics (logging.ts). */
  parleyRoute: string | undefined;
  /** The API endpoint's handler, found before the body is read (the /api/v1/* and /json/* routes). */
  parleyHandler: RouteHandler | undefined;
  parleyRawBody: Buffer | undefined;
  parleyStaged: StagedFile[] | undefined;
}

/** An API endpoint in the router behind /api/v1/* and /json/*: its path under the prefix, and its handler under each. */
interface ApiEntry {
  readonly path: string;
  readonly api: RouteHandler;
  /** Undefined where the endpoint has no /json form (incoming webhooks). */
  readonly json: () => RouteHandler | undefined;
}

/** The success body: the handler's fields after result and msg (the handler never returns those two). */
function successBody(result: Record<string, unknown>, ignored: readonly string[]): string {
  const fields = result instanceof JsonBody ? result.json : JSON.stringify(result);
  let body = fields.length === 2 ? '{"result":"success","msg":""' : '{"result":"success","msg":"",' + fields.slice(1, -1);
  if (ignored.length) body += ',"ignored_parameters_unsupported":' + JSON.stringify(ignored);
  return body + '}\n';
}

// Long-polls are not counted: a client holds one open most of the time (Zulip exempts them too).
const RATE_LIMIT_EXEMPT = new Set(['GET /events', 'DELETE /events']);

/**
 * Zulip's API rate limits: per user for authenticated requests, per client
 * address otherwise, with X-RateLimit-* headers and 429 RATE_LIMIT_HIT.
 */
async function applyRateLimit(app: AppCtx, reply: FastifyReply, key: string, limit: number): Promise<void> {
  if (limit <= 0) return;
  const r = await consumeRateLimit(app, key, limit);
  reply.headers(r.headers);
  if (r.error) throw r.error;
}

/** One use of the key: the X-RateLimit-* headers, and the 429 when over the limit (both paths: applyRateLimit, the lean path). */
async function consumeRateLimit(app: AppCtx, key: string, limit: number): Promise<{ headers: Record<string, string>; error: JsonableError | undefined }> {
  const r = await app.limiter.consume(key, limit, 60);
  const headers = { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(r.remaining), 'x-ratelimit-reset': String(r.resetAt) };
  return { headers, error: r.allowed ? undefined : rateLimited(r.retryAfter) };
}

type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * The handler of one endpoint under a prefix. The only difference between the
 * two prefixes is authentication, decided here, once for every route:
 * /api/v1 takes HTTP Basic only (a cookie is never looked at); /json takes the
 * session cookie only, and a request that is not GET/HEAD must also pass the
 * CSRF check. Everything after that (parameters, handler, body bytes) is shared.
 */
function endpointHandler(app: AppCtx, ep: AnyEndpoint, authMemo: Map<string, AuthMemo>, prefix: string): RouteHandler {
  const limited = !RATE_LIMIT_EXEMPT.has(`${ep.method} ${ep.path}`);
  const viaSession = prefix === JSON_PREFIX;
  const route = prefix + ep.path;
  const parse = paramParser(ep.params as ParamDefs);
  const { rateLimitPerUser, rateLimitPerIp } = app.config;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const req = request as ParleyRequest;
    req.parleyInHandler = true;
    req.parleyRoute = route;
    let session: SessionAuth | undefined;
    if (viaSession) {
      // Zulip answers a missing session before looking at CSRF (MissingAuthenticationError, then csrf_protect).
      session = ep.auth === 'user' ? await requireSession(app, req) : await sessionOf(app, req);
      checkJsonCsrf(req, session);
    }
    const files: UploadedFile[] = [];
    const body = flatten(req.body, files);
    const query = flatten(req.query, null);
    const rawBody = req.parleyRawBody;
    const clientName = viaSession ? 'website' : clientNameOf(req.headers['user-agent']);
    let ctx: PublicCtx | AuthedCtx;
    if (ep.auth === 'user') {
      const { caller, row } = session ?? memoizedAuth(app, authMemo, req.headers.authorization) ?? (await authenticateMemo(app, authMemo, req.headers.authorization));
      noteUser(req, caller.id);
      ctx = { app, req, reply, files, rawBody, clientName, user: caller, userRow: row };
      if (limited && rateLimitPerUser > 0) await applyRateLimit(app, reply, `api:user:${caller.id}`, rateLimitPerUser);
    } else if (ep.auth === 'webhook') {
      const { caller, row } = await authenticateWebhook(app, query.api_key ?? body.api_key, req.headers.authorization);
      noteUser(req, caller.id);
      ctx = { app, req, reply, files, rawBody, clientName, user: caller, userRow: row };
      if (limited && rateLimitPerUser > 0) await applyRateLimit(app, reply, `api:user:${caller.id}`, rateLimitPerUser);
    } else {
      ctx = { app, req, reply, files, rawBody, clientName };
      if (limited && rateLimitPerIp > 0) await applyRateLimit(app, reply, `api:ip:${req.ip}`, rateLimitPerIp);
    }
    if (ep.guard) {
      const guarded = ep.guard(ctx as never);
      if (guarded !== undefined) await guarded;
    }
    const parsed = parse({ body, query, path: (req.params ?? NO_FIELDS) as Record<string, string> });
    if (session && ep === updateSettings && parsed.values.new_password !== undefined) {
      const result = await ep.handler(ctx as never, parsed.values);
      await keepSessionAfterPasswordChange(app, session);
      return answer(reply, parsed.ignored, result);
    }
    // Not awaited here: a parked GET /events would otherwise keep this whole
    // frame (ctx, parameters, flattened body and query) alive until it answers.
    // What the answer needs is bound instead (P6, memory per idle client).
    const out: unknown = ep.handler(ctx as never, parsed.values);
    if (out instanceof Promise) return (out as Promise<Record<string, unknown>>).then(answer.bind(null, reply, parsed.ignored));
    return answer(reply, parsed.ignored, out as Record<string, unknown>);
  };
}

/**
 * Whether every path of shape `specific` also matches shape `general`, both split at '/' (':' for
 * a parameter; '*' matches the rest). Errs toward yes: it only decides which 405s need a route of their own.
 */
export function shapeCovers(general: readonly string[], specific: readonly string[]): boolean {
  for (let i = 0; i < general.length; i++) {
    if (general[i] === '*') return true;
    if (i >= specific.length) return false;
    if (general[i] === ':' || specific[i] === '*') continue;
    if (general[i] !== specific[i] || specific[i] === ':') return false;
  }
  return general.length === specific.length;
}

/** Zulip's answer to a wrong method on a known path (its body has no code). */
function methodNotAllowed(reply: FastifyReply, allowed: readonly Method[]): FastifyReply {
  reply.header('allow', allowed.join(', '));
  return sendJson(reply, 405, { result: 'error', msg: 'Method Not Allowed', allowed_methods: allowed });
}

/** Sends a handler's result: the success body, or nothing when the handler answered itself (raw). */
function answer(reply: FastifyReply, ignored: readonly string[], result: Record<string, unknown>): FastifyReply {
  if (!(result instanceof PollAnswer) && 'raw' in result && result.raw === true) return reply;
  return sendSuccessRaw(reply, answerBody(ignored, result));
}

/** The success body of a handler's result (both paths: answer, the lean path). */
function answerBody(ignored: readonly string[], result: Record<string, unknown>): string {
  if (result instanceof SerializedFields) {
    let body = '{"result":"success","msg":"",' + result.json;
    if (ignored.length) body += ',"ignored_parameters_unsupported":' + JSON.stringify(ignored);
    return body + '}\n';
  }
  if (result instanceof PollAnswer) return pollBody(result.eventsJson, result.queue_id, ignored);
  return successBody(result, ignored);
}

/** GET /events: the events are JSON already; spliced into Zulip's body (both paths, and LeanPoll). */
function pollBody(eventsJson: string, queueId: string | undefined, ignored: readonly string[]): string {
  let body = '{"result":"success","msg":"","events":' + eventsJson;
  if (queueId !== undefined) body += ',"queue_id":' + JSON.stringify(queueId);
  if (ignored.length) body += ',"ignored_parameters_unsupported":' + JSON.stringify(ignored);
  return body + '}\n';
}

/** The error answer for a thrown error (both paths), or undefined for an unexpected one (500, logged). */
function clientError(err: unknown, beforeHandler: boolean): JsonableError | undefined {
  if (err instanceof JsonableError) return err;
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.code === 'FST_REQ_FILE_TOO_LARGE' || e.code === 'FST_FILES_LIMIT' || e.code === 'FST_FIELDS_LIMIT' || e.statusCode === 413) {
    return new JsonableError('Request too large', { code: 'REQUEST_TOO_LARGE', status: 413 });
  }
  // PostgreSQL refuses NUL bytes and invalid UTF-8 in text (22021, 22P05): the
  // client sent a string no column can hold, which is a bad request, not a crash.
  if (e.code === '22021' || e.code === '22P05') return new JsonableError('Invalid characters in request', { status: 400 });
  if ((typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) || beforeHandler) {
    // Malformed bodies and headers the framework refused (anything failing before the
    // handler runs is request parsing, e.g. truncated multipart): a client error, not a crash.
    return new JsonableError('Malformed request', { status: 400 });
  }
  return undefined;
}

/** Answers a request itself and says true, or says false and leaves it to Fastify. */
type LeanPath = (req: IncomingMessage, res: ServerResponse) => boolean;
/** Requests the lean path answered (tests check that it was taken). */
export const leanStats = { answered: 0 };

/**
 * GET /api/v1/users/me and GET /api/v1/events answered straight from node:http,
 * ahead of Fastify's routing, Request/Reply objects and hooks (P1, P5, P6: they
 * cost about as much as the rest of the request, and a parked poll held them).
 * Only the plain case: GET, no body, a caller the auth memo already holds, and
 * for /users/me no query string, for /events a query string of plain
 * characters (letters, digits, . _ : ~ -) with each name once, which any
 * query-string parser reads alike. Anything else (HEAD, other parameters,
 * new or changed credentials, /json and its session, a trailing slash) goes to
 * Fastify, which answers as always.
 *
 * The answer is the Fastify path's, byte for byte: status; headers in the same
 * order (X-Request-Id, X-RateLimit-*, an error's own headers, the common
 * headers, Content-Length); body; log line and metrics. It goes through the same
 * functions: memoizedAuth, consumeRateLimit, the parameter parser, the
 * endpoint's handler, answerBody / errorFields, logRequest.
 * test/http/lean-path.test.ts compares the two paths. These two handlers read
 * only ctx.app, ctx.user, ctx.userRow and (GET /events) ctx.reply.raw, so no
 * Fastify request or reply is made for them.
 */
function leanPath(app: AppCtx, authMemo: Map<string, AuthMemo>, metrics: Metrics): LeanPath {
  const lean = (ep: AnyEndpoint, withQuery: boolean) => ({
    ep,
    route: API_PREFIX + ep.path,
    withQuery,
    parse: paramParser(ep.params as ParamDefs),
    limit: RATE_LIMIT_EXEMPT.has(`${ep.method} ${ep.path}`) ? 0 : app.config.rateLimitPerUser,
  });
  type Lean = ReturnType<typeof lean>;
  const byPath = new Map<string, Lean>([getOwnUser, getEvents].map((ep) => [API_PREFIX + ep.path, lean(ep, ep === getEvents)]));
  const events: LeanEvents = { app, metrics, route: API_PREFIX + getEvents.path };
  /** The answer to a lean request that threw; `headers` holds X-Request-Id and any rate-limit headers. */
  const failed = (l: Lean, res: ServerResponse, reqId: string, started: number, caller: Caller, headers: (string | number)[], err: unknown): void => {
    const { status, body } = leanError(app, l.route, reqId, headers, err);
    res.writeHead(status, headers);
    res.end(body);
    logRequest(app, metrics, reqId, 'GET', l.route, status, performance.now() - started, caller.id);
  };
  /** A 200 answer: X-Request-Id, the common headers and Content-Length, in that order (no rate limit headers). */
  const succeeded = (l: Lean, res: ServerResponse, reqId: string, started: number, caller: Caller, body: string): void => {
    res.writeHead(200, successHeaders(reqId, body));
    res.end(body);
    logRequest(app, metrics, reqId, 'GET', l.route, 200, performance.now() - started, caller.id);
  };
  /** With rate limiting on: the limiter answers asynchronously (it may be Redis), and its headers come first. */
  const respondLimited = async (l: Lean, query: Record<string, string>, req: IncomingMessage, res: ServerResponse, reqId: string, started: number, caller: Caller, row: UserRow): Promise<void> => {
    const headers: (string | number)[] = ['x-request-id', reqId];
    let body: string;
    try {
      const r = await consumeRateLimit(app, `api:user:${caller.id}`, l.limit);
      for (const k in r.headers) headers.push(k, r.headers[k]!);
      if (r.error) throw r.error;
      const ctx = { app, req: undefined, reply: { raw: res }, files: [], rawBody: undefined, clientName: clientNameOf(req.headers['user-agent']), user: caller, userRow: row };
      const parsed = l.parse({ body: NO_FIELDS, query, path: NO_FIELDS });
      body = answerBody(parsed.ignored, await l.ep.handler(ctx as never, parsed.values as never));
    } catch (err) {
      return failed(l, res, reqId, started, caller, headers, err);
    }
    headers.push(...COMMON_HEADER_LIST, 'content-length', Buffer.byteLength(body));
    res.writeHead(200, headers);
    res.end(body);
    logRequest(app, metrics, reqId, 'GET', l.route, 200, performance.now() - started, caller.id);
  };
  // Connections open on the server, below which one poll phase's requests were all reported by one
  // epoll_wait (libuv polls again within a phase only after a full batch of 1,024 events).
  const TURN_MAX_CONNECTIONS = 512;
  const respond = (l: Lean, query: Record<string, string>, req: IncomingMessage, res: ServerResponse, reqId: string, started: number, caller: Caller, row: UserRow): void => {
    if (l.limit > 0) {
      respondLimited(l, query, req, res, reqId, started, caller, row).catch(() => res.destroy());
      return;
    }
    let parsed: { values: unknown; ignored: readonly string[] };
    let out: unknown;
    try {
      // Not pipelined (a pipelined request waits for its connection: no socket yet), and few connections: see endpoint.ts.
      const server = res.socket === null ? undefined : (res.socket as { server?: { _connections?: unknown } }).server;
      const sameBatch = server !== undefined && typeof server._connections === 'number' && server._connections < TURN_MAX_CONNECTIONS;
      const ctx = { app, req: undefined, reply: { raw: res }, files: [], rawBody: undefined, clientName: clientNameOf(req.headers['user-agent']), user: caller, userRow: row, sameBatch };
      parsed = l.parse({ body: NO_FIELDS, query, path: NO_FIELDS });
      out = l.ep.handler(ctx as never, parsed.values as never);
    } catch (err) {
      return failed(l, res, reqId, started, caller, ['x-request-id', reqId], err);
    }
    // A handler that answers at once (GET /users/me with its state kept) is answered at once, without a promise.
    if (!(out instanceof Promise)) {
      let body: string;
      try {
        body = answerBody(parsed.ignored, out as Record<string, unknown>);
      } catch (err) {
        return failed(l, res, reqId, started, caller, ['x-request-id', reqId], err);
      }
      return succeeded(l, res, reqId, started, caller, body);
    }
    respondLater(l, res, reqId, started, caller, parsed.ignored, out as Promise<Record<string, unknown>>).catch(() => res.destroy());
  };
  /** The answer of a handler that returned a promise (GET /events, GET /users/me before its state is kept). */
  const respondLater = async (l: Lean, res: ServerResponse, reqId: string, started: number, caller: Caller, ignored: readonly string[], pending: Promise<Record<string, unknown>>): Promise<void> => {
    let body: string;
    try {
      body = answerBody(ignored, await pending);
    } catch (err) {
      return failed(l, res, reqId, started, caller, ['x-request-id', reqId], err);
    }
    succeeded(l, res, reqId, started, caller, body);
  };
  return (req, res) => {
    if (req.method !== 'GET' || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return false;
    const url = req.url!;
    const q = url.indexOf('?');
    const l = byPath.get(q < 0 ? url : url.slice(0, q));
    if (l === undefined) return false;
    const polls = l.ep === getEvents && l.limit === 0;
    let query = NO_FIELDS;
    let poll: PlainPoll | undefined;
    if (q >= 0) {
      if (!l.withQuery) return false;
      // The usual poll, read from the URL without a query object (P5); anything else as before.
      if (polls) poll = pollFromUrl(url, q + 1);
      if (poll === undefined) {
        const parsed = plainQuery(url, q + 1);
        if (parsed === undefined) return false;
        query = parsed;
      }
    }
    const auth = memoizedAuth(app, authMemo, req.headers.authorization);
    if (auth === undefined) return false;
    const started = performance.now();
    leanStats.answered++;
    if (polls && pollLean(events, l.parse, poll, query, res, genRequestId(req), started, auth.caller.id)) return true;
    try {
      respond(l, query, req, res, genRequestId(req), started, auth.caller, auth.row);
    } catch {
      res.destroy();
    }
    return true;
  };
}

/** What every lean GET /events answer shares. */
interface LeanEvents {
  readonly app: AppCtx;
  readonly metrics: Metrics;
  readonly route: string;
}

/**
 * GET /events on the lean path, when the query names the queue and the last
 * event id: the getEvents handler's poll (queues.pollInto with the response as
 * the close signal), answered through a LeanPoll record instead of a promise
 * chain and the async `respond` frame. The usual poll comes already read from
 * the URL (pollFromUrl); any other query goes through the endpoint's parameter
 * parser here. Anything else (no queue_id, which registers a queue; no
 * last_event_id; a parameter error) says false and goes through `respond`,
 * which calls the handler. The answer's bytes, headers, log line and metrics
 * are respond's (test/http/lean-path.test.ts).
 */
function pollLean(env: LeanEvents, parse: (src: ParamSource) => Parsed<Record<string, unknown>>, poll: PlainPoll | undefined, query: Record<string, string>, res: ServerResponse, reqId: string, started: number, userId: number): boolean {
  let ignored: readonly string[] = NO_IGNORED;
  if (poll === undefined) {
    let parsed: Parsed<Record<string, unknown>>;
    try {
      parsed = parse({ body: NO_FIELDS, query, path: NO_FIELDS });
    } catch {
      return false;
    }
    const v = parsed.values as { queue_id?: string; last_event_id?: number; dont_block: boolean };
    if (v.queue_id === undefined || v.last_event_id === undefined) return false;
    poll = { queueId: v.queue_id, lastEventId: v.last_event_id, dontBlock: v.dont_block };
    ignored = parsed.ignored;
  }
  env.app.queues.pollInto(userId, poll.queueId, poll.lastEventId, poll.dontBlock, res, new LeanPoll(env, res, reqId, started, userId, ignored));
  return true;
}

const NO_IGNORED: readonly string[] = Object.freeze([]);
/** JSON integers the generic parser reads as these numbers (JSON.parse, then z.int()): -1 or up to 15 digits. */
const PLAIN_EVENT_ID = /^(?:-1|0|[1-9][0-9]{0,14})$/;

interface PlainPoll {
  readonly queueId: string;
  readonly lastEventId: number;
  readonly dontBlock: boolean;
}

/**
 * The characters of a plain query (names and values): what every parser reads alike. One class
 * for plainQuery and pollFromUrl, so that the poll read in place accepts exactly the values
 * plainQuery would.
 */
const PLAIN_CHARS = '[A-Za-z0-9._:~-]';
/** name=value of plain characters (plainQuery). */
const PLAIN_QUERY = new RegExp(`^${PLAIN_CHARS}+=${PLAIN_CHARS}*$`);
/** A value plainQuery accepts (PLAIN_QUERY's right-hand side). */
const PLAIN_VALUE = new RegExp(`^${PLAIN_CHARS}*$`);

/**
 * The usual poll's query, read straight from the URL: queue_id, last_event_id
 * and dont_block (true or false), each at most once, nothing else, values that
 * plainQuery accepts, read as the endpoint's parameter parser reads them
 * (values, defaults, no ignored parameters). undefined for any other query,
 * which then goes through plainQuery and the parameter parser. plainQuery builds
 * an object keyed by the names it has just cut out of the URL, and V8 looks each
 * fresh name up in its string table and adds it through its runtime: about 4% of
 * the server's CPU under the P5 load (docs/performance.md, "fourth session").
 * Here the three names are compared in place; only the values are cut out.
 */
function pollFromUrl(url: string, from: number): PlainPoll | undefined {
  let queueId: string | undefined;
  let last: string | undefined;
  let dontBlock: boolean | undefined;
  let i = from;
  for (;;) {
    let end = url.indexOf('&', i);
    if (end < 0) end = url.length;
    if (url.startsWith('queue_id=', i)) {
      if (queueId !== undefined) return undefined;
      queueId = url.slice(i + 9, end);
      if (!PLAIN_VALUE.test(queueId)) return undefined;
    } else if (url.startsWith('last_event_id=', i)) {
      if (last !== undefined) return undefined;
      last = url.slice(i + 14, end);
      if (!PLAIN_EVENT_ID.test(last)) return undefined;
    } else if (url.startsWith('dont_block=', i)) {
      if (dontBlock !== undefined) return undefined;
      const n = end - (i + 11);
      if (n === 4 && url.startsWith('true', i + 11)) dontBlock = true;
      else if (n === 5 && url.startsWith('false', i + 11)) dontBlock = false;
      else return undefined;
    } else return undefined;
    if (end === url.length) break;
    i = end + 1;
  }
  if (queueId === undefined || last === undefined) return undefined;
  return { queueId, lastEventId: Number(last), dontBlock: dontBlock ?? false };
}

/**
 * One lean GET /events until it is answered: what the answer needs and
 * nothing else (P6: this and the queue's Waiter are what a parked poll adds to
 * node's own request objects). The queues call it once, synchronously, when
 * the poll's events are there (P4: a fan-out writes its answers in one turn,
 * with no promise or microtask per answer).
 */
/**
 * A lean request's error answer, as buildHttpServer's error handler answers an error thrown inside
 * a handler: appends the error's own headers, the common headers and Content-Length to `headers`
 * (which holds X-Request-Id and any rate-limit headers), logs an unexpected error.
 */
function leanError(app: AppCtx, route: string, reqId: string, headers: (string | number)[], err: unknown): { status: number; body: string } {
  const known = clientError(err, false);
  let status: number;
  let body: string;
  if (known) {
    for (const [k, v] of Object.entries(known.headers)) headers.push(k, v);
    status = known.status;
    body = JSON.stringify(errorFields(known)) + '\n';
  } else {
    app.log.error({ reqId, method: 'GET', route, error: loggableError(err) }, 'unhandled error');
    if (process.env.PARLEY_DEBUG_ERRORS) console.error(err);
    status = 500;
    body = JSON.stringify({ result: 'error', msg: 'Internal server error' }) + '\n';
  }
  headers.push(...COMMON_HEADER_LIST);
  // Errors go through Fastify's send on the other path (sendJson), which adds the charset to a JSON string body.
  headers[headers.indexOf('content-type') + 1] = 'application/json; charset=utf-8';
  headers.push('content-length', Buffer.byteLength(body));
  return { status, body };
}

class LeanPoll implements PollSink {
  constructor(
    private readonly env: LeanEvents,
    private readonly res: ServerResponse,
    private readonly reqId: string,
    private readonly started: number,
    private readonly userId: number,
    private readonly ignored: readonly string[],
  ) {}

  answered(eventsJson: string, queueId: string | undefined): void {
    const body = pollBody(eventsJson, queueId, this.ignored);
    this.send(200, successHeaders(this.reqId, body), body);
  }

  /** As respond answers an error thrown by the handler. */
  failed(err: unknown): void {
    const headers: (string | number)[] = ['x-request-id', this.reqId];
    const { status, body } = leanError(this.env.app, this.env.route, this.reqId, headers, err);
    this.send(status, headers, body);
  }

  private send(status: number, headers: (string | number)[], body: string): void {
    const res = this.res;
    try {
      res.writeHead(status, headers);
      res.end(body);
    } catch {
      // The queues answer many polls in one loop: one broken response must not stop the others.
      res.destroy();
      return;
    }
    logRequest(this.env.app, this.env.metrics, this.reqId, 'GET', this.env.route, status, performance.now() - this.started, this.userId);
  }
}

/** name=value&... of plain characters, each name once (read alike by any parser), or undefined. */
function plainQuery(url: string, from: number): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of url.slice(from).split('&')) {
    if (!PLAIN_QUERY.test(part)) return undefined;
    const eq = part.indexOf('=');
    const name = part.slice(0, eq);
    if (name in out || name === '__proto__') return undefined;
    out[name] = part.slice(eq + 1);
  }
  return out;
}

/** See rewriteUrl in buildHttpServer. */
function routeHeadAsGet(req: http.IncomingMessage): string {
  if (req.method === 'HEAD') {
    req.method = 'GET';
    markHead(req);
  }
  return req.url!;
}

/** Stands in for Fastify's schema compilers (no Parley route has a schema, see buildHttpServer). */
function noSchemaCompiler(): never {
  throw new Error('Parley routes declare no JSON schemas: parameters are decoded with zod (http/params.ts)');
}

export async function buildHttpServer(app: AppCtx, opts: { logger?: boolean } = {}): Promise<FastifyInstance> {
  let lean: LeanPath | undefined;
  const fastify = Fastify({
    // The HTTP server Fastify would make (same timeouts), with the lean path ahead of Fastify's handler.
    serverFactory: (handler, opts) => {
      const o = opts as { http?: http.ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
      const server = http.createServer(o.http ?? {}, (req, res) => {
        if (lean === undefined || !lean(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = o.keepAliveTimeout;
      server.requestTimeout = o.requestTimeout;
      server.setTimeout(o.connectionTimeout);
      if (o.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket;
      return server;
    },
    logger: opts.logger === false ? false : (app.log as never),
    // Parameters are decoded with zod (http/params.ts) and answers serialized by Parley, so no
    // route declares a JSON schema: Fastify's default compilers (ajv with its formats, and
    // fast-json-stringify) would be loaded at every start for nothing, 3% of a cold start (P10).
    // A schema given by mistake fails loudly when its route is registered.
    schemaController: { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } },
    bodyLimit: BODY_LIMIT,
    // Fastify registers each route through its plugin loader (avvio), which by default arms
    // and clears a 10 s timer per plugin and per route: some 230 timers, 7% of building the
    // server at start (P10). Parley's plugins are its own and two of Fastify's, all synchronous
    // or promise-based; none waits on the network.
    pluginTimeout: 0,
    // HEAD is answered as GET without a body (below), not by a HEAD route beside each GET route:
    // Fastify's would be some 110 more routes through its router at every start, 11% of a cold
    // start (P10: 368 -> 329 ms, 9 alternated starts).
    exposeHeadRoutes: false,
    // Runs before the router, on every request (served or injected): a HEAD request is routed as
    // the GET it asks about. Node made its response body-less when the request arrived (a
    // ServerResponse for HEAD discards what is written and keeps the headers, Content-Length
    // included), so the GET handler's headers go out and its body does not. A path without GET
    // answers HEAD as it answers GET: 405 with the allowed methods, or 404 (Zulip's rest_dispatch
    // also serves HEAD with the GET view). The request log and metrics still say HEAD (logging.ts).
    rewriteUrl: routeHeadAsGet,
    // X-Request-Id from a proxy when well-formed, else ours; echoed on every response (logging.ts).
    genReqId: genRequestId,
    routerOptions: ROUTER_OPTIONS,
    // Errors the router raises before any route or error handler runs: a path that
    // is not valid percent-encoding, or a path segment past maxParamLength. Zulip's
    // URL patterns would not match either, so both are an unknown URL (404).
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      const code = (err as { code?: string }).code;
      if (code === 'FST_ERR_BAD_URL' || code === 'FST_ERR_MAX_PARAM_LENGTH') return void sendError(reply, notFound());
      return void sendError(reply, new JsonableError('Malformed request', { status: 400 }));
    },
  });

  // Per-request fields on every Request from the start, so requests keep one shape (V8 hidden class).
  fastify.decorateRequest('parleyInHandler', false);
  fastify.decorateRequest('parleyRoute', undefined);
  fastify.decorateRequest('parleyHandler', undefined);
  fastify.decorateRequest('parleyUserId', undefined);
  fastify.decorateRequest('parleyRawBody', undefined);
  fastify.decorateRequest('parleyStaged', undefined);

  // Zulip reads parameters only from form and multipart bodies; any other body
  // (JSON, text) is accepted and ignored rather than rejected.
  fastify.removeAllContentTypeParsers();
  // The raw bytes are kept for incoming webhooks, whose payload is the JSON body itself.
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    (req as ParleyRequest).parleyRawBody = body as Buffer;
    done(null, undefined);
  });
  await fastify.register(formbody, { bodyLimit: BODY_LIMIT });
  // @fastify/multipart reads globalThis.FormData to offer request.formData(), which Parley never calls;
  // node defines FormData as a getter whose first read loads its fetch implementation (undici):
  // 23 ms of a 590 ms cold start (P10). Hidden while the plugin registers, then put back as it was.
  const formData = Object.getOwnPropertyDescriptor(globalThis, 'FormData');
  if (formData?.get) Object.defineProperty(globalThis, 'FormData', { value: undefined, configurable: true, writable: true });
  try {
    await fastify.register(multipart, {
      attachFieldsToBody: true,
      limits: { fileSize: Math.max(FILE_LIMIT, app.config.maxFileUploadSizeMib * 1024 * 1024), fieldSize: BODY_LIMIT, files: 10, fields: 1000 },
      async onFile(this: FastifyRequest, part) {
        // Message uploads stream to a temporary file (memory stays flat whatever the size);
        // other uploads (avatars, emoji) are small and read into memory.
        if (isStagedUploadUrl(this.url)) {
          const staged = await stageStream(app.config.dataDir, part.file);
          ((this as ParleyRequest).parleyStaged ??= []).push(staged);
          (part as unknown as { _staged: StagedFile })._staged = staged;
          return;
        }
        (part as unknown as { _buf: Buffer })._buf = await part.toBuffer();
      },
    });
  } finally {
    if (formData?.get) Object.defineProperty(globalThis, 'FormData', formData);
  }
  // Temporary upload files never outlive their request, whatever happened to it.
  // A callback hook (no promise) since nearly every request has none.
  const dropStaged = (req: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    const staged = (req as ParleyRequest).parleyStaged;
    if (!staged?.length) return done();
    discardStaged(staged.splice(0)).then(() => done(), () => done());
  };
  fastify.addHook('onResponse', dropStaged);
  fastify.addHook('onRequestAbort', (req, done) => dropStaged(req, undefined as never, done));

  // One JSON log line per request, request metrics, and GET /metrics (outside /api/v1).
  const metrics = new Metrics(app);
  registerRequestLogging(fastify, app, metrics);
  registerMetricsRoute(fastify, app, metrics);

  // The API's endpoints are not Fastify routes: /api/v1/* and /json/* are one wildcard route each,
  // dispatched through one router (find-my-way, Fastify's own, with Fastify's options) holding every
  // endpoint by its path under the prefix. Registered one by one, each endpoint was a route through
  // Fastify's plugin loader (its own plugin object, listeners and ticks) and its router: some 160
  // routes at every start (P10), and another ~160 in a second router at the first /json request.
  // Matching is the same (the conventions tests run every path under both prefixes); the lookup runs
  // in the wildcard route's onRequest hook, so the log and metrics name the endpoint's route even
  // when the request fails before its handler (a body over the limit, a malformed multipart body).
  // The router matches parameters by position, so one path shape has one set of methods.
  const byPath = new Map<string, Set<Method>>();
  const seen = new Map<string, string>();
  const authMemo = new Map<string, AuthMemo>();
  lean = leanPath(app, authMemo, metrics);
  const noop = (): void => undefined;
  const apiRouter = FindMyWay(ROUTER_OPTIONS);
  for (const ep of routes) {
    const shape = ep.path.replace(/:[A-Za-z_]+/g, ':');
    const key = `${ep.method} ${shape}`;
    if (seen.has(key)) throw new Error(`route ${ep.method} ${ep.path} duplicates ${seen.get(key)}`);
    seen.set(key, ep.path);
    let viaJson: RouteHandler | undefined;
    const entry: ApiEntry = {
      path: ep.path,
      api: endpointHandler(app, ep, authMemo, API_PREFIX),
      // Incoming webhooks are for services holding a bot's key, never for a browser session (Zulip has no /json/external).
      json: ep.auth === 'webhook' ? () => undefined : () => (viaJson ??= endpointHandler(app, ep, authMemo, JSON_PREFIX)),
    };
    apiRouter.on(ep.method, ep.path, noop, entry);
    if (!byPath.has(shape)) byPath.set(shape, new Set());
    byPath.get(shape)!.add(ep.method);
  }
  // Wrong method on a known path: 405 with the allowed methods (Zulip's body has no code). Answered
  // from the not-found handler by a second router (find-my-way, Fastify's own) holding, for each
  // path shape, the methods it lacks: the same matching as routes of their own, without some 200
  // more routes registered at start (40 ms of a 590 ms cold start, P10). Built at the first miss.
  const samplePath = new Map(routes.map((ep) => [ep.path.replace(/:[A-Za-z_]+/g, ':'), ep.path]));
  const ALL_METHODS: readonly Method[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];
  const shapes = [...byPath].map(([shape, methods]) => ({
    path: samplePath.get(shape)!,
    segments: shape.split('/'),
    methods,
    allowed: [...methods].sort(),
    missing: ALL_METHODS.filter((m) => !methods.has(m)),
  }));
  // Except where a more general shape has the method (GET /users/me/presence would otherwise reach
  // GET /users/:user_id_or_email/presence): those few 405s are routes of their own, as the router
  // prefers the static shape only when it has the method.
  const shadowedShapes = shapes
    .map((shape) => ({ shape, shadowed: shape.missing.filter((m) => shapes.some((other) => other !== shape && other.methods.has(m) && shapeCovers(other.segments, shape.segments))) }))
    .filter(({ shadowed }) => shadowed.length > 0)
    .map(({ shape, shadowed }) => ({ path: shape.path, shadowed, handler: (async (_req, reply) => methodNotAllowed(reply, shape.allowed)) as RouteHandler }));
  for (const { path, shadowed, handler } of shadowedShapes) apiRouter.on(shadowed, path, noop, { path, api: handler, json: () => handler } satisfies ApiEntry);
  // The same table answers OPTIONS as Zulip's rest_dispatch does (before authentication): 204 and
  // an Allow header listing the path's methods, sorted, with HEAD wherever GET is.
  type MethodInfo = { readonly allowed: readonly Method[] } | { readonly allow: string };
  let methodTable: FindMyWay.Instance<FindMyWay.HTTPVersion.V1> | undefined;
  const methodInfo = (req: FastifyRequest): MethodInfo | undefined => {
    if (!methodTable) {
      methodTable = FindMyWay(ROUTER_OPTIONS);
      for (const { path, methods, allowed, missing } of shapes) {
        const allow = [...allowed, ...(methods.has('GET') ? ['HEAD'] : [])].sort().join(', ');
        for (const prefix of [API_PREFIX, JSON_PREFIX]) {
          if (missing.length > 0) methodTable.on(missing, prefix + path, noop, { allowed });
          methodTable.on('OPTIONS', prefix + path, noop, { allow });
        }
      }
    }
    if (req.method !== 'OPTIONS' && !(ALL_METHODS as readonly string[]).includes(req.method)) return undefined;
    return methodTable.find(req.method as Method, req.url)?.store as MethodInfo | undefined;
  };

  // Uploaded avatars (issue 11), outside /api/v1 as in Zulip.
  registerAvatarFiles(fastify, app);
  // The emoji names the mobile app downloads from server_emoji_data_url (issue 18).
  registerEmojiData(fastify);
  // Uploaded files and their thumbnails (issue 15), outside /api/v1 as in Zulip.
  registerUploadFiles(fastify, app);
  // Custom emoji images and the presence state's lifecycle (issue 10).
  registerClientCompat(fastify, app);

  const unmatched = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const info = methodInfo(req);
    if (info === undefined) return sendError(reply, notFound());
    if ('allow' in info) return reply.code(204).header('allow', info.allow).send();
    return methodNotAllowed(reply, info.allowed);
  };
  fastify.setNotFoundHandler(unmatched);

  // /api/v1/* and the web app's mirror of the API under /json/* (every endpoint but incoming webhooks).
  // A path or method the router does not hold gets the not-found handler's answer (404, 405, OPTIONS).
  for (const [prefix, pick] of [
    [API_PREFIX, (e: ApiEntry) => e.api],
    [JSON_PREFIX, (e: ApiEntry) => e.json()],
  ] as const) {
    fastify.route({
      method: [...ALL_METHODS, 'OPTIONS'],
      url: `${prefix}/*`,
      onRequest: (request, _reply, done) => {
        const req = request as ParleyRequest;
        const found = apiRouter.find(req.method as FindMyWay.HTTPMethod, req.url.slice(prefix.length));
        const handler = found === null ? undefined : pick(found.store as ApiEntry);
        if (found === null || handler === undefined) {
          req.parleyRoute = 'unmatched';
        } else {
          req.parleyRoute = prefix + (found.store as ApiEntry).path;
          req.parleyHandler = handler;
          (req as { params: unknown }).params = found.params;
        }
        done();
      },
      handler: async (request, reply) => {
        const handler = (request as ParleyRequest).parleyHandler;
        return handler === undefined ? unmatched(request, reply) : handler(request, reply);
      },
    });
  }

  fastify.setErrorHandler(async (err: unknown, req, reply) => {
    const known = clientError(err, !(req as ParleyRequest).parleyInHandler);
    if (known) return sendError(reply, known);
    // Class, message and the source line only: a stack trace or request data could carry secrets.
    app.log.error({ reqId: req.id, method: requestMethod(req), route: (req as ParleyRequest).parleyRoute ?? req.routeOptions.url, error: loggableError(err) }, 'unhandled error');
    if (process.env.PARLEY_DEBUG_ERRORS) console.error(err);
    return sendJson(reply, 500, { result: 'error', msg: 'Internal server error' });
  });

  // The web app (issue 14): its sign-in routes, and the app itself at / with its assets under /static.
  // After the error handler: the sign-in routes live in a plugin scope, which inherits it when registered.
  await registerSessionRoutes(fastify, app, {
    sendJson,
    limitByAddress: (req, reply) => applyRateLimit(app, reply, `api:ip:${req.ip}`, app.config.rateLimitPerIp),
  });
  registerWebApp(fastify, app);

  return fastify;
}

import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import type { Metrics } from './metrics.js';

/**
 * Request ids, one structured log line per request and request metrics.
 *
 * The log line (pino, level info, msg "request") has the request id, method,
 * route pattern (never the raw URL: query strings carry parameters), status,
 * time in ms and the authenticated user id. Parameters, bodies and headers are
 * never logged, so credentials cannot reach the logs.
 */

/** Ids a proxy may pass in X-Request-Id; anything else is replaced by our own. */
const GOOD_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const PREFIX = randomBytes(4).toString('hex');
let counter = 0;

export function genRequestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && GOOD_ID.test(given)) return given;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${PREFIX}-${counter.toString(36)}`;
}

/** The authenticated user, recorded by the API handler for the log line. */
export function noteUser(req: FastifyRequest, userId: number): void {
  (req as { parleyUserId?: number }).parleyUserId = userId;
}

/** Where an unexpected error was thrown, as "file:line" in our sources, without a stack trace. */
export function errorSite(err: unknown): string | undefined {
  const stack = err instanceof Error ? err.stack : undefined;
  if (!stack) return undefined;
  for (const line of stack.split('\n').slice(1)) {
    const m = /((?:src|dist)\/[^\s():]+:\d+)/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/** An error reduced to what is safe to log: its class, message and code. */
export function loggableError(err: unknown): Record<string, unknown> {
  const e = err as { name?: string; message?: string; code?: unknown };
  return { type: e?.name ?? typeof err, message: String(e?.message ?? err).slice(0, 500), code: e?.code, site: errorSite(err) };
}

const HEAD = Symbol('parley.head');

/** Notes that a request came as HEAD before it was routed as GET (server.ts, routeHeadAsGet). */
export function markHead(raw: object): void {
  (raw as { [HEAD]?: true })[HEAD] = true;
}

/** The method the client sent: HEAD requests are routed as GET. */
export function requestMethod(req: FastifyRequest): string {
  return (req.raw as { [HEAD]?: true })[HEAD] ? 'HEAD' : req.method;
}

export function registerRequestLogging(fastify: FastifyInstance, app: AppCtx, metrics: Metrics): void {
  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('x-request-id', req.id);
    done();
  });
  fastify.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // API routes note their pattern (server.ts); Request.routeOptions builds a new object on every read.
    const r = req as { parleyRoute?: string; parleyUserId?: number };
    logRequest(app, metrics, req.id, requestMethod(req), r.parleyRoute ?? req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime, r.parleyUserId);
    done();
  });
}

/** The request's metrics and log line: the one place both the Fastify path and the lean path (server.ts) go through. */
export function logRequest(app: AppCtx, metrics: Metrics, reqId: string, method: string, route: string, status: number, ms: number, userId: number | undefined): void {
  metrics.observe(method, route, status, ms);
  const log = app.log;
  if (log.isLevelEnabled('info')) {
    const rounded = Math.round(ms * 100) / 100;
    if (!writeRequestLine(log, reqId, method, route, status, rounded, userId)) log.info({ reqId, method, route, status, ms: rounded, userId }, 'request');
  }
}

/**
 * The request line as pino writes it, written here when the logger leaves pino's line
 * as it is (no mixin, log formatter, serializer or stringifier of these keys, hook,
 * message prefix or nested key, a destination without metadata, pino's own info method; its defaults,
 * which buildApp's logger has) and the strings need no escaping: the same bytes
 * ('{"level":30,"time":...,<bindings>,"reqId":...,"msg":"request"}\n', test/http/logging
 * compares them with pino's), without the object, the loop over its keys and the
 * checks pino makes per value (P1: about half of the line's cost). Says false otherwise.
 */
function writeRequestLine(log: AppCtx['log'], reqId: string, method: string, route: string, status: number, ms: number, userId: number | undefined): boolean {
  let plain = plainLoggers.get(log);
  if (plain === undefined) plainLoggers.set(log, (plain = leavesLineAsIs(log)));
  // pino's own info method (its level methods are named LOG), not one put in its place (a test capturing lines).
  if (!plain || log.info.name !== 'LOG' || !Number.isFinite(ms) || !PLAIN_TEXT.test(reqId) || !PLAIN_TEXT.test(method) || !PLAIN_TEXT.test(route)) return false;
  const l = log as unknown as Record<symbol, unknown>;
  let line = (l[S.lsCacheSym] as Record<number, string>)[30]! + (l[S.timeSym] as () => string)() + (l[S.chindingsSym] as string);
  line += ',"reqId":"' + reqId + '","method":"' + method + '","route":"' + route + '","status":' + status + ',"ms":' + ms;
  if (userId !== undefined) line += ',"userId":' + userId;
  (l[S.streamSym] as { write(s: string): unknown }).write(line + ',"msg":"request"' + (l[S.endSym] as string));
  return true;
}

const S = pino.symbols;
/** Printable ASCII without '"' and '\\': what pino writes between quotes unchanged. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const LINE_KEYS = ['reqId', 'method', 'route', 'status', 'ms', 'userId', 'msg', 'err'];
const plainLoggers = new WeakMap<object, boolean>();
function leavesLineAsIs(log: AppCtx['log']): boolean {
  const l = log as unknown as Record<symbol, unknown>;
  const formatters = l[S.formattersSym] as { log?: unknown } | undefined;
  const serializers = (l[S.serializersSym] ?? {}) as Record<string, unknown>;
  const stringifiers = (l[S.stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
  const hooks = (l[S.hooksSym] ?? {}) as { logMethod?: unknown; streamWrite?: unknown };
  const stream = l[S.streamSym] as Record<symbol, unknown> | undefined;
  const lsCache = l[S.lsCacheSym] as Record<number, unknown> | undefined;
  return (
    !l[S.mixinSym] &&
    formatters !== undefined &&
    formatters.log === undefined &&
    LINE_KEYS.every((k) => k === 'err' || serializers[k] === undefined) &&
    Object.keys(stringifiers).length === 0 &&
    stringifiers[S.wildcardFirstSym] === undefined &&
    l[S.messageKeySym] === 'msg' &&
    l[S.errorKeySym] === 'err' &&
    !l[S.nestedKeySym] &&
    !l[(S as unknown as Record<string, symbol>).msgPrefixSym!] &&
    hooks.logMethod === undefined &&
    hooks.streamWrite === undefined &&
    stream !== undefined &&
    typeof (stream as { write?: unknown }).write === 'function' &&
    stream[S.needsMetadataGsym] !== true &&
    lsCache !== undefined &&
    lsCache[30] === '{"level":30' &&
    typeof l[S.timeSym] === 'function' &&
    typeof l[S.chindingsSym] === 'string' &&
    typeof l[S.endSym] === 'string'
  );
}

/** What LineBatch writes to: pino's SonicBoom destination, in its buffer mode (`contentMode: 'buffer'`). */
interface LineSink {
  write(bytes: Buffer): boolean;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

const pendingBatches = new Set<LineBatch>();
/** Room past a batch's size for the line that completes it (a longer line goes out on its own). */
const LINE_ROOM = 16 * 1024;
let exitHooked = false;

/**
 * The log's lines gathered into one UTF-8 buffer per `min` bytes before they reach the
 * destination (P1). SonicBoom, given strings, appends each write to its pending string and
 * measures the UTF-8 length of that whole string every time (a few KB rescanned per line,
 * about 2 us of CPU per request line at P1 rates). Here each line is encoded once, into the
 * batch's buffer, and SonicBoom (in its buffer mode) gets one buffer per batch: no string
 * of the whole batch is joined, measured or encoded again (2026-12-02: joining the lines
 * and encoding the joined string were 5.7% of the server's busy time under P1's load,
 * docs/performance.md). Still asynchronous: SonicBoom writes each batch without blocking.
 * flush() (the periodic flush, close) and process exit pass the partial batch on, then
 * SonicBoom's own exit handler writes what it holds, as before.
 *
 * 32 KB per batch (about 200 request lines): each batch is one write() handed to libuv's
 * thread pool and a completion callback on the event loop, paid per batch rather than per
 * line (docs/performance.md, "fourth session"). A quiet server's lines still go out within
 * the second (the periodic flush).
 */
export class LineBatch {
  /** The batch being filled, UTF-8; a new one per batch (the destination keeps the last until written). */
  private buf: Buffer;
  private used = 0;
  constructor(
    private readonly sink: LineSink,
    private readonly min = 32 * 1024,
  ) {
    this.buf = Buffer.allocUnsafe(min + LINE_ROOM);
    pendingBatches.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.on('exit', () => {
        for (const b of pendingBatches) b.flushSync();
      });
    }
  }
  /** A batch writing to file descriptor `fd` through pino's SonicBoom (asynchronous, in its buffer mode). */
  static onFd(fd: number): LineBatch {
    return new LineBatch(pino.destination({ dest: fd, sync: false, minLength: 4096, contentMode: 'buffer' }) as unknown as LineSink);
  }
  write(line: string): boolean {
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair: 4 bytes for 2 units).
    const most = line.length * 3;
    if (this.used + most > this.buf.length) {
      this.pass();
      if (most > this.buf.length) {
        this.sink.write(Buffer.from(line, 'utf8'));
        return true;
      }
    }
    this.used += this.buf.write(line, this.used, 'utf8');
    if (this.used >= this.min) this.pass();
    return true;
  }
  /** Hands the partial batch to the destination, which writes it asynchronously. */
  flush(cb?: (err?: Error) => void): void {
    this.pass();
    this.sink.flush(cb);
  }
  flushSync(): void {
    this.pass();
    this.sink.flushSync();
  }
  /** Passes what is left on; the batch is no longer flushed at exit (its destination's exit handler still writes). */
  close(): void {
    this.pass();
    pendingBatches.delete(this);
  }
  private pass(): void {
    if (this.used === 0) return;
    const bytes = this.buf.subarray(0, this.used);
    this.buf = Buffer.allocUnsafe(this.min + LINE_ROOM);
    this.used = 0;
    this.sink.write(bytes);
  }
}

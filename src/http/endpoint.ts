import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppCtx, Caller } from '../domain/context.js';
import type { UserRow } from '../store/users.js';
import type { Infer, ParamDefs } from './params.js';
import type { StagedFile } from '../files/staging.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** An uploaded file from a multipart body. */
export interface UploadedFile {
  readonly field: string;
  readonly filename: string;
  readonly mimetype: string;
  readonly data: Buffer;
  /** Issue 15: for POST /user_uploads the bytes are streamed to a temporary file instead of `data`. */
  readonly staged?: StagedFile;
}

export interface PublicCtx {
  readonly app: AppCtx;
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly files: readonly UploadedFile[];
  /** The raw request body when it was not a form or multipart body (webhook JSON payloads). */
  readonly rawBody: Buffer | undefined;
  /** Client name from the User-Agent's "Name/version" prefix (Zulip's message `client`). */
  readonly clientName: string;
  /**
   * Set by the lean path (server.ts) when the request was read from its socket in the
   * current poll phase of the event loop, not pipelined, with few connections open: state
   * read once in that phase may serve it (state/user-extras.ts, maxMessageIdNow).
   */
  readonly sameBatch?: boolean;
}

export interface AuthedCtx extends PublicCtx {
  readonly user: Caller;
  /** The caller's row as read during authentication. */
  readonly userRow: UserRow;
}

/** 'webhook': Zulip's webhook_view (api_key parameter or Basic; incoming-webhook bots allowed). */
export type Auth = 'user' | 'none' | 'webhook';
export type CtxFor<A extends Auth> = A extends 'user' | 'webhook' ? AuthedCtx : PublicCtx;

/**
 * A success payload already serialized: the JSON of its fields without the braces
 * ('"a":1,"b":2'), which the answer splices after "result" and "msg" as it would
 * the fields of an object (server.ts, answerBody). Lets a handler keep a payload's
 * JSON across requests (GET /users/me).
 */
export class SerializedFields {
  readonly [key: string]: unknown;
  constructor(readonly json: string) {}
}

/** What a handler returns: the success payload, or a raw reply it already sent. */
export type HandlerResult = Record<string, unknown> | { readonly raw: true };

export interface Endpoint<P extends ParamDefs = ParamDefs, A extends Auth = Auth> {
  readonly method: Method;
  /** Fastify path syntax relative to /api/v1, e.g. /users/:user_id */
  readonly path: string;
  readonly auth: A;
  /** Role checks that Zulip runs before reading parameters (its decorators). */
  readonly guard?: (ctx: CtxFor<A>) => void | Promise<void>;
  readonly params: P;
  readonly handler: (ctx: CtxFor<A>, params: Infer<P>) => HandlerResult | Promise<HandlerResult>;
}

/** Declares an endpoint with its parameter types inferred. */
export function endpoint<P extends ParamDefs, A extends Auth>(def: Endpoint<P, A>): Endpoint<P, A> {
  return def;
}

export type AnyEndpoint = Endpoint<any, any>;

/**
 * The error catalogue. Every error the API can return is a JsonableError with
 * Zulip's code, HTTP status and message; the HTTP layer alone turns it into
 * {"result":"error","msg","code",...data}. docs/errors.md lists every code and a
 * test keeps it in step with this file.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'REQUEST_VARIABLE_MISSING'
  | 'REQUEST_VARIABLE_INVALID'
  | 'INVALID_JSON'
  | 'BAD_IMAGE'
  | 'BAD_NARROW'
  | 'REALM_UPLOAD_QUOTA'
  | 'CANNOT_DEACTIVATE_LAST_USER'
  | 'CHANNEL_ALREADY_EXISTS'
  | 'STREAM_DOES_NOT_EXIST'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'BAD_EVENT_QUEUE_ID'
  | 'REQUEST_CONFUSING_VAR'
  | 'INVALID_API_KEY'
  | 'RATE_LIMIT_HIT'
  | 'USER_DEACTIVATED'
  | 'REALM_DEACTIVATED'
  | 'PASSWORD_AUTH_DISABLED'
  | 'PASSWORD_RESET_REQUIRED'
  | 'AUTHENTICATION_FAILED'
  | 'UNAUTHORIZED'
  | 'CSRF_FAILED'
  | 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'
  | 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'
  | 'EXPECTATION_MISMATCH'
  | 'SYSTEM_GROUP_REQUIRED'
  | 'CANNOT_DEACTIVATE_GROUP_IN_USE'
  | 'CANNOT_ADMINISTER_CHANNEL'
  | 'NONEXISTENT_SUBDOMAIN'
  | 'REQUEST_TOO_LARGE'
  | 'INVITATION_FAILED'
  | 'NOT_FOUND'
  | 'PUSH_SERVICE_NOT_CONFIGURED'
  | 'UNSUPPORTED_WEBHOOK_EVENT_TYPE'
  | 'MISSING_HTTP_EVENT_HEADER';

/** All codes with the HTTP status they normally travel with (for docs/errors.md). */
export const ERROR_CODES: Readonly<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  REQUEST_VARIABLE_MISSING: 400,
  REQUEST_VARIABLE_INVALID: 400,
  INVALID_JSON: 400,
  BAD_IMAGE: 400,
  BAD_NARROW: 400,
  REALM_UPLOAD_QUOTA: 400,
  CANNOT_DEACTIVATE_LAST_USER: 400,
  CHANNEL_ALREADY_EXISTS: 409,
  STREAM_DOES_NOT_EXIST: 400,
  UNAUTHORIZED_PRINCIPAL: 400,
  BAD_EVENT_QUEUE_ID: 400,
  REQUEST_CONFUSING_VAR: 400,
  INVALID_API_KEY: 401,
  RATE_LIMIT_HIT: 429,
  USER_DEACTIVATED: 401,
  REALM_DEACTIVATED: 401,
  PASSWORD_AUTH_DISABLED: 401,
  PASSWORD_RESET_REQUIRED: 401,
  AUTHENTICATION_FAILED: 401,
  UNAUTHORIZED: 401,
  CSRF_FAILED: 403,
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: 400,
  REACTION_ALREADY_EXISTS: 400,
  REACTION_DOES_NOT_EXIST: 400,
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: 400,
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: 400,
  EXPECTATION_MISMATCH: 400,
  SYSTEM_GROUP_REQUIRED: 400,
  CANNOT_DEACTIVATE_GROUP_IN_USE: 400,
  CANNOT_ADMINISTER_CHANNEL: 400,
  NONEXISTENT_SUBDOMAIN: 404,
  REQUEST_TOO_LARGE: 413,
  INVITATION_FAILED: 400,
  NOT_FOUND: 404,
  PUSH_SERVICE_NOT_CONFIGURED: 400,
  // Sent with HTTP 200 and result "success" (Zulip's UnsupportedWebhookEventTypeError).
  UNSUPPORTED_WEBHOOK_EVENT_TYPE: 200,
  MISSING_HTTP_EVENT_HEADER: 400,
};

export class JsonableError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    msg: string,
    opts: { code?: ErrorCode; status?: number; data?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(msg);
    this.code = opts.code ?? 'BAD_REQUEST';
    this.status = opts.status ?? 400;
    this.data = opts.data ?? {};
    this.headers = opts.headers ?? {};
  }
}

/** Plain 400 BAD_REQUEST with Zulip's free text. */
export const badRequest = (msg: string): JsonableError => new JsonableError(msg);

export const missingArgument = (name: string): JsonableError =>
  new JsonableError(`Missing '${name}' argument`, { code: 'REQUEST_VARIABLE_MISSING', data: { var_name: name } });

export const confusingArguments = (a: string, b: string): JsonableError =>
  new JsonableError(`Can't decide between '${a}' and '${b}' arguments`, {
    code: 'REQUEST_CONFUSING_VAR',
    data: { var_name1: a, var_name2: b },
  });

export const unauthorized = (msg = 'Not logged in: API authentication or user session required'): JsonableError =>
  new JsonableError(msg, { code: 'UNAUTHORIZED', status: 401, headers: { 'WWW-Authenticate': 'Basic realm="zulip"' } });

export const authenticationFailed = (): JsonableError =>
  new JsonableError('Your username or password is incorrect', { code: 'AUTHENTICATION_FAILED', status: 401 });
export const userDeactivated = (): JsonableError =>
  new JsonableError('Account is deactivated', { code: 'USER_DEACTIVATED', status: 401 });
export const realmDeactivated = (): JsonableError =>
  new JsonableError('This organization has been deactivated', { code: 'REALM_DEACTIVATED', status: 401 });
export const passwordResetRequired = (): JsonableError =>
  new JsonableError('Your password has been disabled and needs to be reset', { code: 'PASSWORD_RESET_REQUIRED', status: 401 });

export const rateLimited = (retryAfterSec: number): JsonableError =>
  new JsonableError('API usage exceeded rate limit', {
    code: 'RATE_LIMIT_HIT',
    status: 429,
    data: { 'retry-after': retryAfterSec },
    headers: { 'Retry-After': String(Math.ceil(retryAfterSec)) },
  });

export const adminRequired = (): JsonableError =>
  new JsonableError('Must be an organization administrator', { code: 'UNAUTHORIZED_PRINCIPAL' });
export const ownerRequired = (): JsonableError =>
  new JsonableError('Must be an organization owner', { code: 'UNAUTHORIZED_PRINCIPAL' });
export const memberRequired = (): JsonableError =>
  new JsonableError('Must be an organization member', { code: 'UNAUTHORIZED_PRINCIPAL' });
export const notForGuests = (): JsonableError =>
  new JsonableError('Not allowed for guest users', { code: 'UNAUTHORIZED_PRINCIPAL' });
export const notForBots = (): JsonableError => badRequest('This endpoint does not accept bot requests.');
export const insufficientPermission = (): JsonableError => badRequest('Insufficient permission');
export const accessDenied = (): JsonableError => new JsonableError('Access denied', { status: 403 });
export const notFound = (msg = 'Not Found'): JsonableError => new JsonableError(msg, { status: 404 });

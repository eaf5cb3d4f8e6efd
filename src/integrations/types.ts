import { badRequest } from '../domain/errors.js';

/**
 * An incoming-webhook integration is a pure function: the decoded JSON body,
 * the request headers (lower-cased names) and the URL parameters in, a
 * message (topic + Markdown) or "unsupported event" out. Sending, URL
 * parameters shared by every integration (stream, topic, only_events,
 * exclude_events) and authentication live in src/http/endpoints/webhooks.ts.
 */
export interface WebhookInput {
  readonly payload: unknown;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Query string and form fields (last value wins). */
  readonly params: Readonly<Record<string, string>>;
  /** Zulip's include_title: true when the URL overrides the topic, so the title moves into the content. */
  readonly includeTitle: boolean;
}

export type WebhookResult =
  /** `event` is Zulip's complete_event_type, matched against only_events / exclude_events. */
  | { readonly kind: 'message'; readonly topic: string; readonly content: string; readonly event?: string }
  /** Several messages from one request (Alertmanager: one per topic and status), sent in order. */
  | { readonly kind: 'messages'; readonly messages: readonly { readonly topic: string; readonly content: string; readonly event?: string }[] }
  /** An event Zulip's integration drops on purpose (e.g. a branch filtered out): success, no message. */
  | { readonly kind: 'ignore' }
  /** UnsupportedWebhookEventTypeError: 200 with result "success" and the event named. */
  | { readonly kind: 'unsupported'; readonly event: string };

export interface Integration {
  /** The URL slug: /api/v1/external/{name}. */
  readonly name: string;
  /** Zulip's webhook_client_name, used in messages ("the GitHub webhook") and the message client. */
  readonly displayName: string;
  /** The integration's own URL parameters (beyond the shared ones). */
  readonly ownParams: readonly string[];
  /** The event names users may put in only_events / exclude_events (README, docs). */
  readonly events: readonly string[];
  handle(input: WebhookInput): WebhookResult;
}

export const message = (topic: string, content: string, event?: string): WebhookResult => ({ kind: 'message', topic, content, event });
export const unsupported = (event: string): WebhookResult => ({ kind: 'unsupported', event });
export const ignore: WebhookResult = { kind: 'ignore' };

type Path = readonly (string | number)[];

function describe(path: Path): string {
  return 'payload' + path.map((s) => (typeof s === 'number' ? `[${s}]` : `["${s}"]`)).join('');
}

/** The value at path, or undefined. */
export function at(obj: unknown, ...path: Path): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/**
 * Required fields, checked as Zulip's WildValue does: a missing key is
 * "<path> is missing", a wrong type "<path> is not a string" (400), never a 500.
 */
export function str(obj: unknown, ...path: Path): string {
  const v = at(obj, ...path);
  if (v === undefined) throw badRequest(`${describe(path)} is missing`);
  if (typeof v !== 'string') throw badRequest(`${describe(path)} is not a string`);
  return v;
}

export function int(obj: unknown, ...path: Path): number {
  const v = at(obj, ...path);
  if (v === undefined) throw badRequest(`${describe(path)} is missing`);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`${describe(path)} is not an integer`);
  return v;
}

export function bool(obj: unknown, ...path: Path): boolean {
  const v = at(obj, ...path);
  if (v === undefined) throw badRequest(`${describe(path)} is missing`);
  if (typeof v !== 'boolean') throw badRequest(`${describe(path)} is not a boolean`);
  return v;
}

export function list(obj: unknown, ...path: Path): unknown[] {
  const v = at(obj, ...path);
  if (v === undefined) throw badRequest(`${describe(path)} is missing`);
  if (!Array.isArray(v)) throw badRequest(`${describe(path)} is not a list`);
  return v;
}

/** An optional string (null and absent alike). */
export function optStr(obj: unknown, ...path: Path): string | null {
  const v = at(obj, ...path);
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw badRequest(`${describe(path)} is not a string`);
  return v;
}

/** Python's json.dumps(value, indent=2): ASCII-only, "\uXXXX" escapes, as Zulip's JSON integration prints. */
export function pythonJsonDumps(value: unknown, indent = 2): string {
  const text = JSON.stringify(value, null, indent) ?? 'null';
  return text.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

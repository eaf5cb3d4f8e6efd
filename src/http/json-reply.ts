import type { FastifyReply } from 'fastify';

/**
 * For hot endpoints that cache serialized JSON: sends a success body whose
 * fields after result/msg are already JSON text, with the headers every API
 * response carries (kept identical to server.ts's sendJson; a test compares them).
 */
export const API_JSON_HEADERS = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'cache-control': 'no-store',
} as const;

export function sendSuccessJson(reply: FastifyReply, fieldsJson: string): FastifyReply {
  // Written to the raw response like server.ts's other success bodies, so the
  // headers (and exact bytes) match every other endpoint's.
  const body = `{"result":"success","msg":"",${fieldsJson}}\n`;
  reply.hijack();
  const headers = reply.getHeaders() as Record<string, string | number | string[]>;
  Object.assign(headers, API_JSON_HEADERS);
  headers['content-length'] = Buffer.byteLength(body);
  reply.raw.writeHead(200, headers);
  reply.raw.end(body);
  return reply;
}

/**
 * A handler's success fields already serialized: the JSON text of an object
 * (braces included), sent as the fields after result and msg exactly as
 * JSON.stringify of the equivalent object would be (server.ts successBody).
 */
export class JsonBody {
  readonly [key: string]: unknown;
  constructor(readonly json: string) {}
}

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies } from './sessions.js';

/**
 * Small server-rendered pages for people who are not signed in yet (sign-up,
 * confirmation links, password reset). No scripts at all, everything
 * escaped, a strict Content-Security-Policy, and a CSRF token in every form
 * (double submit: a random token in an HttpOnly SameSite=Strict cookie and
 * the same token in a hidden field).
 */

export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
export const CSRF_COOKIE = 'parley_csrftoken';
export const CSRF_FIELD = 'csrfmiddlewaretoken';

export function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${esc(title)}</title></head><body><main><h1>${esc(title)}</h1>${body}</main></body></html>\n`;
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', CSP)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .send(html);
}

function cookieValue(req: FastifyRequest, name: string): string | undefined {
  return parseCookies(req.headers.cookie).get(name);
}

/** The hidden CSRF field for a form; sets the cookie when the browser has none yet. */
export function csrfField(req: FastifyRequest, reply: FastifyReply): string {
  let token = cookieValue(req, CSRF_COOKIE);
  if (!token || !/^[A-Za-z0-9_-]{32}$/.test(token)) {
    token = randomBytes(24).toString('base64url');
    reply.header('set-cookie', `${CSRF_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`);
  }
  return `<input type="hidden" name="${CSRF_FIELD}" value="${esc(token)}">`;
}

/** Whether a form post carries the token of its cookie. */
export function csrfValid(req: FastifyRequest, body: Record<string, unknown>): boolean {
  const cookie = cookieValue(req, CSRF_COOKIE);
  const field = body[CSRF_FIELD];
  if (!cookie || typeof field !== 'string' || cookie.length !== field.length) return false;
  return timingSafeEqual(Buffer.from(cookie), Buffer.from(field));
}

export const csrfFailure = (reply: FastifyReply): FastifyReply =>
  page(reply, 403, 'Forbidden', '<p>This form has expired or was not sent from this site. Go back, reload the page and try again.</p>');

export const field = (body: Record<string, unknown> | undefined, name: string): string => {
  const v = body?.[name];
  return typeof v === 'string' ? v : '';
};

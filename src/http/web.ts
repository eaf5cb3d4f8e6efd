import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppCtx } from '../domain/context.js';
import { notFound } from '../domain/errors.js';

/**
 * The web app (issue 14), served by the server itself: no CDN, works offline.
 * web/build.mjs writes dist/web/index.html and dist/web/static/* with content
 * hashes in the names, each with a .gz and .br copy made at build time. The
 * whole build is small (about 2 MB with the compressed copies), so it is read into memory
 * once, by the first request for the app.
 *
 * - The app's pages (/ and the app's own paths) get `Cache-Control: no-cache`
 *   (always revalidated, with an ETag), so a new build is picked up at once.
 * - /static/<name>-<hash>.<ext> is `public, max-age=31536000, immutable`:
 *   a new build has new names.
 * - /static/generated/emoji/images-google-64/<codepoints>.png: the emoji
 *   images of the emoji-datasource-google package, Zulip's path for them.
 */

/** Paths the app routes itself (it keeps the narrow in the #fragment, as Zulip's web app does). */
export const APP_PATHS = ['/', '/login', '/settings'];

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The HTML's Content-Security-Policy. Scripts only from our origin (no inline
 * script, no eval); no plugins, no framing, no <base>; fetches, images, fonts
 * only from our origin (images also data:/blob: for previews of uploads).
 *
 * style-src: stylesheets only from our origin ('self' for <link> and <style>
 * elements), but style ATTRIBUTES are allowed (style-src-attr 'unsafe-inline')
 * because the server's rendered Markdown carries KaTeX output, whose layout
 * lives in inline style="height:...;vertical-align:..." attributes; without
 * them math renders as a jumble. Style attributes cannot run script or load
 * anything outside img-src/font-src, and the server's Markdown sanitizer
 * decides which attributes reach the page; the remaining risk (restyling a
 * message) is the one Zulip accepts too.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "style-src-elem 'self'",
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "media-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly gz: Buffer | undefined;
  readonly br: Buffer | undefined;
  readonly etag: string;
}

interface Build {
  readonly html: Asset;
  readonly files: Map<string, Asset>;
}

function readAsset(file: string): Asset {
  const body = fs.readFileSync(file);
  const opt = (p: string): Buffer | undefined => (fs.existsSync(p) ? fs.readFileSync(p) : undefined);
  return {
    type: TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    body,
    gz: opt(file + '.gz'),
    br: opt(file + '.br'),
    etag: '"' + createHash('sha256').update(body).digest('base64url').slice(0, 27) + '"',
  };
}

/** The build in dir, or undefined while there is none (the app is then answered with a "not built" page). */
export function loadBuild(dir: string): Build | undefined {
  const index = path.join(dir, 'index.html');
  if (!fs.existsSync(index)) return undefined;
  const files = new Map<string, Asset>();
  const staticDir = path.join(dir, 'static');
  const walk = (sub: string): void => {
    for (const ent of fs.readdirSync(path.join(staticDir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${ent.name}` : ent.name;
      if (ent.isDirectory()) walk(rel);
      else if (!/\.(gz|br)$/.test(ent.name)) files.set(rel, readAsset(path.join(staticDir, rel)));
    }
  };
  if (fs.existsSync(staticDir)) walk('');
  return { html: readAsset(index), files };
}

/** br, then gzip, when the client accepts it (q=0 means "not this one"). */
function pickEncoding(req: FastifyRequest, a: Asset): 'br' | 'gzip' | undefined {
  const header = String(req.headers['accept-encoding'] ?? '').toLowerCase();
  const accepts = (name: string): boolean =>
    header.split(',').some((part) => {
      const [token, ...params] = part.trim().split(';');
      return token!.trim() === name && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    });
  if (a.br && accepts('br')) return 'br';
  if (a.gz && accepts('gzip')) return 'gzip';
  return undefined;
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, a: Asset, cacheControl: string): FastifyReply {
  reply.header('content-type', a.type).header('cache-control', cacheControl).header('x-content-type-options', 'nosniff').header('etag', a.etag);
  reply.header('vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  const enc = pickEncoding(req, a);
  if (enc) reply.header('content-encoding', enc);
  return reply.code(200).send(enc === 'br' ? a.br : enc === 'gzip' ? a.gz : a.body);
}

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Parley</title></head>' +
  '<body><h1>The web app is not built</h1><p>Run <code>npm run build</code>, then reload this page.</p></body></html>\n';

export function registerWebApp(http: FastifyInstance, app: AppCtx): void {
  // Read at the first request for the app, not at start: an API-only server never holds the
  // build's 2 MB (with its .gz and .br copies), and a start does not spend the reads and
  // hashes on it (performance.md P7, P10). Until a build exists, look again on each request
  // (a server started before `npm run build` finished).
  let build: Build | undefined;
  const current = (): Build | undefined => (build ??= loadBuild(app.config.webDir));

  const page = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-frame-options', 'DENY').header('referrer-policy', 'same-origin');
    const b = current();
    if (!b) return reply.code(503).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(NOT_BUILT);
    return sendAsset(req, reply, b.html, 'no-cache');
  };
  for (const p of APP_PATHS) http.get(p, page);

  http.get<{ Params: { '*': string } }>('/static/*', async (req, reply) => {
    const a = current()?.files.get(req.params['*']);
    if (!a) throw notFound();
    return sendAsset(req, reply, a, IMMUTABLE);
  });

  const emojiDir = googleEmojiDir();
  const emoji = new Map<string, Asset>();
  http.get<{ Params: { file: string } }>('/static/generated/emoji/images-google-64/:file', async (req, reply) => {
    const file = req.params.file;
    if (!emojiDir || !/^[0-9a-f]+(-[0-9a-f]+)*\.png$/.test(file)) throw notFound();
    let a = emoji.get(file);
    if (!a) {
      const p = path.join(emojiDir, file);
      if (!fs.existsSync(p)) throw notFound();
      a = readAsset(p);
      if (emoji.size < 5000) emoji.set(file, a);
    }
    // Not content-hashed, but an emoji's picture at a code point does not change within a package version.
    return sendAsset(req, reply, a, 'public, max-age=604800');
  });
}

function googleEmojiDir(): string | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve('emoji-datasource-google/package.json');
    const dir = path.join(path.dirname(pkg), 'img', 'google', '64');
    return fs.existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

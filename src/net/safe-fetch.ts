import type dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import { lazyRequire } from '../lazy.js';

// node:https, and TLS with it, loaded at the first https URL rather than at every start (P10:
// with Fastify's and prom-client's, tools/bundle-server.mjs, 2-3% of a cold start).
const https = lazyRequire<typeof import('node:https')>('node:https');
// node:dns likewise, at the first outgoing request.
const resolver = lazyRequire<typeof import('node:dns')>('node:dns');

/**
 * Fetching a page a user linked, for a link preview, without letting a
 * message turn the server into a proxy into its own network (SSRF):
 * - http and https only, at most 3 redirects, each target checked again;
 * - every address the name resolves to must be public: loopback, private,
 *   link-local (cloud metadata), CGNAT, unique-local, multicast and
 *   unspecified ranges are refused, IPv4-mapped IPv6 included;
 * - the connection goes to the very address that was checked (our own
 *   `lookup`), so a second DNS answer cannot swap in a private one;
 * - one deadline for the whole fetch, and a cap on the bytes read.
 */
export interface SafeFetchLimits {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** Which resolved addresses may be connected to (default: public ones only; tests widen it). */
  readonly allowAddress?: (ip: string) => boolean;
}

export interface FetchedPage {
  readonly url: string;
  readonly contentType: string;
  readonly body: string;
}

export class FetchRefused extends Error {}

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => (acc << 8) + Number(part), 0) >>> 0;
}

/** Whether an address may be fetched from: only public unicast addresses. */
export function isPublicAddress(ip: string): boolean {
  if (net.isIPv4(ip)) {
    const n = v4ToInt(ip);
    return !V4_BLOCKED.some(([base, bits]) => ((n ^ v4ToInt(base)) >>> (32 - bits)) === 0);
  }
  if (!net.isIPv6(ip)) return false;
  const lower = ip.toLowerCase();
  const mapped = /^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? /^::(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return isPublicAddress(mapped[1]!);
  if (lower === '::' || lower === '::1') return false;
  const first = parseInt(lower.split(':')[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return false; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return false; // fe80::/10 link local
  if ((first & 0xffc0) === 0xfec0) return false; // fec0::/10 site local (deprecated)
  if ((first & 0xff00) === 0xff00) return false; // multicast
  if (lower.startsWith('64:ff9b:') || lower.startsWith('2001:db8:') || lower.startsWith('2002:')) return false; // NAT64, docs, 6to4
  return true;
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** DNS lookup that refuses names resolving to any address not allowed. */
const guardedLookup = (allow: (ip: string) => boolean) => (hostname: string, options: dns.LookupOptions, cb: LookupCb): void => {
  resolver().lookup(hostname, { all: true }, (err, addresses) => {
    if (err) return cb(err, '');
    if (addresses.length === 0 || addresses.some((a) => !allow(a.address))) {
      return cb(Object.assign(new FetchRefused(`refusing ${hostname}: not a public address`), { code: 'EREFUSED' }), '');
    }
    const first = addresses[0]!;
    if (options.all) return cb(null, [first]);
    return cb(null, first.address, first.family);
  });
};

function fetchOnce(url: URL, limits: SafeFetchLimits, deadline: number): Promise<{ status: number; location?: string; contentType: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const allow = limits.allowAddress ?? isPublicAddress;
    if (net.isIP(host) && !allow(host)) return reject(new FetchRefused('refusing a non-public address'));
    const mod = url.protocol === 'https:' ? https() : http;
    const left = deadline - Date.now();
    if (left <= 0) return reject(new FetchRefused('timed out'));
    const req = mod.get(url, { lookup: guardedLookup(allow) as never, headers: { 'user-agent': 'Mozilla/5.0 (compatible; ParleyLinkPreview)', accept: 'text/html' }, timeout: left }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > limits.maxBytes) {
          // Enough for the head of any page: stop reading, keep what we have.
          chunks.push(c.subarray(0, c.length - (size - limits.maxBytes)));
          res.destroy();
          finish();
          return;
        }
        chunks.push(c);
      });
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) });
      };
      res.on('end', finish);
      res.on('error', (e) => (done ? undefined : reject(e)));
    });
    const timer = setTimeout(() => req.destroy(new FetchRefused('timed out')), left);
    req.on('timeout', () => req.destroy(new FetchRefused('timed out')));
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export async function safeFetchPage(raw: string, limits: SafeFetchLimits): Promise<FetchedPage> {
  const deadline = Date.now() + limits.timeoutMs;
  let url = new URL(raw);
  for (let hop = 0; hop <= 3; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefused('only http and https');
    const r = await fetchOnce(url, limits, deadline);
    if (r.status >= 300 && r.status < 400 && r.location) {
      url = new URL(r.location, url);
      continue;
    }
    if (r.status !== 200) throw new FetchRefused(`status ${r.status}`);
    return { url: url.href, contentType: r.contentType, body: r.body.toString('utf8') };
  }
  throw new FetchRefused('too many redirects');
}

/** A request that ran past its deadline. */
export class FetchTimedOut extends Error {}

export interface PostedAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * One POST (outgoing webhooks) under the same address rules as page fetches:
 * only http/https, every resolved address checked by `allowAddress` (default
 * public ones only) and connected to as checked; no redirects followed (a
 * 3xx is an answer like any other); one deadline for connecting, sending and
 * reading; at most `maxBytes` of the answer kept. Throws FetchRefused for a
 * refused target, FetchTimedOut past the deadline, and the socket's error
 * (ECONNREFUSED, ...) when the connection fails.
 */
export function safePost(raw: string, body: { readonly contentType: string; readonly data: string; readonly userAgent: string }, limits: SafeFetchLimits): Promise<PostedAnswer> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return reject(new FetchRefused('not a URL'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return reject(new FetchRefused('only http and https'));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const allow = limits.allowAddress ?? isPublicAddress;
    if (net.isIP(host) && !allow(host)) return reject(new FetchRefused('refusing a non-public address'));
    const mod = url.protocol === 'https:' ? https() : http;
    const payload = Buffer.from(body.data, 'utf8');
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(e);
    };
    const req = mod.request(
      url,
      {
        method: 'POST',
        lookup: guardedLookup(allow) as never,
        headers: { 'user-agent': body.userAgent, 'content-type': body.contentType, 'content-length': String(payload.length), accept: '*/*' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size >= limits.maxBytes) return;
          chunks.push(c.subarray(0, limits.maxBytes - size));
          size += c.length;
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', fail);
      },
    );
    const timer = setTimeout(() => {
      fail(new FetchTimedOut('timed out'));
      req.destroy();
    }, limits.timeoutMs);
    req.on('error', (e: Error & { code?: string }) => fail(e instanceof FetchRefused || e.code === 'EREFUSED' ? new FetchRefused(e.message) : e));
    req.end(payload);
  });
}

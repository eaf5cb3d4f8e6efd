import fc from 'fast-check';
import type { AnyEndpoint } from '../../src/http/endpoint.js';
import type { FixtureName } from '../support/server.js';

/**
 * fast-check generators for hostile API requests: junk values, malformed
 * bodies in every encoding the server parses, bad credentials and odd paths.
 * A generated request is plain data so a failure can be printed and replayed.
 */
export interface FuzzCase {
  readonly method: string;
  readonly url: string;
  /** Who signs the request: a fixture user, nobody, or a literal Authorization header. */
  readonly auth: { kind: 'user'; name: FixtureName } | { kind: 'none' } | { kind: 'header'; value: string };
  readonly headers: Record<string, string>;
  readonly payload?: string | Buffer;
  /** The route the case was generated for ("METHOD /path"). */
  readonly route: string;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

const FIXED_VALUES = [
  '', ' ', '\u0000', 'a\u0000b', 'null', 'true', 'false', 'True', '[]', '{}', '[1,2]', '[1,"a"]', '{"a":1}', '-1', '0', '1', '2', '3',
  '10', '2147483647', '2147483648', '-2147483649', '4294967296', '9007199254740993', '1e309', '-1e309', '-0', '1.5', 'NaN', 'Infinity',
  '"quoted"', '[null]', '[[1]]', '[{}]', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '[[[[[[[[[[]]]]]]]]]]',
  '\ud800', '\udfff', '💥', 'e\u0301', '\u202e', '\ufeff', '<script>alert(1)</script>', "'; DROP TABLE users; --", '%00', '../../etc/passwd',
  'hamlet@zulip.com', 'iago@zulip.com', 'nobody@nowhere', 'Denmark', 'Verona', 'stream:Denmark', '[{"operator":"stream","operand":"Denmark"}]',
  '[{"operator":"search","operand":"x"}]', '[{"operator":"dm","operand":[1,2]}]', '[["stream","Denmark"]]', '[{"operator":1,"operand":null}]',
  'newest', 'oldest', 'first_unread', 'add', 'remove', 'start', 'stop', 'stream', 'private', 'direct', 'channel', 'read', 'starred',
  'active', 'idle', '{"name":"x"}', '{"name":"x","old_value":1,"new":2}', '[{"type":"stream","to":1,"topic":"t","content":"c","timestamp":1}]',
  '{"direct_members":[1],"direct_subgroups":[]}', '{"direct_members":[-1],"direct_subgroups":[99999999999]}', '[{"stream_id":1,"property":"color","value":"#fff"}]',
  '[{"name":"new-channel"}]', '[{"name":""}]', '{"new":1}', '{"new":{"direct_members":[],"direct_subgroups":[]},"old":1}', 'unicode_emoji', '1f600',
  'smile', 'realm_emoji', 'zulip_extra_emoji', '#ff0000', 'https://example.com/{id}', '#(?P<id>[0-9]+)', '(?P<x>', 'America/New_York',
];

/** Over Zulip's length limits (60, 100, 1000, 10000 characters, ...), built once: generating them per case is slow. */
const LONG_STRINGS = [61, 101, 1001, 10_001, 70_000].map((n) => 'x'.repeat(n));
/** Deep nesting and long lists, for JSON parsers and validators. */
const HUGE_VALUES = [
  ...[100, 5_000, 20_000].map((n) => '['.repeat(n) + ']'.repeat(n)),
  ...[100, 5_000].map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  ...[1_000, 20_000].map((n) => JSON.stringify(Array.from({ length: n }, (_, i) => i))),
  JSON.stringify(Array.from({ length: 2_000 }, () => ({ operator: 'search', operand: 'x' }))),
];

const printable = fc.string({ unit: fc.constantFrom(...'abcXYZ019-_.:/ !#$&'.split('')), maxLength: 40 });

/** A parameter value: plausible ids and JSON, junk, huge and deeply nested strings. */
export const junkValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIXED_VALUES) },
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 3, arbitrary: fc.integer({ min: -3, max: 15 }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String) },
  { weight: 2, arbitrary: fc.array(fc.integer({ min: -2, max: 15 }), { maxLength: 5 }).map((a) => JSON.stringify(a)) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 }), fc.constant(null)), { maxLength: 4 }).map((a) => JSON.stringify(a)) },
  { weight: 1, arbitrary: fc.constantFrom(...LONG_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...HUGE_VALUES) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((d) => JSON.stringify(d)) },
);

const pathSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 15 }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '0', '-1', '00', '2147483648', '4294967297', '9007199254740993', '99999999999999999999999', '1e3', '0x10', ' 1', '1%20', 'abc', 'me',
      '%00', '%FF', '%E2%82', '%2F', '..', '%2e%2e', 'hamlet%40zulip.com', 'iago@zulip.com', encodeURIComponent('💥'), '9'.repeat(400),
      'a'.repeat(600), 'example.com', 'zulip.com', 'smile', 'new_emoji', '%5B%5D', 'true', 'null',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s)) },
);

const BAD_AUTH = [
  'Bearer abc',
  'Basic',
  'Basic ',
  'Basic !!!!',
  'Digest username="x"',
  'Basic ' + b64('no-colon'),
  'Basic ' + b64('hamlet@zulip.com:short'),
  'Basic ' + b64('hamlet@zulip.com:' + 'A'.repeat(32)),
  'Basic ' + b64(':'),
  'Basic ' + b64('\u0000:\u0000'),
  'Basic ' + b64('hamlet@zulip.com:' + 'é'.repeat(32)),
  'Basic ' + 'A'.repeat(10_000),
  'Basic ' + b64('x'.repeat(5000) + ':' + 'B'.repeat(32)),
  'basic ' + b64('iago@zulip.com: ' + 'C'.repeat(32) + ' '),
];

const FIXTURES: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot'];
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'];
const ENCODINGS = ['form', 'form', 'form', 'query', 'json', 'json-broken', 'none', 'form-charset', 'form-raw'] as const;
const GARBAGE_TYPES = [
  'text/plain', 'application/octet-stream', 'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="unterminated',
  'application/x-www-form-urlencoded; charset=utf-16', 'foo/bar;;;', 'application/json', 'application/json; charset=latin1', '*/*', 'text/html',
  'application/x-www-form-urlencoded', 'application/xml',
];

function paramNames(ep: AnyEndpoint): string[] {
  const names: string[] = [];
  for (const [name, def] of Object.entries(ep.params as Record<string, { aliases: readonly string[]; inPath: boolean }>)) {
    if (!def.inPath) names.push(name, ...def.aliases);
  }
  return names;
}

function fillPath(path: string, segs: readonly string[]): string {
  let i = 0;
  return path.replace(/:[A-Za-z_]+|\*/g, () => segs[i++ % segs.length] ?? '1');
}

function multipartBody(pairs: readonly (readonly [string, string])[], boundary: string, withFile: boolean): Buffer {
  const chunks: Buffer[] = [];
  for (const [k, v] of pairs) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k.replaceAll('"', '%22')}"\r\n\r\n${v}\r\n`));
  }
  if (withFile) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`));
    chunks.push(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 1, 2, 3]));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** One hostile request aimed at a route of the table. */
export function fuzzCase(routes: readonly AnyEndpoint[]): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      routeIndex: fc.nat({ max: routes.length - 1 }),
      methodSwap: fc.option(fc.constantFrom(...METHODS), { freq: 12 }),
      segs: fc.array(pathSegment, { minLength: 2, maxLength: 2 }),
      pathTweak: fc.option(fc.constantFrom('/', '//', '/extra', '?', '%00', '/..', '.json', '?a=1&a=2'), { freq: 15 }),
      picks: fc.array(fc.tuple(fc.nat(), junkValue), { maxLength: 6 }),
      extras: fc.array(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'a[b]', 'x', 'api_key', 'user_id'), junkValue), { maxLength: 1 }),
      duplicate: fc.boolean(),
      body: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...ENCODINGS).map((kind) => ({ kind, cut: 1, withFile: false, bytes: new Uint8Array(), type: '' })) },
        {
          weight: 2,
          arbitrary: fc.record({ kind: fc.constant('multipart' as const), cut: fc.constantFrom(1, 1, 0, 0.3, 0.6, 0.9, 0.99), withFile: fc.boolean(), bytes: fc.constant(new Uint8Array()), type: fc.constant('') }),
        },
        {
          weight: 1,
          arbitrary: fc.record({ kind: fc.constant('garbage' as const), cut: fc.constant(1), withFile: fc.constant(false), bytes: fc.uint8Array({ maxLength: 120 }), type: fc.constantFrom(...GARBAGE_TYPES) }),
        },
      ),
      auth: fc.oneof(
        { weight: 14, arbitrary: fc.constantFrom(...FIXTURES).map((name) => ({ kind: 'user' as const, name })) },
        { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
        { weight: 1, arbitrary: fc.constantFrom(...BAD_AUTH).map((value) => ({ kind: 'header' as const, value })) },
      ),
      requestId: fc.option(printable, { freq: 8 }),
      acceptHtml: fc.boolean(),
    })
    .map((g): FuzzCase => {
      const ep = routes[g.routeIndex]!;
      const method = g.methodSwap ?? ep.method;
      const names = paramNames(ep);
      const pairs: (readonly [string, string])[] = [];
      for (const [pick, value] of g.picks) if (names.length) pairs.push([names[pick % names.length]!, value]);
      pairs.push(...g.extras);
      // The same key twice, with another value: the last one wins, as in Django's QueryDict.
      if (g.duplicate && pairs.length) pairs.push([pairs[0]![0], pairs[pairs.length - 1]![1]]);
      let url = '/api/v1' + fillPath(ep.path, g.segs) + (g.pathTweak ?? '');
      const headers: Record<string, string> = {};
      if (g.requestId !== null) headers['x-request-id'] = g.requestId;
      if (g.acceptHtml && g.auth.kind === 'none') headers.accept = 'text/html';
      let payload: string | Buffer | undefined;
      const form = (): string => {
        const usp = new URLSearchParams();
        for (const [k, v] of pairs) usp.append(k, v);
        return usp.toString();
      };
      const bodyless = method === 'GET' || method === 'HEAD';
      const encoding = bodyless && g.body.kind !== 'garbage' ? 'query' : g.body.kind;
      switch (encoding) {
        case 'query': {
          const q = form();
          if (q) url += (url.includes('?') ? '&' : '?') + q;
          break;
        }
        case 'form':
          headers['content-type'] = 'application/x-www-form-urlencoded';
          payload = form();
          break;
        case 'form-charset':
          headers['content-type'] = 'application/x-www-form-urlencoded; charset=iso-8859-1';
          payload = form();
          break;
        case 'form-raw':
          headers['content-type'] = 'application/x-www-form-urlencoded';
          payload = pairs.map(([k, v]) => `${k}=${v}`).join('&') + '&%ZZ=%E2%82&&=&=x&%';
          break;
        case 'multipart': {
          const boundary = 'fuzz' + pairs.length;
          let buf = multipartBody(pairs, boundary, g.body.withFile);
          if (g.body.cut < 1) buf = buf.subarray(0, Math.floor(buf.length * g.body.cut));
          headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
          payload = buf;
          break;
        }
        case 'json':
          headers['content-type'] = 'application/json';
          payload = JSON.stringify(Object.fromEntries(pairs));
          break;
        case 'json-broken':
          headers['content-type'] = 'application/json';
          payload = '{"broken": [1, 2';
          break;
        case 'garbage':
          headers['content-type'] = g.body.type;
          payload = Buffer.from(g.body.bytes);
          break;
        case 'none':
          break;
      }
      return { method, url, auth: g.auth, headers, payload, route: `${ep.method} ${ep.path}` };
    });
}

/** A failing case in a form that can be pasted into a test. */
export function describeCase(c: FuzzCase): string {
  const p = c.payload === undefined ? undefined : Buffer.isBuffer(c.payload) ? `<${c.payload.length} bytes> ${JSON.stringify(c.payload.subarray(0, 200).toString('latin1'))}` : c.payload;
  const short = (s: string): string => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);
  return `${c.method} ${short(c.url)} as=${JSON.stringify(c.auth).slice(0, 80)} headers=${JSON.stringify(c.headers)} payload=${p === undefined ? '-' : short(p)}`;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyEndpoint } from '../../src/http/endpoint.js';
import { p, type Param } from '../../src/http/params.js';
import { routes } from '../../src/http/routes.js';
import { fingerprinter, fingerprintDiff, type Fingerprinter } from '../resilience/fingerprint.js';
import { createChannel, sendChannelMessage } from '../support/messages.js';
import { startTestServer, type Res, type TestServer } from '../support/server.js';

/**
 * Every id a request carries is bounds-checked (issue 17). Walking the route
 * table as test/security/route-matrix.test.ts and test/resilience/fuzz.test.ts
 * do, every id parameter of every route (declared with p.id / p.idList /
 * p.pathId, and path segments named like ids) gets 0, -1, 2^31, 2^53, 1e3,
 * "abc" and a 300-digit number, alone and inside a JSON list. Expected:
 * Zulip's error envelope (4xx, a code), never a 5xx, and a refused write
 * leaves the database as it was. Narrow operands that name ids (id, sender,
 * dm, channel, with, dm-including) get the same values.
 *
 * A new route cannot skip this: a parameter whose name says it is an id must
 * be declared with the id types, or the first test fails (and the second
 * proves that check catches a route declaring an id as a plain integer).
 */

const HOSTILE = ['0', '-1', '2147483648', '9007199254740992', '1e3', 'abc', '9'.repeat(300)];
const HOSTILE_LISTS = [...HOSTILE.map((v) => `[${v === 'abc' ? '"abc"' : v}]`), 'abc'];

/** Parameters named like ids that are not row ids (queue and event counters, client-side ids). */
const NOT_ROW_IDS = new Set(['queue_id', 'local_id', 'last_event_id', 'last_update_id', 'presence_last_update_id']);
/** Lists of row ids whose names do not end in _ids. */
const ID_LIST_NAMES = new Set(['to', 'members', 'subgroups', 'add', 'delete', 'add_subgroups', 'delete_subgroups', 'order']);
/** Path segments that take an id or an email (GET /users/{id|email}, presence): walked like ids. */
const ID_OR_EMAIL = new Set(['user_id_or_email']);

type Def = Param<unknown>;
const defs = (ep: AnyEndpoint): [string, Def][] => Object.entries(ep.params as Record<string, Def>);
const key = (ep: { method: string; path: string }): string => `${ep.method} ${ep.path}`;
/** Whether a declaration's schema is a list of integers (zod 4 definitions). */
const isIntList = (def: Def): boolean => {
  const d = (def.schema as unknown as { def?: { type?: string; element?: { def?: { type?: string } } } }).def;
  return d?.type === 'array' && d.element?.def?.type === 'number';
};
const looksLikeId = (name: string, def: Def): boolean => !NOT_ROW_IDS.has(name) && (/(^|_)ids?$/.test(name) || (ID_LIST_NAMES.has(name) && isIntList(def)));
/**
 * Parameters that carry ids among other forms, checked by their handlers
 * (POST /messages `to`: a channel name or id, or user ids or emails): walked too.
 */
const MIXED = new Set(['POST /messages to']);
/** Values Zulip gives a meaning (-1: "disable" for the realm's channel references): success is right. */
const MEANINGFUL: Record<string, readonly string[]> = {
  new_stream_announcements_stream_id: ['-1'],
  signup_announcements_stream_id: ['-1'],
  zulip_update_announcements_stream_id: ['-1'],
  moderation_request_channel_id: ['-1'],
  // GET /messages/matches_narrow: 1e3 parses as 1000, an id a message could have; one that does not exist is
  // simply absent from the answer, as in Zulip.
  msg_ids: ['[1e3]'],
};

/** Parameters that look like ids but are not declared with the id types: must be empty. */
export function undeclaredIds(table: readonly AnyEndpoint[]): string[] {
  const out: string[] = [];
  for (const ep of table) {
    for (const [name, def] of defs(ep)) {
      if (!looksLikeId(name, def) || def.idKind !== undefined || MIXED.has(`${key(ep)} ${name}`)) continue;
      // GET /users/{user_id} takes an id or an email in the same segment.
      if (def.inPath && def.wire === 'raw') continue;
      out.push(`${key(ep)} ${name}`);
    }
  }
  return out;
}

let t: TestServer;
let fp: Fingerprinter;
let channel = 0;
let message = 0;

beforeAll(async () => {
  t = await startTestServer();
  channel = await createChannel(t, 'bounds', ['hamlet', 'polonius', 'iago']);
  message = await sendChannelMessage(t, 'hamlet', channel, 'bounds', 'hello');
  // A profile field, so that a reorder naming only hostile ids is "Invalid order mapping." (Zulip ignores unknown ids there).
  expect((await t.post('/realm/profile_fields', { name: 'Team', field_type: 1 }, 'iago')).status).toBe(200);
  fp = await fingerprinter(t.app.ctx.db, t.app.ctx.store.dialect);
});
afterAll(async () => t?.close());

/** Plausible values for the other parameters, so that requests reach the id lookups. */
function baseline(): Record<string, string> {
  return {
    content: 'x',
    topic: 'bounds',
    topic_name: 'bounds',
    type: 'stream',
    op: 'add',
    flag: 'read',
    emoji_name: 'smile',
    name: 'bounds-x',
    description: 'd',
    pattern: '#(?P<id>[0-9]+)',
    url_template: 'https://example.com/{id}',
    full_name: 'Bounds',
    property: 'color',
    value: '#ffffff',
    status: 'active',
    anchor: 'newest',
    num_before: '0',
    num_after: '0',
    narrow: '[]',
    draft: JSON.stringify({ type: 'stream', to: [channel], topic: 't', content: 'c', timestamp: 1700000000 }),
    title: 'x',
    visibility_policy: '1',
    field_type: '1',
    data: '[]',
    subscriptions: JSON.stringify([{ name: 'bounds' }]),
    new: '1',
  };
}

function fillPath(ep: AnyEndpoint, target: string | undefined, value: string): string {
  return ep.path.replace(/:([A-Za-z_]+)|\*/g, (m, name: string | undefined) => {
    if (name === target) return encodeURIComponent(value);
    if (name === 'user_id' || name === 'user_id_or_email') return String(t.users.othello.id);
    if (name === 'stream_id') return String(channel);
    if (name === 'message_id') return String(message);
    if (name === 'domain') return 'example.com';
    return m === '*' ? 'zzz' : '1';
  });
}

/** Every (route, id parameter) pair of the table. */
function idParams(): { ep: AnyEndpoint; name: string; where: 'path' | 'id' | 'idList' }[] {
  const out: { ep: AnyEndpoint; name: string; where: 'path' | 'id' | 'idList' }[] = [];
  for (const ep of routes) {
    for (const [name, def] of defs(ep)) {
      if (def.inPath && (def.idKind !== undefined || looksLikeId(name, def) || ID_OR_EMAIL.has(name))) out.push({ ep, name, where: 'path' });
      else if (!def.inPath && def.idKind) out.push({ ep, name, where: def.idKind });
      else if (MIXED.has(`${key(ep)} ${name}`)) out.push({ ep, name, where: 'idList' }, { ep, name, where: 'id' });
    }
  }
  return out;
}

function expectZulipError(res: Res, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(400);
  expect(res.body?.result, what).toBe('error');
  expect(typeof res.body?.msg, what).toBe('string');
  if (res.status !== 405) expect(typeof res.body?.code, what).toBe('string');
}

const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

describe('id parameters are declared as ids', () => {
  it('every parameter named like a row id is declared with p.id / p.idList / p.pathId', () => {
    expect(undeclaredIds(routes)).toEqual([]);
  });

  it('the check catches a new route that reads an id as a plain integer', () => {
    const careless: AnyEndpoint = { method: 'GET', path: '/things/:thing_id', auth: 'user', params: { thing_id: p.pathInt(), owner_ids: p.intList(), folder_id: p.int() }, handler: () => ({}) };
    const careful: AnyEndpoint = { method: 'GET', path: '/things/:thing_id', auth: 'user', params: { thing_id: p.pathId(), owner_ids: p.idList(), folder_id: p.id() }, handler: () => ({}) };
    expect(undeclaredIds([careless])).toEqual(['GET /things/:thing_id thing_id', 'GET /things/:thing_id owner_ids', 'GET /things/:thing_id folder_id']);
    expect(undeclaredIds([careful])).toEqual([]);
  });

  it('covers every route with an id parameter', () => {
    const covered = new Set(idParams().map((x) => key(x.ep)));
    // Spot checks across resources: path ids, JSON ids and id lists.
    for (const k of ['GET /users/:user_id', 'PATCH /realm/filters/:filter_id', 'GET /users', 'POST /typing', 'GET /messages', 'PATCH /messages/:message_id', 'POST /user_groups/:user_group_id/members', 'PATCH /realm', 'GET /streams/:stream_id/email_address']) {
      expect(covered.has(k), k).toBe(true);
    }
  });
});

describe('hostile ids: Zulip errors, never a 5xx, nothing written', () => {
  it('every id parameter of every route', async () => {
    const problems: string[] = [];
    let sent = 0;
    for (const { ep, name, where } of idParams()) {
      const values = where === 'idList' ? HOSTILE_LISTS : HOSTILE;
      for (const v of values) {
        const params: Record<string, string> = {};
        const base = baseline();
        for (const [n, def] of defs(ep)) if (!def.inPath && n in base && n !== name) params[n] = base[n]!;
        if (where !== 'path') params[name] = v;
        if (MEANINGFUL[name]?.includes(v)) continue;
        const url = fillPath(ep, where === 'path' ? name : undefined, v);
        const what = `${ep.method} ${url} ${where === 'path' ? '' : `${name}=${v.slice(0, 40)}`}`;
        const before = MUTATING.has(ep.method) ? await fp.take() : undefined;
        const res = await t.request(ep.method, url, params, 'owner');
        sent++;
        try {
          expectZulipError(res, what);
          if (before) expect(fingerprintDiff(before, await fp.take()), `${what} wrote`).toEqual([]);
        } catch (e) {
          problems.push(`${what} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
          if (res.status < 400) await fp.take();
        }
      }
    }
    expect(problems).toEqual([]);
    expect(sent).toBeGreaterThan(300);
  }, 300_000);

  it('narrow operands that name ids', async () => {
    const problems: string[] = [];
    for (const operator of ['id', 'sender', 'dm', 'pm-with', 'channel', 'stream', 'with', 'dm-including', 'group-pm-with']) {
      for (const v of HOSTILE) {
        const operand = v === 'abc' ? 'abc' : v === '1e3' ? 1e3 : Number(v);
        const listy = operator === 'dm' || operator === 'pm-with';
        for (const narrow of [[{ operator, operand: listy ? [operand] : operand }], [[operator, listy ? [operand] : operand]]]) {
          for (const [method, url, extra] of [
            ['GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 }],
            ['POST', '/messages/flags/narrow', { anchor: 'newest', num_before: 1, num_after: 0, op: 'add', flag: 'read' }],
          ] as const) {
            const res = await t.request(method, url, { ...extra, narrow: JSON.stringify(narrow) }, 'hamlet');
            if (res.status >= 500) problems.push(`${method} ${url} ${JSON.stringify(narrow)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
            else expect(['success', 'error']).toContain(res.body?.result);
          }
        }
      }
    }
    const reg = await t.post('/register', { narrow: JSON.stringify([['sender', 2147483648]]) }, 'hamlet');
    expect(reg.status).toBeLessThan(500);
    expect(problems).toEqual([]);
  }, 120_000);
});

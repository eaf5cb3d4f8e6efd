import type { Redis } from 'ioredis';
import type { QueueDescriptor } from './delivery.js';
import { eventJsonWithoutId, type AckResult, type AppendResult, type PollStep, type QueuedEvent, type QueueListener, type QueueStore, type SerializedQueue } from './queue-store.js';
import type { ParleyEvent } from './types.js';

/**
 * Event queues in Redis, shared by every Parley process (scale-out). Same
 * contract and behaviour as MemoryQueueStore; keys under one prefix P:
 *
 *   P q:<id>      hash  d (descriptor JSON), n (next event id), p (newest pruned id),
 *                       l (last connection, ms), t (timeout, s), u (user id), r (realm id), w (1 if watcher)
 *   P e:<id>      list  "<id>;<event JSON>" (the event has no `id` key of its own, so
 *                       its wire form is the JSON with `"id":<id>` spliced in, no parsing) or
 *                       "<id>:<event JSON>" (any event); oldest first; ids are consecutive,
 *                       from p+1 to n-1, so acknowledging is one LTRIM
 *   P u:<user>    set   queue ids of a user
 *   P w:<realm>   set   queue ids of a realm that watch all public channels or a narrow
 *   P exp         zset  queue id -> expiry deadline (last connection + timeout, ms)
 *   P notify      pub/sub channel: {"g":[grown ids],"d":[dropped ids]}
 *
 * Every change is one Lua script, so appends assign ids, enforce the
 * backlog cap and notify atomically, and two processes never interleave
 * inside one queue operation. The notification is published by the script
 * itself: the appending process learns of growth the same way as the others.
 */

const APPEND = `
local P, max, nq = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local payloads = {}
local i = 4 + nq * 2
local np = tonumber(ARGV[i])
for k = 1, np do payloads[k] = ARGV[i + k] end
local grown, dropped, droppedDescs = {}, {}, {}
for k = 0, nq - 1 do
  local id = ARGV[4 + k * 2]
  local refs = ARGV[5 + k * 2]
  local qk, ek = P .. 'q:' .. id, P .. 'e:' .. id
  local meta = redis.call('HMGET', qk, 'n', 'u', 'r', 'd')
  if meta[1] then
    local list = {}
    for ref in string.gmatch(refs, '[^,]+') do list[#list + 1] = tonumber(ref) end
    if redis.call('LLEN', ek) + #list > max then
      redis.call('DEL', qk, ek)
      redis.call('SREM', P .. 'u:' .. meta[2], id)
      redis.call('SREM', P .. 'w:' .. meta[3], id)
      redis.call('ZREM', P .. 'exp', id)
      dropped[#dropped + 1] = id
      droppedDescs[#droppedDescs + 1] = meta[4]
    else
      local n = tonumber(meta[1])
      local items = {}
      for j = 1, #list do items[j] = (n + j - 1) .. payloads[list[j]] end
      redis.call('RPUSH', ek, unpack(items))
      redis.call('HSET', qk, 'n', n + #list)
      grown[#grown + 1] = id
    end
  end
end
if #grown > 0 or #dropped > 0 then
  redis.call('PUBLISH', P .. 'notify', cjson.encode({g = grown, d = dropped}))
end
return {grown, droppedDescs}
`;

/** Acknowledges up to `last` (drops the older entries): 'ok', 'pruned' or 'not_in_queue'. Shared by ACK and POLL. */
const ACKNOWLEDGE_FN = `
local function acknowledge(qk, ek, last, n, pruned)
  if last < pruned then return 'pruned' end
  local upto = math.min(last, n - 1)
  if upto > pruned then
    redis.call('LTRIM', ek, upto - pruned, -1)
    pruned = upto
    redis.call('HSET', qk, 'p', pruned)
  end
  if last ~= pruned then return 'not_in_queue' end
  return 'ok'
end
`;

const ACK = `${ACKNOWLEDGE_FN}
local qk, ek = KEYS[1], KEYS[2]
local last = tonumber(ARGV[1])
local meta = redis.call('HMGET', qk, 'n', 'p')
if not meta[1] then return 'ok' end
return acknowledge(qk, ek, last, tonumber(meta[1]), tonumber(meta[2]))
`;

/** One poll: ownership, acknowledgement (as ACK), the connection time when blocking, and the pending entries. */
const POLL = `${ACKNOWLEDGE_FN}
local qk, ek, ez = KEYS[1], KEYS[2], KEYS[3]
local last, now = tonumber(ARGV[2]), tonumber(ARGV[3])
local meta = redis.call('HMGET', qk, 'n', 'p', 'u', 't')
if not meta[1] or meta[3] ~= ARGV[5] then return {'missing'} end
local acked = acknowledge(qk, ek, last, tonumber(meta[1]), tonumber(meta[2]))
if acked ~= 'ok' then return {acked} end
if ARGV[4] == '1' then
  redis.call('HSET', qk, 'l', now)
  redis.call('ZADD', ez, now + tonumber(meta[4]) * 1000, ARGV[1])
end
local out = redis.call('LRANGE', ek, 0, -1)
table.insert(out, 1, 'ok')
return out
`;

/** The pending entries of every queue named in KEYS (a fan-out's woken polls read in one command). */
const PENDING_MANY = `
local out = {}
for i, k in ipairs(KEYS) do out[i] = redis.call('LRANGE', k, 0, -1) end
return out
`;

const TOUCH = `
local t = redis.call('HGET', KEYS[1], 't')
if not t then return 0 end
local now = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'l', now)
redis.call('ZADD', KEYS[2], now + tonumber(t) * 1000, ARGV[1])
return 1
`;

const CREATE = `
local P, id = ARGV[1], ARGV[2]
local qk = P .. 'q:' .. id
redis.call('DEL', qk, P .. 'e:' .. id)
redis.call('HSET', qk, 'd', ARGV[3], 'n', ARGV[4], 'p', ARGV[5], 'l', ARGV[6], 't', ARGV[7], 'u', ARGV[8], 'r', ARGV[9], 'w', ARGV[10])
redis.call('SADD', P .. 'u:' .. ARGV[8], id)
if ARGV[10] == '1' then redis.call('SADD', P .. 'w:' .. ARGV[9], id) end
redis.call('ZADD', P .. 'exp', tonumber(ARGV[6]) + tonumber(ARGV[7]) * 1000, id)
for k = 11, #ARGV do redis.call('RPUSH', P .. 'e:' .. id, ARGV[k]) end
return 1
`;

const REMOVE = `
local P = ARGV[1]
local out = {}
for k = 2, #ARGV do
  local id = ARGV[k]
  local qk = P .. 'q:' .. id
  local meta = redis.call('HMGET', qk, 'd', 'u', 'r')
  if meta[1] then
    redis.call('DEL', qk, P .. 'e:' .. id)
    redis.call('SREM', P .. 'u:' .. meta[2], id)
    redis.call('SREM', P .. 'w:' .. meta[3], id)
    out[#out + 1] = meta[1]
  end
  redis.call('ZREM', P .. 'exp', id)
end
if #out > 0 then
  local ids = {}
  for k = 2, #ARGV do ids[#ids + 1] = ARGV[k] end
  redis.call('PUBLISH', P .. 'notify', cjson.encode({g = {}, d = {}, r = ids}))
end
return out
`;

type Scripted = Redis & {
  parleyAppend(...args: (string | number)[]): Promise<[string[], string[]]>;
  parleyAck(qk: string, ek: string, last: number): Promise<AckResult>;
  parleyPendingMany(n: number, ...keys: string[]): Promise<string[][]>;
  parleyPoll(qk: string, ek: string, exp: string, id: string, last: number, now: number, block: string, userId: number): Promise<string[]>;
  parleyTouch(qk: string, exp: string, id: string, now: number): Promise<number>;
  parleyCreate(...args: (string | number)[]): Promise<number>;
  parleyRemove(...args: string[]): Promise<string[]>;
};

function defineScripts(r: Redis): Scripted {
  r.defineCommand('parleyAppend', { numberOfKeys: 0, lua: APPEND });
  r.defineCommand('parleyAck', { numberOfKeys: 2, lua: ACK });
  r.defineCommand('parleyPoll', { numberOfKeys: 3, lua: POLL });
  // Variable key count: the first argument says how many keys follow.
  r.defineCommand('parleyPendingMany', { lua: PENDING_MANY });
  r.defineCommand('parleyTouch', { numberOfKeys: 2, lua: TOUCH });
  r.defineCommand('parleyCreate', { numberOfKeys: 0, lua: CREATE });
  r.defineCommand('parleyRemove', { numberOfKeys: 0, lua: REMOVE });
  return r as Scripted;
}

const isWatcher = (d: QueueDescriptor): boolean => d.allPublicStreams || d.narrow.length > 0;

/** An event as stored after its id: ";<JSON>" when its wire form is the JSON with the id spliced in, else ":<JSON>". */
function payloadOf(e: ParleyEvent): string {
  const json = eventJsonWithoutId(e);
  return json === null ? ':' + JSON.stringify(e) : ';' + json;
}

/** Index of the separator after the id (the first character that is not a digit or minus sign). */
function sepIndex(raw: string): number {
  let i = 0;
  for (; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 58 /* : */ || c === 59 /* ; */) break;
  }
  return i;
}

function parseEntry(raw: string): QueuedEvent {
  const sep = sepIndex(raw);
  return { id: Number(raw.slice(0, sep)), event: JSON.parse(raw.slice(sep + 1)) as ParleyEvent };
}

/** The wire JSON of raw entries from index `from` on. */
function entriesJson(raws: readonly string[], from: number): string {
  if (raws.length <= from) return '[]';
  let out = '[' + entryWireJson(raws[from]!);
  for (let i = from + 1; i < raws.length; i++) out += ',' + entryWireJson(raws[i]!);
  return out + ']';
}

/** One entry's wire JSON: JSON.stringify({ ...event, id }), without parsing when the entry allows it. */
function entryWireJson(raw: string): string {
  const sep = sepIndex(raw);
  if (raw.charCodeAt(sep) === 59) {
    // ";{...}": the JSON of an event without its own id key.
    return raw.length - sep === 3 ? `{"id":${raw.slice(0, sep)}}` : `${raw.slice(sep + 1, -1)},"id":${raw.slice(0, sep)}}`;
  }
  const e = parseEntry(raw);
  return JSON.stringify({ ...e.event, id: e.id });
}

/** Descriptors are immutable once created, so each process may remember them (bounded). */
const DESC_CACHE_MAX = 50_000;

export class RedisQueueStore implements QueueStore {
  private readonly r: Scripted;
  private readonly listeners = new Set<QueueListener>();
  private readonly descs = new Map<string, QueueDescriptor>();
  private subscribed: Promise<void> | undefined;

  /**
   * `redis` runs commands; `sub` is a second connection this store puts in
   * subscriber mode for the growth notifications (a connection that
   * subscribes can run nothing else).
   */
  constructor(
    redis: Redis,
    private readonly sub: Redis,
    private readonly prefix: string,
    private readonly maxEvents: number,
  ) {
    this.r = defineScripts(redis);
    sub.on('message', (channel: string, message: string) => {
      if (channel !== this.prefix + 'notify') return;
      const m = JSON.parse(message) as { g: unknown; d: unknown; r?: unknown };
      const arr = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);
      const removed = arr(m.r);
      for (const id of removed) this.descs.delete(id);
      for (const id of arr(m.d)) this.descs.delete(id);
      // A removed queue's parked poll answers with what it has, as in the single-process store.
      const grown = removed.length ? [...arr(m.g), ...removed] : arr(m.g);
      for (const l of this.listeners) l(grown, arr(m.d));
    });
  }

  /** Resolves once the growth notifications are subscribed (call before serving). */
  ready(): Promise<void> {
    this.subscribed ??= this.sub.subscribe(this.prefix + 'notify').then(() => undefined);
    return this.subscribed;
  }

  private remember(d: QueueDescriptor): void {
    if (this.descs.size >= DESC_CACHE_MAX) this.descs.clear();
    this.descs.set(d.id, d);
  }

  async create(desc: QueueDescriptor, now: number): Promise<void> {
    await this.write(desc, 0, -1, now, []);
    this.remember(desc);
  }

  private write(d: QueueDescriptor, next: number, pruned: number, last: number, entries: readonly string[]): Promise<number> {
    return this.r.parleyCreate(this.prefix, d.id, JSON.stringify(d), next, pruned, last, d.timeoutSecs, d.userId, d.realmId, isWatcher(d) ? '1' : '0', ...entries);
  }

  async get(queueId: string): Promise<QueueDescriptor | undefined> {
    const raw = await this.r.hget(this.prefix + 'q:' + queueId, 'd');
    if (raw === null) {
      this.descs.delete(queueId);
      return undefined;
    }
    const cached = this.descs.get(queueId);
    if (cached) return cached;
    const d = JSON.parse(raw) as QueueDescriptor;
    this.remember(d);
    return d;
  }

  /** Descriptors of these queue ids (cached ones without a round trip); ids of vanished queues are skipped. */
  private async describe(ids: readonly string[]): Promise<QueueDescriptor[]> {
    const out: QueueDescriptor[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const d = this.descs.get(id);
      if (d) out.push(d);
      else missing.push(id);
    }
    if (missing.length) {
      const raws = await this.r.pipeline(missing.map((id) => ['hget', this.prefix + 'q:' + id, 'd'])).exec();
      for (const [err, raw] of raws ?? []) {
        if (err || typeof raw !== 'string') continue;
        const d = JSON.parse(raw) as QueueDescriptor;
        this.remember(d);
        out.push(d);
      }
    }
    return out;
  }

  private async members(keys: readonly string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    if (keys.length === 1) return this.r.smembers(keys[0]!);
    const res = await this.r.pipeline(keys.map((k) => ['smembers', k])).exec();
    const ids: string[] = [];
    for (const [err, v] of res ?? []) if (!err && Array.isArray(v)) ids.push(...(v as string[]));
    return ids;
  }

  async forUsers(userIds: readonly number[]): Promise<QueueDescriptor[]> {
    return this.describe(await this.members(userIds.map((u) => this.prefix + 'u:' + u)));
  }

  async watchers(realmId: number): Promise<QueueDescriptor[]> {
    return this.describe(await this.members([this.prefix + 'w:' + realmId]));
  }

  async append(batch: ReadonlyMap<string, readonly ParleyEvent[]>): Promise<AppendResult> {
    // Each distinct event object is serialized once and referenced by number (fan-out shares events).
    const refs = new Map<ParleyEvent, number>();
    const payloads: string[] = [];
    const args: (string | number)[] = [];
    let nq = 0;
    for (const [id, events] of batch) {
      if (events.length === 0) continue;
      const list: number[] = [];
      for (const e of events) {
        let ref = refs.get(e);
        if (ref === undefined) {
          payloads.push(payloadOf(e));
          refs.set(e, (ref = payloads.length));
        }
        list.push(ref);
      }
      args.push(id, list.join(','));
      nq++;
    }
    if (nq === 0) return { grown: [], dropped: [] };
    const [grown, droppedRaw] = await this.r.parleyAppend(this.prefix, this.maxEvents, nq, ...args, payloads.length, ...payloads);
    const dropped = droppedRaw.map((raw) => JSON.parse(raw) as QueueDescriptor);
    for (const d of dropped) this.descs.delete(d.id);
    return { grown, dropped };
  }

  acknowledge(queueId: string, lastEventId: number): Promise<AckResult> {
    return this.r.parleyAck(this.prefix + 'q:' + queueId, this.prefix + 'e:' + queueId, lastEventId);
  }

  async pending(queueId: string): Promise<readonly QueuedEvent[]> {
    return (await this.r.lrange(this.prefix + 'e:' + queueId, 0, -1)).map(parseEntry);
  }

  async pendingJson(queueId: string): Promise<string> {
    return entriesJson(await this.r.lrange(this.prefix + 'e:' + queueId, 0, -1), 0);
  }

  async pendingJsonMany(queueIds: readonly string[]): Promise<string[]> {
    if (queueIds.length === 0) return [];
    const lists = await this.r.parleyPendingMany(queueIds.length, ...queueIds.map((id) => this.prefix + 'e:' + id));
    return lists.map((raws) => entriesJson(raws, 0));
  }

  async pollStep(queueId: string, userId: number, lastEventId: number, block: boolean, now: number): Promise<PollStep> {
    const P = this.prefix;
    const out = await this.r.parleyPoll(P + 'q:' + queueId, P + 'e:' + queueId, P + 'exp', queueId, lastEventId, now, block ? '1' : '0', userId);
    const status = out[0] as 'ok' | 'missing' | 'pruned' | 'not_in_queue';
    return status === 'ok' ? { status, eventsJson: entriesJson(out, 1) } : { status };
  }

  async touch(queueId: string, now: number): Promise<void> {
    await this.r.parleyTouch(this.prefix + 'q:' + queueId, this.prefix + 'exp', queueId, now);
  }

  async remove(queueIds: readonly string[]): Promise<QueueDescriptor[]> {
    if (queueIds.length === 0) return [];
    for (const id of queueIds) this.descs.delete(id);
    const raws = await this.r.parleyRemove(this.prefix, ...queueIds);
    return raws.map((raw) => JSON.parse(raw) as QueueDescriptor);
  }

  async expired(now: number, busy: ReadonlySet<string>): Promise<string[]> {
    const ids = await this.r.zrangebyscore(this.prefix + 'exp', '-inf', now);
    return ids.filter((id) => !busy.has(id));
  }

  count(): Promise<number> {
    return this.r.zcard(this.prefix + 'exp');
  }

  async snapshot(): Promise<SerializedQueue[]> {
    const ids = await this.r.zrange(this.prefix + 'exp', 0, -1);
    const out: SerializedQueue[] = [];
    for (const id of ids) {
      const [[, meta], [, entries]] = (await this.r
        .multi()
        .hmget(this.prefix + 'q:' + id, 'd', 'n', 'p', 'l')
        .lrange(this.prefix + 'e:' + id, 0, -1)
        .exec()) as [[null, (string | null)[]], [null, string[]]];
      if (!meta[0]) continue;
      out.push({
        descriptor: JSON.parse(meta[0]) as QueueDescriptor,
        nextEventId: Number(meta[1]),
        newestPrunedId: Number(meta[2]),
        lastConnection: Number(meta[3]),
        events: entries.map(parseEntry),
      });
    }
    return out;
  }

  async restore(queues: readonly SerializedQueue[]): Promise<void> {
    for (const s of queues) {
      await this.write(s.descriptor, s.nextEventId, s.newestPrunedId, s.lastConnection, s.events.map((e) => `${e.id}${payloadOf(e.event)}`));
      this.remember(s.descriptor);
    }
  }

  subscribe(listener: QueueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

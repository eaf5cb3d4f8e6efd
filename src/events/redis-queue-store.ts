import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { QueueDescriptor } from './delivery.js';
import { eventJsonWithoutId, type AckResult, type AppendedEvents, type AppendResult, type PollStep, type QueuedEvent, type QueueListener, type QueueStore, type SerializedQueue } from './queue-store.js';
import type { ParleyEvent } from './types.js';

/**
 * Event queues in Redis, shared by every Parley process (scale-out). Same
 * contract and behaviour as MemoryQueueStore; keys under one prefix P (the
 * deployment's prefix and QUEUE_LAYOUT):
 *
 *   P q:<id>      hash  d (descriptor JSON), p (newest pruned id),
 *                       t (timeout, s), u (user id), r (realm id), w (1 if watcher),
 *                       o (the process that last parked a poll on it: its notification channel)
 *   P e:<id>      list  ";<event JSON>" (the event has no `id` key of its own, so
 *                       its wire form is the JSON with `"id":<id>` spliced in, no parsing) or
 *                       ":<event JSON>" (any event); oldest first. Ids are consecutive and not
 *                       stored: the entries are p+1 to p+LLEN, the next id is p+1+LLEN, and
 *                       acknowledging is one LTRIM (an append pushes the payloads as they came,
 *                       with no id to splice in and no next id to write: a quarter of its time
 *                       per queue)
 *   P u:<user>    set   queue ids of a user
 *   P w:<realm>   set   queue ids of a realm that watch all public channels or a narrow
 *   P exp         zset  queue id -> expiry deadline (last connection + timeout, ms): the
 *                       last connection is this minus the timeout (not stored twice: one
 *                       write less per poll)
 *   P notify      pub/sub channel of every process: {"g":[],"d":[dropped ids]} (backlog cap) and
 *                 {"g":[],"d":[],"r":[removed ids]}
 *   P n:<process> pub/sub channel of one process (o above): {"g":[grown ids],"d":[]} for the
 *                 queues it parked polls on that another process appended to, and after
 *                 an append three more lines and the payloads: the first new id of each
 *                 grown queue (comma-separated), the payload numbers of each
 *                 (space-separated lists), then one payload per line
 *                 ("<;|:><event JSON>"; JSON has no raw newline). A poll parked on an empty
 *                 queue answers from it. A process hears (and decodes) only its own queues:
 *                 with every growth broadcast, each process decoded every fan-out's ids.
 *                 A queue never polled with blocking has no o and its growth is published
 *                 nowhere (no poll waits on it; the next poll reads the queue). A process that
 *                 died leaves o naming a channel nobody hears: the next poll, on any process,
 *                 reads the queue and takes o over. Another process's poll on a queue
 *                 publishes {"g":[id],"d":[]} (no payload lines) to o: o's parked poll ends
 *                 and o forgets its copy of the queue. The appending process's own part (the
 *                 queues it is o of) is not published: the script's reply carries it (ids,
 *                 first ids and payload numbers; the process has the payloads).
 *
 * The process named in o keeps a copy of the queue (OwnedQueue below) from the
 * notifications, so a client's re-poll there (the common case: one client, one
 * process) acknowledges and parks or answers with no Redis command; what it
 * acknowledged and when it connected are written back within WRITE_BACK_MS.
 *
 * Every change is one Lua script, so appends assign ids, enforce the
 * backlog cap and notify atomically, and two processes never interleave
 * inside one queue operation. The notification is published by the script
 * itself to every other process concerned; the appending process learns of the
 * growth of its own queues from the script's reply.
 */

/**
 * The key layout's name, after the deployment's prefix. A process reads and writes only the queues of
 * its own layout: when the layout changes, so does this, and a process of the new layout never misreads
 * a queue of the old (its clients, polling a queue the new processes do not see, get BAD_EVENT_QUEUE_ID
 * and register again, as after any lost queue). Layout 2 (2026-11-29) stores entries without their ids.
 */
export const QUEUE_LAYOUT = 'queues2:';

const APPEND = `
local P, max, me, spec = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local payloads = {}
for k = 5, #ARGV do payloads[k - 4] = ARGV[k] end
local grown, elsewhere, dropped, droppedDescs = 0, {}, {}, {}
-- owner process -> its part of the notification
local parts, owners = {}, {}
for id, refs in string.gmatch(spec, '(%S+) (%S+)') do
  local qk = P .. 'q:' .. id
  -- The descriptor (d) is read only for a queue being dropped (reading it for every queue copied it into Lua:
  -- most of a fan-out's time).
  local meta = redis.call('HMGET', qk, 'p', 'o')
  if meta[1] then
    local ek = P .. 'e:' .. id
    -- Entries are the payloads as sent (ids follow from the position): no string built per queue.
    -- Most appends give a queue one event: no list, no table of items (a third of the script's time per queue).
    local len, count
    if string.find(refs, ',', 1, true) then
      local items = {}
      for ref in string.gmatch(refs, '[^,]+') do items[#items + 1] = payloads[tonumber(ref)] end
      count = #items
      len = redis.call('RPUSH', ek, unpack(items))
    else
      count = 1
      len = redis.call('RPUSH', ek, payloads[tonumber(refs)])
    end
    -- Past the backlog cap the queue goes, these events with it.
    if len > max then
      local more = redis.call('HMGET', qk, 'u', 'r', 'd')
      redis.call('DEL', qk, ek)
      redis.call('SREM', P .. 'u:' .. more[1], id)
      redis.call('SREM', P .. 'w:' .. more[2], id)
      redis.call('ZREM', P .. 'exp', id)
      dropped[#dropped + 1] = id
      droppedDescs[#droppedDescs + 1] = more[3]
    else
      grown = grown + 1
      local o = meta[2]
      if o ~= me then elsewhere[#elsewhere + 1] = id end
      if o then
        local part = parts[o]
        if not part then
          part = {g = {}, f = {}, l = {}}
          parts[o] = part
          owners[#owners + 1] = o
        end
        part.g[#part.g + 1] = id
        -- The first new id: the entries are p + 1 .. p + len.
        part.f[#part.f + 1] = tonumber(meta[1]) + 1 + len - count
        part.l[#part.l + 1] = refs
      end
    end
  end
end
local all
for _, o in ipairs(owners) do
  -- This process's own part is its reply (below): it has the payloads, and needs no message on its channel.
  if o ~= me then
    local part = parts[o]
    all = all or table.concat(payloads, '\\n')
    -- The header is {"g":[ids],"d":[]} joined by hand: queue ids are base64url (nothing to escape), and cjson took
    -- 5-15% of the script's time per queue.
    redis.call('PUBLISH', P .. 'n:' .. o, '{"g":["' .. table.concat(part.g, '","') .. '"],"d":[]}\\n' .. table.concat(part.f, ',') .. '\\n' .. table.concat(part.l, ' ') .. '\\n' .. all)
  end
end
if #dropped > 0 then redis.call('PUBLISH', P .. 'notify', cjson.encode({g = {}, d = dropped})) end
local mine = parts[me]
if not mine then return {grown, droppedDescs, elsewhere, '', '', ''} end
return {grown, droppedDescs, elsewhere, table.concat(mine.g, ' '), table.concat(mine.f, ','), table.concat(mine.l, ' ')}
`;

/**
 * Acknowledges up to `last` (drops the older entries): 'ok', 'pruned' or 'not_in_queue'. Shared by ACK and
 * POLL_MANY. The queue holds ids pruned + 1 .. pruned + LLEN.
 */
const ACKNOWLEDGE_FN = `
local function acknowledge(qk, ek, last, pruned)
  if last < pruned then return 'pruned' end
  if last > pruned then
    local upto = math.min(last, pruned + redis.call('LLEN', ek))
    if upto > pruned then
      redis.call('LTRIM', ek, upto - pruned, -1)
      pruned = upto
      redis.call('HSET', qk, 'p', pruned)
    end
  end
  if last ~= pruned then return 'not_in_queue' end
  return 'ok'
end
`;

const ACK = `${ACKNOWLEDGE_FN}
local qk, ek = KEYS[1], KEYS[2]
local last = tonumber(ARGV[1])
local p = redis.call('HGET', qk, 'p')
if not p then return 'ok' end
return acknowledge(qk, ek, last, tonumber(p))
`;

/**
 * The poll steps of one event-loop turn, in one script: first the acknowledgements
 * and connection times this process took locally and has not written yet (see
 * RedisQueueStore's owned-queue copies; written before the steps, so each step sees
 * the queue as the process does), then for each poll ownership, acknowledgement (as
 * ACK), the connection time when blocking, and the pending entries. A blocking poll
 * makes this process the queue's notified one (o) and tells the process it takes o
 * from (a poll moving between processes ends the one still parked there, as a new
 * poll does in one process); a non-blocking poll leaves o alone but tells the owner
 * too (it ends the parked poll there, and the owner's copy of the queue is stale).
 * ARGV: prefix, now, this process, the number of written-back records, then
 * (queue id, newest acknowledged id, connection time) per record, then
 * (queue id, user id, last event id, block) per poll. Reply, flat, per poll in order:
 * the status, and when 'ok' the queue's next id, the number of entries and the
 * entries. (One script per poll cost ~20 us of Lua call overhead in Redis and one
 * command in the client, per delivery.) A write-back never lowers an expiry
 * deadline (another process may have recorded a later connection) and, through
 * acknowledge(), never un-prunes.
 */
const POLL_MANY = `${ACKNOWLEDGE_FN}
local P, now, me = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local ez = P .. 'exp'
local nw = tonumber(ARGV[4])
for i = 5, 4 + nw * 3, 3 do
  local id = ARGV[i]
  local qk = P .. 'q:' .. id
  local meta = redis.call('HMGET', qk, 'p', 't')
  if meta[1] then
    acknowledge(qk, P .. 'e:' .. id, tonumber(ARGV[i + 1]), tonumber(meta[1]))
    local deadline = tonumber(ARGV[i + 2]) + tonumber(meta[2]) * 1000
    local cur = redis.call('ZSCORE', ez, id)
    if not cur or tonumber(cur) < deadline then redis.call('ZADD', ez, deadline, id) end
  end
end
local out = {}
for i = 5 + nw * 3, #ARGV, 4 do
  local id = ARGV[i]
  local qk, ek = P .. 'q:' .. id, P .. 'e:' .. id
  local last = tonumber(ARGV[i + 2])
  local meta = redis.call('HMGET', qk, 'p', 'u', 't', 'o')
  if not meta[1] or meta[2] ~= ARGV[i + 1] then
    out[#out + 1] = 'missing'
  else
    local acked = acknowledge(qk, ek, last, tonumber(meta[1]))
    if acked ~= 'ok' then
      out[#out + 1] = acked
    else
      if ARGV[i + 3] == '1' then
        if meta[4] ~= me then
          redis.call('HSET', qk, 'o', me)
          if meta[4] then redis.call('PUBLISH', P .. 'n:' .. meta[4], cjson.encode({g = {id}, d = {}})) end
        end
        redis.call('ZADD', ez, now + tonumber(meta[3]) * 1000, id)
      elseif meta[4] and meta[4] ~= me then
        redis.call('PUBLISH', P .. 'n:' .. meta[4], cjson.encode({g = {id}, d = {}}))
      end
      local entries = redis.call('LRANGE', ek, 0, -1)
      out[#out + 1] = 'ok'
      -- Acknowledged up to last, so the entries are last + 1 .. next - 1.
      out[#out + 1] = last + 1 + #entries
      out[#out + 1] = #entries
      for j = 1, #entries do out[#out + 1] = entries[j] end
    end
  end
end
return out
`;

/**
 * The pending entries of every queue named in ARGV (after the prefix): a fan-out's woken polls read in
 * one command, a single queue's read with one name. Reply: the first entry's id of each queue, then each
 * queue's entries.
 */
const PENDING_MANY = `
local P = ARGV[1]
local firsts, lists = {}, {}
for i = 2, #ARGV do
  local p = redis.call('HGET', P .. 'q:' .. ARGV[i], 'p')
  firsts[i - 1] = (tonumber(p) or 0) + 1
  lists[i - 1] = redis.call('LRANGE', P .. 'e:' .. ARGV[i], 0, -1)
end
return {firsts, lists}
`;

const TOUCH = `
local t = redis.call('HGET', KEYS[1], 't')
if not t then return 0 end
local now = tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(t) * 1000, ARGV[1])
return 1
`;

const CREATE = `
local P, id = ARGV[1], ARGV[2]
local qk = P .. 'q:' .. id
redis.call('DEL', qk, P .. 'e:' .. id)
redis.call('HSET', qk, 'd', ARGV[3], 'p', ARGV[4], 't', ARGV[6], 'u', ARGV[7], 'r', ARGV[8], 'w', ARGV[9])
redis.call('SADD', P .. 'u:' .. ARGV[7], id)
if ARGV[9] == '1' then redis.call('SADD', P .. 'w:' .. ARGV[8], id) end
redis.call('ZADD', P .. 'exp', tonumber(ARGV[5]) + tonumber(ARGV[6]) * 1000, id)
for k = 10, #ARGV do redis.call('RPUSH', P .. 'e:' .. id, ARGV[k]) end
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
  parleyAppend(...args: (string | number)[]): Promise<[number, string[], string[], string, string, string]>;
  parleyAck(qk: string, ek: string, last: number): Promise<AckResult>;
  parleyPendingMany(...args: string[]): Promise<[number[], string[][]]>;
  parleyPollMany(...args: (string | number)[]): Promise<(string | number)[]>;
  parleyTouch(qk: string, exp: string, id: string, now: number): Promise<number>;
  parleyCreate(...args: (string | number)[]): Promise<number>;
  parleyRemove(...args: string[]): Promise<string[]>;
};

function defineScripts(r: Redis): Scripted {
  r.defineCommand('parleyAppend', { numberOfKeys: 0, lua: APPEND });
  r.defineCommand('parleyAck', { numberOfKeys: 2, lua: ACK });
  r.defineCommand('parleyPollMany', { numberOfKeys: 0, lua: POLL_MANY });
  r.defineCommand('parleyPendingMany', { numberOfKeys: 0, lua: PENDING_MANY });
  r.defineCommand('parleyTouch', { numberOfKeys: 2, lua: TOUCH });
  r.defineCommand('parleyCreate', { numberOfKeys: 0, lua: CREATE });
  r.defineCommand('parleyRemove', { numberOfKeys: 0, lua: REMOVE });
  return r as Scripted;
}

const isWatcher = (d: QueueDescriptor): boolean => d.allPublicStreams || d.narrow.length > 0;

/**
 * An event as stored: ";<JSON>" when its wire form is the JSON with the id spliced in, else ":<JSON>".
 * Its id is not stored: it follows from the entry's position (the first is the queue's p + 1).
 */
function payloadOf(e: ParleyEvent): string {
  const json = eventJsonWithoutId(e);
  return json === null ? ':' + JSON.stringify(e) : ';' + json;
}

function parseEntry(raw: string, id: number): QueuedEvent {
  return { id, event: JSON.parse(raw.slice(1)) as ParleyEvent };
}

/** The wire JSON of raw entries from index `from` up to `to` (exclusive; default: the end), the one at `from` having id `firstId`. */
function entriesJson(raws: readonly string[], firstId: number, from = 0, to = raws.length): string {
  if (to <= from) return '[]';
  let out = '[' + entryWireJson(raws[from]!, firstId);
  for (let i = from + 1; i < to; i++) out += ',' + entryWireJson(raws[i]!, firstId + i - from);
  return out + ']';
}

/** One entry's wire JSON: JSON.stringify({ ...event, id }), without parsing when the entry allows it. */
function entryWireJson(raw: string, id: number): string {
  if (raw.charCodeAt(0) === 59 /* ; */) {
    // ";{...}": the JSON of an event without its own id key.
    return raw.length === 3 ? `{"id":${id}}` : `${raw.slice(1, -1)},"id":${id}}`;
  }
  return JSON.stringify({ ...parseEntry(raw, id).event, id });
}

/**
 * The events of one append as its notification carries them (see the key
 * layout above), decoded only when a parked poll asks; or, for the queues the
 * appending process itself is o of, as the append script's reply gives them
 * (first ids and payload numbers) with the payloads the process sent.
 */
class NotifiedAppend implements AppendedEvents {
  private firsts: number[] | undefined;
  private lists: string[] = [];
  private payloads: readonly string[] = [];
  /** Queues that got the same events under the same ids share one answer. */
  private readonly memo = new Map<string, string>();
  constructor(
    private readonly message: string,
    private readonly headerEnd: number,
  ) {}

  /** This process's own part of an append: the reply's first ids ("1,5,...") and payload lists ("1 1,2 ..."), and the payloads sent. */
  static replied(firsts: string, lists: string, payloads: readonly string[]): NotifiedAppend {
    const a = new NotifiedAppend('', 0);
    a.take(firsts, lists, payloads);
    return a;
  }

  private decode(): number[] {
    const lines = this.message.slice(this.headerEnd + 1).split('\n');
    return this.take(lines[0]!, lines[1]!, lines.slice(2));
  }

  private take(firsts: string, lists: string, payloads: readonly string[]): number[] {
    this.lists = lists.split(' ');
    this.payloads = payloads;
    return (this.firsts = firsts.split(',').map(Number));
  }

  /**
   * Adds what the append gave grown[i] to an owned queue's copy: true when the
   * copy is continuous afterwards (the events follow it, or it already had them:
   * a notification read after the reply of a later poll step), false on a gap.
   */
  extend(copy: OwnedQueue, i: number): boolean {
    const firsts = this.firsts ?? this.decode();
    const first = firsts[i];
    const list = this.lists[i];
    if (first === undefined || list === undefined) return false;
    if (list.indexOf(',') < 0) {
      // One event (most appends): no array.
      if (first + 1 <= copy.next) return true;
      if (first !== copy.next) return false;
      copy.entries.push(this.payloads[Number(list) - 1]!);
      copy.next++;
      return true;
    }
    const refs = list.split(',');
    if (first + refs.length <= copy.next) return true;
    if (first !== copy.next) return false;
    for (let j = 0; j < refs.length; j++) copy.entries.push(this.payloads[Number(refs[j]) - 1]!);
    copy.next += refs.length;
    return true;
  }

  json(i: number, firstId: number): string | undefined {
    const firsts = this.firsts ?? this.decode();
    if (firsts[i] !== firstId) return undefined;
    const list = this.lists[i]!;
    const key = `${firstId} ${list}`;
    let json = this.memo.get(key);
    if (json === undefined) {
      json = entriesJson(list.split(',').map((ref) => this.payloads[Number(ref) - 1]!), firstId);
      this.memo.set(key, json);
    }
    return json;
  }
}

/**
 * What this process knows of a queue whose notified process (o) it is, so that
 * a re-poll here needs no Redis command: the entries it holds are exactly those
 * of Redis after `pruned` (acknowledged here) and before `next`, as long as every
 * notification of the queue since the copy was seeded arrived. The copy is
 * seeded from a poll step's reply (which makes this process o), extended by the
 * append notifications, and dropped on anything it cannot follow: a gap in the
 * ids, a notice that another process polled the queue, the queue removed or
 * dropped, an append of this process that was published elsewhere, or the
 * subscriber connection closing.
 */
class OwnedQueue {
  constructor(
    readonly userId: number,
    public next: number,
    public pruned: number,
    public entries: string[],
    /** The newest acknowledged id Redis has (or has been sent): the backlog Redis counts starts after it. */
    public written: number,
  ) {}
  /**
   * Notifications heard and not yet applied (with the queue's index in each): a
   * fan-out only records them, and the re-poll that needs the copy applies them,
   * after the fan-out's answers are written.
   */
  readonly later: NotifiedAppend[] = [];
  readonly laterAt: number[] = [];
}

/** A copy applies what it heard once this many notifications wait (an idle client's copy holds no more). */
const LATER_MAX = 16;

/** A blocking poll step in flight: the notifications its queue got meanwhile, applied to the copy its reply seeds. */
interface Seeding {
  /** Steps in flight for the queue; with more than one, none seeds. */
  steps: number;
  /** Something the copy could not follow happened meanwhile. */
  spoiled: boolean;
  /** Subscriber epoch when the step was asked: a reconnect in between spoils it. */
  readonly epoch: number;
  readonly heard: [NotifiedAppend, number][];
}

/** How long a locally taken acknowledgement and connection time may wait before being written to Redis. */
const WRITE_BACK_MS = 1000;

interface PendingPoll {
  readonly queueId: string;
  readonly userId: number;
  readonly lastEventId: number;
  readonly block: boolean;
  readonly now: number;
  readonly resolve: (step: PollStep) => void;
  readonly reject: (err: unknown) => void;
}

/** Descriptors are immutable once created, so each process may remember them (bounded). */
const DESC_CACHE_MAX = 50_000;

export class RedisQueueStore implements QueueStore {
  private readonly r: Scripted;
  private readonly listeners = new Set<QueueListener>();
  private readonly descs = new Map<string, QueueDescriptor>();
  private subscribed: Promise<void> | undefined;
  /** Poll steps asked for in this event-loop turn (pollStep). */
  private polls: PendingPoll[] = [];
  /** This process's name in o, and its notification channel (P n:<name>). */
  private readonly name = randomBytes(8).toString('hex');
  private readonly channel: string;
  /** Copies of the queues this process is o of (OwnedQueue): their re-polls need no Redis command. */
  private readonly owned = new Map<string, OwnedQueue>();
  /** Replies of this process's own appends whose copies have not followed them yet (followReplies). */
  private replies: [readonly string[], NotifiedAppend][] = [];
  /** Blocking poll steps in flight, whose replies seed copies. */
  private readonly seeding = new Map<string, Seeding>();
  /**
   * Acknowledgements and connection times taken from copies, not yet written to
   * Redis: queue id -> [newest acknowledged id, connection time]. Written within
   * WRITE_BACK_MS, with the next poll script, or before any other command that
   * reads or changes those queues.
   */
  private writeBack = new Map<string, [number, number]>();
  private writeBackTimer: NodeJS.Timeout | undefined;
  /** Subscriber connection state: notifications may be lost while it is down, so copies are dropped and seeds spoiled. */
  private live = true;
  private epoch = 0;
  /** Where this store's keys start: the deployment's prefix, then the layout's (QUEUE_LAYOUT). */
  private readonly prefix: string;

  /**
   * `redis` runs commands; `sub` is a second connection this store puts in
   * subscriber mode for the growth notifications (a connection that
   * subscribes can run nothing else).
   */
  constructor(
    redis: Redis,
    private readonly sub: Redis,
    keyPrefix: string,
    private readonly maxEvents: number,
  ) {
    this.prefix = keyPrefix + QUEUE_LAYOUT;
    this.r = defineScripts(redis);
    this.channel = this.prefix + 'n:' + this.name;
    sub.on('message', (channel: string, message: string) => {
      if (channel !== this.channel && channel !== this.prefix + 'notify') return;
      const nl = message.indexOf('\n');
      const m = JSON.parse(nl < 0 ? message : message.slice(0, nl)) as { g: unknown; d: unknown; r?: unknown };
      const arr = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);
      const removed = arr(m.r);
      for (const id of removed) this.forget(id);
      for (const id of arr(m.d)) this.forget(id);
      const appended = nl < 0 ? undefined : new NotifiedAppend(message, nl);
      if (channel === this.channel) {
        this.followReplies();
        this.follow(arr(m.g), appended);
      }
      // A removed queue's parked poll answers with what it has, as in the single-process store.
      const grown = removed.length ? [...arr(m.g), ...removed] : arr(m.g);
      for (const l of this.listeners) l(grown, arr(m.d), appended);
    });
    // Notifications published while the subscriber is disconnected are lost: no copy survives that.
    sub.on('close', () => {
      this.live = false;
      this.epoch++;
      this.owned.clear();
      for (const s of this.seeding.values()) s.spoiled = true;
    });
    sub.on('ready', () => {
      if (this.live || this.subscribed === undefined) return;
      // ioredis subscribes again on reconnecting; once this (idempotent) subscription answers, so have those.
      void this.sub.subscribe(this.prefix + 'notify', this.channel).then(
        () => {
          if (this.sub.status !== 'ready') return;
          this.live = true;
          this.epoch++;
        },
        () => undefined,
      );
    });
  }

  /** The queue's copy (if any) can no longer be trusted. */
  private forget(id: string): void {
    this.descs.delete(id);
    this.disown(id);
  }

  private disown(id: string): void {
    this.owned.delete(id);
    const s = this.seeding.get(id);
    if (s !== undefined) s.spoiled = true;
  }

  /** The replies of this process's own appends, applied to the copies (see append): before anything reads or extends a copy. */
  private followReplies(): void {
    if (this.replies.length === 0) return;
    const replies = this.replies;
    this.replies = [];
    for (const [ids, appended] of replies) this.follow(ids, appended);
  }

  /** A notification on this process's channel: appends extend the copies; a notice without events means another process polled the queue. */
  private follow(grown: readonly string[], appended: NotifiedAppend | undefined): void {
    if (this.owned.size === 0 && this.seeding.size === 0) return;
    for (let i = 0; i < grown.length; i++) {
      const id = grown[i]!;
      const copy = this.owned.get(id);
      const seed = this.seeding.get(id);
      if (copy === undefined && seed === undefined) continue;
      if (appended === undefined) {
        this.disown(id);
        continue;
      }
      if (copy !== undefined) {
        copy.later.push(appended);
        copy.laterAt.push(i);
        if (copy.later.length >= LATER_MAX) this.catchUp(id, copy);
      }
      if (seed !== undefined) seed.heard.push([appended, i]);
    }
  }

  /** Resolves once the growth notifications are subscribed (call before serving). */
  ready(): Promise<void> {
    this.subscribed ??= this.sub.subscribe(this.prefix + 'notify', this.channel).then(() => undefined);
    return this.subscribed;
  }

  private remember(d: QueueDescriptor): void {
    if (this.descs.size >= DESC_CACHE_MAX) this.descs.clear();
    this.descs.set(d.id, d);
  }

  async create(desc: QueueDescriptor, now: number): Promise<void> {
    await this.write(desc, -1, now, []);
    this.remember(desc);
  }

  /** A queue whose entries (payloads) have ids pruned + 1, pruned + 2, ... */
  private write(d: QueueDescriptor, pruned: number, last: number, entries: readonly string[]): Promise<number> {
    return this.r.parleyCreate(this.prefix, d.id, JSON.stringify(d), pruned, last, d.timeoutSecs, d.userId, d.realmId, isWatcher(d) ? '1' : '0', ...entries);
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

  /** Queue ids in any of these sets: one command (SUNION; a fan-out to N users is one round trip and one reply, not N). */
  private async members(keys: readonly string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    if (keys.length === 1) return this.r.smembers(keys[0]!);
    return this.r.sunion(...keys);
  }

  async forUsers(userIds: readonly number[]): Promise<QueueDescriptor[]> {
    return this.describe(await this.members(userIds.map((u) => this.prefix + 'u:' + u)));
  }

  async watchers(realmId: number): Promise<QueueDescriptor[]> {
    return this.describe(await this.members([this.prefix + 'w:' + realmId]));
  }

  async append(batch: ReadonlyMap<string, readonly ParleyEvent[]>): Promise<AppendResult> {
    // Each distinct event object is serialized once and referenced by number (fan-out shares events).
    // The queues go as one argument, "<id> <refs> <id> <refs> ...": a fan-out to 300 queues as 600
    // arguments cost ioredis 190-290 us of CPU per call to encode, as one 57-69 us (join included).
    const refs = new Map<ParleyEvent, number>();
    const payloads: string[] = [];
    let spec = '';
    for (const [id, events] of batch) {
      if (events.length === 0) continue;
      let list = '';
      for (const e of events) {
        let ref = refs.get(e);
        if (ref === undefined) {
          payloads.push(payloadOf(e));
          refs.set(e, (ref = payloads.length));
        }
        list = list === '' ? String(ref) : list + ',' + ref;
      }
      spec = spec === '' ? id + ' ' + list : spec + ' ' + id + ' ' + list;
    }
    if (spec === '') return { grown: 0, dropped: [] };
    const [grown, droppedRaw, elsewhere, mineIds, mineFirsts, mineLists] = await this.r.parleyAppend(this.prefix, this.maxEvents, this.name, spec, ...payloads);
    const dropped = droppedRaw.map((raw) => JSON.parse(raw) as QueueDescriptor);
    for (const d of dropped) this.descs.delete(d.id);
    if (mineIds !== '') {
      // The grown queues this process is o of: the script published nothing for them (the reply says it all; a
      // message on this process's own channel was read 0.7-1 ms after the reply in a 1,000-queue fan-out). Their
      // parked polls are answered after this turn's I/O (setImmediate), as in process, and only then do the copies
      // follow (1,000 copies took 0.5-2 ms before the wake). Whatever reads or extends a copy first catches up
      // with the replies (followReplies), so the copies see appends in the order their replies and notifications
      // were read; a notification of another process's earlier append read after this reply shows as a gap, and
      // that copy is dropped (its next poll reads the queue).
      const ids = mineIds.split(' ');
      const appended = NotifiedAppend.replied(mineFirsts, mineLists, payloads);
      this.replies.push([ids, appended]);
      setImmediate(() => {
        for (const l of this.listeners) l(ids, [], appended);
        this.followReplies();
      });
    }
    // Grown queues whose notification went to another process (or nowhere): a poll of this
    // process still parked on one (superseded elsewhere, its notice not yet read) is woken here.
    if (elsewhere.length > 0) {
      // ... and a copy this process kept of one is stale (another process is o).
      for (const id of elsewhere) this.disown(id);
      for (const l of this.listeners) l(elsewhere, []);
    }
    return { grown, dropped };
  }

  acknowledge(queueId: string, lastEventId: number): Promise<AckResult> {
    this.writeBackFor(queueId);
    return this.r.parleyAck(this.prefix + 'q:' + queueId, this.prefix + 'e:' + queueId, lastEventId);
  }

  /** One queue's pending entries and the first one's id (after writing back what this process took locally). */
  private async entries(queueId: string): Promise<[number, string[]]> {
    this.writeBackFor(queueId);
    const [[first], [raws]] = await this.r.parleyPendingMany(this.prefix, queueId);
    return [first!, raws!];
  }

  async pending(queueId: string): Promise<readonly QueuedEvent[]> {
    const [first, raws] = await this.entries(queueId);
    return raws.map((raw, i) => parseEntry(raw, first + i));
  }

  async pendingJson(queueId: string): Promise<string> {
    const [first, raws] = await this.entries(queueId);
    return entriesJson(raws, first);
  }

  async pendingJsonMany(queueIds: readonly string[]): Promise<string[]> {
    if (queueIds.length === 0) return [];
    if (this.writeBack.size > 0 && queueIds.some((id) => this.writeBack.has(id))) this.writeBackNow();
    const [firsts, lists] = await this.r.parleyPendingMany(this.prefix, ...queueIds);
    return lists.map((raws, i) => entriesJson(raws, firsts[i]!));
  }

  /**
   * A blocking re-poll of a queue this process holds a copy of is answered from
   * the copy, with no Redis command: it acknowledges there and its
   * acknowledgement and connection time are written back later (writeBack). A
   * late acknowledgement is harmless: every poll carries its last_event_id, and
   * a poll on another process acknowledges from the request. Any other poll
   * (no copy, another user, an id the copy cannot judge, not blocking) is a step
   * of the poll script. Steps are queued into the current batch: the poll steps
   * requested in one event-loop turn (the re-polls of a fan-out's answers arrive
   * together) run as one script after the I/O phase (setImmediate). Steps run in
   * the order asked; any other command asked in the same turn may run before
   * them, as it could if the requests had arrived in the other order.
   */
  pollStep(queueId: string, userId: number, lastEventId: number, block: boolean, now: number): Promise<PollStep> {
    // (A blocking step applies the waiting replies in pollOwned; any other drops the copy.)
    if (block) {
      const step = this.pollOwned(queueId, userId, lastEventId, now);
      if (step !== undefined) return Promise.resolve(step);
    }
    this.owned.delete(queueId);
    const seed = this.seeding.get(queueId);
    if (seed !== undefined) {
      // Two steps in flight (or a non-blocking one, which acknowledges in Redis behind the other's reply): no seed.
      seed.spoiled = true;
      if (block) seed.steps++;
    } else if (block) this.seeding.set(queueId, { steps: 1, spoiled: !this.live, epoch: this.epoch, heard: [] });
    return new Promise<PollStep>((resolve, reject) => {
      if (this.polls.length === 0) setImmediate(this.flushPolls);
      this.polls.push({ queueId, userId, lastEventId, block, now, resolve, reject });
    });
  }

  /**
   * A blocking poll step answered from this process's copy of the queue, at
   * once; undefined (nothing changed) when there is no copy or it cannot judge
   * the poll (another user, an id it does not hold), and pollStep must run.
   */
  pollOwned(queueId: string, userId: number, lastEventId: number, now: number): PollStep | undefined {
    this.followReplies();
    const copy = this.owned.get(queueId);
    if (copy === undefined || (copy.later.length > 0 && !this.catchUp(queueId, copy))) return undefined;
    if (copy.userId !== userId || lastEventId < copy.pruned || lastEventId >= copy.next) return undefined;
    if (lastEventId > copy.pruned) {
      const drop = lastEventId - copy.pruned;
      if (drop >= copy.entries.length) copy.entries.length = 0;
      else copy.entries.splice(0, drop);
      copy.pruned = lastEventId;
    }
    this.noteWriteBack(queueId, copy, now);
    return { status: 'ok', eventsJson: entriesJson(copy.entries, copy.next - copy.entries.length), nextEventId: copy.next };
  }

  /** Applies the notifications a copy heard; false (and the copy dropped) on a gap. */
  private catchUp(queueId: string, copy: OwnedQueue): boolean {
    for (let k = 0; k < copy.later.length; k++) {
      if (!copy.later[k]!.extend(copy, copy.laterAt[k]!)) {
        this.owned.delete(queueId);
        return false;
      }
    }
    copy.later.length = 0;
    copy.laterAt.length = 0;
    return true;
  }

  private noteWriteBack(queueId: string, copy: OwnedQueue, now: number): void {
    const w = this.writeBack.get(queueId);
    if (w === undefined) this.writeBack.set(queueId, [copy.pruned, now]);
    else {
      w[0] = copy.pruned;
      w[1] = now;
    }
    // Redis counts the backlog from the acknowledgements it has (the cap drops a queue past it): never let it lag far.
    if (copy.next - 1 - copy.written > this.maxEvents / 2) this.writeBackNow();
    else if (this.writeBackTimer === undefined) {
      this.writeBackTimer = setTimeout(this.writeBackNow, WRITE_BACK_MS);
      this.writeBackTimer.unref();
    }
  }

  /** The write-back records as poll-script arguments (count first); taking them empties the map. */
  private takeWriteBack(args: (string | number)[]): void {
    args.push(this.writeBack.size);
    if (this.writeBack.size === 0) return;
    for (const [id, [pruned, at]] of this.writeBack) {
      args.push(id, pruned, at);
      const copy = this.owned.get(id);
      if (copy !== undefined) copy.written = pruned;
    }
    this.writeBack = new Map();
    if (this.writeBackTimer !== undefined) {
      clearTimeout(this.writeBackTimer);
      this.writeBackTimer = undefined;
    }
  }

  /** Writes back before a command on this queue (commands on one connection run in order). */
  private writeBackFor(queueId: string): void {
    if (this.writeBack.has(queueId)) this.writeBackNow();
  }

  /** Sends the pending write-back (a poll script without steps); the commands sent after it see it. */
  private sendWriteBack(): Promise<unknown> | undefined {
    if (this.writeBack.size === 0) return undefined;
    const args: (string | number)[] = [this.prefix, Date.now(), this.name];
    this.takeWriteBack(args);
    return this.r.parleyPollMany(...args);
  }

  /** sendWriteBack without waiting. A failure is logged by nobody: the next poll acknowledges again, and only expiry could come up to WRITE_BACK_MS early. */
  private readonly writeBackNow = (): void => {
    this.sendWriteBack()?.catch(() => undefined);
  };

  /** Writes back what is pending and waits for it (shutdown, tests). */
  async flush(): Promise<void> {
    await this.sendWriteBack();
  }

  private readonly flushPolls = (): void => {
    const batch = this.polls;
    this.polls = [];
    const args: (string | number)[] = [this.prefix, batch[batch.length - 1]!.now, this.name];
    this.takeWriteBack(args);
    for (const p of batch) args.push(p.queueId, p.userId, p.lastEventId, p.block ? '1' : '0');
    this.r.parleyPollMany(...args).then(
      (out) => {
        let k = 0;
        for (const p of batch) {
          const status = out[k++] as 'ok' | 'missing' | 'pruned' | 'not_in_queue';
          if (status !== 'ok') {
            if (p.block) this.seeded(p, undefined, undefined);
            p.resolve({ status });
            continue;
          }
          const nextEventId = out[k++] as number;
          const n = out[k++] as number;
          if (p.block) this.seeded(p, nextEventId, (out as string[]).slice(k, k + n));
          p.resolve({ status, eventsJson: entriesJson(out as string[], nextEventId - n, k, k + n), nextEventId });
          k += n;
        }
      },
      (err: unknown) => {
        for (const p of batch) {
          if (p.block) this.seeded(p, undefined, undefined);
          p.reject(err);
        }
      },
    );
  };

  /**
   * A blocking step's reply: this process is now o, Redis held `entries` from
   * lastEventId + 1 to next - 1, and the notifications heard since the step was
   * asked bring the copy up to date (those of appends before the step are
   * already in it).
   */
  private seeded(p: PendingPoll, next: number | undefined, entries: string[] | undefined): void {
    const seed = this.seeding.get(p.queueId);
    if (seed === undefined) return;
    if (--seed.steps <= 0) this.seeding.delete(p.queueId);
    if (next === undefined || entries === undefined || seed.spoiled || seed.epoch !== this.epoch || !this.live) return;
    if (entries.length !== next - 1 - p.lastEventId) return;
    const copy = new OwnedQueue(p.userId, next, p.lastEventId, entries, p.lastEventId);
    for (const [appended, i] of seed.heard) if (!appended.extend(copy, i)) return;
    if (this.owned.size >= DESC_CACHE_MAX) this.owned.clear();
    this.owned.set(p.queueId, copy);
  }

  async touch(queueId: string, now: number): Promise<void> {
    this.writeBackFor(queueId);
    await this.r.parleyTouch(this.prefix + 'q:' + queueId, this.prefix + 'exp', queueId, now);
  }

  async remove(queueIds: readonly string[]): Promise<QueueDescriptor[]> {
    if (queueIds.length === 0) return [];
    for (const id of queueIds) this.forget(id);
    const raws = await this.r.parleyRemove(this.prefix, ...queueIds);
    return raws.map((raw) => JSON.parse(raw) as QueueDescriptor);
  }

  async expired(now: number, busy: ReadonlySet<string>): Promise<string[]> {
    this.writeBackNow();
    const ids = await this.r.zrangebyscore(this.prefix + 'exp', '-inf', now);
    return ids.filter((id) => !busy.has(id));
  }

  count(): Promise<number> {
    return this.r.zcard(this.prefix + 'exp');
  }

  async snapshot(): Promise<SerializedQueue[]> {
    this.writeBackNow();
    const ids = await this.r.zrange(this.prefix + 'exp', 0, -1);
    const out: SerializedQueue[] = [];
    for (const id of ids) {
      const [[, meta], [, entries], [, deadline]] = (await this.r
        .multi()
        .hmget(this.prefix + 'q:' + id, 'd', 'p', 't')
        .lrange(this.prefix + 'e:' + id, 0, -1)
        .zscore(this.prefix + 'exp', id)
        .exec()) as [[null, (string | null)[]], [null, string[]], [null, string | null]];
      if (!meta[0]) continue;
      const pruned = Number(meta[1]);
      out.push({
        descriptor: JSON.parse(meta[0]) as QueueDescriptor,
        nextEventId: pruned + 1 + entries.length,
        newestPrunedId: pruned,
        lastConnection: Number(deadline) - Number(meta[2]) * 1000,
        events: entries.map((raw, i) => parseEntry(raw, pruned + 1 + i)),
      });
    }
    return out;
  }

  async restore(queues: readonly SerializedQueue[]): Promise<void> {
    for (const s of queues) {
      // Ids are consecutive and end at nextEventId - 1 (both stores keep newestPrunedId = that - the count): they follow from the position.
      await this.write(s.descriptor, s.nextEventId - 1 - s.events.length, s.lastConnection, s.events.map((e) => payloadOf(e.event)));
      this.remember(s.descriptor);
    }
  }

  subscribe(listener: QueueListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

import type { Redis } from 'ioredis';
import type { SharedPresence, SharedPresenceChanges } from '../domain/presence-state.js';
import type { PresenceEntry } from '../domain/rules/presence.js';

/**
 * Presence shared by every process through Redis (domain/presence-state.ts
 * keeps a replica in each process). Per realm, three keys:
 *   presence:<realm>:seq  the last update id handed out (Zulip's PresenceSequence)
 *   presence:<realm>:e    hash user id -> "<last_active>,<last_connected>,<update id>"
 *   presence:<realm>:log  sorted set of user ids scored by their entry's update id
 * A report takes the next id and stores its entry in one script; a reader
 * asks for the entries whose id is above the last one it has seen (one
 * round trip, usually answering "nothing new"). The sequence is never
 * created by a report: a realm is seeded once from the database (the state
 * the processes write through), so ids never go back after Redis lost its data.
 */

const CHANGES = `
local seq = redis.call('GET', KEYS[1])
if not seq then return false end
local out = {seq}
if tonumber(ARGV[1]) >= tonumber(seq) then return out end
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf')
for i = 1, #ids, 500 do
  local part = {}
  for j = i, math.min(i + 499, #ids) do part[#part + 1] = ids[j] end
  local vals = redis.call('HMGET', KEYS[2], unpack(part))
  for j = 1, #part do
    out[#out + 1] = part[j]
    out[#out + 1] = vals[j] or ''
  end
end
return out
`;

const PUT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ',' .. id)
redis.call('ZADD', KEYS[3], id, ARGV[1])
return id
`;

const SEED = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
for i = 2, #ARGV, 3 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[3], ARGV[i + 2], ARGV[i])
end
return 1
`;

type Scripted = Redis & {
  parleyPresenceChanges(seq: string, hash: string, log: string, since: number): Promise<string[] | null>;
  parleyPresencePut(seq: string, hash: string, log: string, userId: number, value: string): Promise<number>;
  parleyPresenceSeed(seq: string, hash: string, log: string, ...args: (string | number)[]): Promise<number>;
};

const encode = (e: Pick<PresenceEntry, 'lastActive' | 'lastConnected'>): string => `${e.lastActive ?? ''},${e.lastConnected}`;

function decode(raw: string): PresenceEntry | undefined {
  const [a, c, id] = raw.split(',');
  if (c === undefined || id === undefined) return undefined;
  return { lastActive: a === '' ? null : Number(a), lastConnected: Number(c), lastUpdateId: Number(id) };
}

export class RedisPresence implements SharedPresence {
  private readonly r: Scripted;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('parleyPresenceChanges', { numberOfKeys: 3, lua: CHANGES });
    redis.defineCommand('parleyPresencePut', { numberOfKeys: 3, lua: PUT });
    redis.defineCommand('parleyPresenceSeed', { numberOfKeys: 3, lua: SEED });
    this.r = redis as Scripted;
  }

  private keys(realmId: number): [string, string, string] {
    const base = `${this.prefix}presence:${realmId}:`;
    return [base + 'seq', base + 'e', base + 'log'];
  }

  async changes(realmId: number, since: number): Promise<SharedPresenceChanges | null> {
    const out = await this.r.parleyPresenceChanges(...this.keys(realmId), since);
    if (out === null) return null;
    const entries: [number, PresenceEntry][] = [];
    for (let i = 1; i + 1 < out.length; i += 2) {
      const e = decode(out[i + 1]!);
      if (e) entries.push([Number(out[i]), e]);
    }
    return { seq: Number(out[0]), entries };
  }

  async put(realmId: number, userId: number, entry: PresenceEntry): Promise<number | null> {
    const id = await this.r.parleyPresencePut(...this.keys(realmId), userId, encode(entry));
    return id < 0 ? null : id;
  }

  async seed(realmId: number, seq: number, entries: readonly (readonly [number, PresenceEntry])[]): Promise<void> {
    const args: (string | number)[] = [seq];
    for (const [userId, e] of entries) args.push(userId, `${encode(e)},${e.lastUpdateId}`, e.lastUpdateId);
    await this.r.parleyPresenceSeed(...this.keys(realmId), ...args);
  }
}

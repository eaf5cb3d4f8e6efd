import type { Redis } from 'ioredis';
import type { RateLimiter } from './rate-limit.js';

/**
 * Rate limits and failed-login counters shared by every process (scale-out):
 * fixed windows, one Redis counter per key that starts with the window's
 * first use (INCR, then PEXPIRE when the count is 1) and vanishes when the
 * window ends. Each call is one Lua script, so the count and the window's
 * remaining time are read atomically.
 */

// Returns {count after the increment, milliseconds left in the window}.
const INCR = `
local c = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if c == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {c, ttl}
`;

// Returns {count, milliseconds left} without counting.
const PEEK = `
local c = redis.call('GET', KEYS[1])
if not c then return {0, 0} end
return {tonumber(c), redis.call('PTTL', KEYS[1])}
`;

type Scripted = Redis & {
  parleyRlIncr(key: string, windowMs: number): Promise<[number, number]>;
  parleyRlPeek(key: string): Promise<[number, number]>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly r: Scripted;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('parleyRlIncr', { numberOfKeys: 1, lua: INCR });
    redis.defineCommand('parleyRlPeek', { numberOfKeys: 1, lua: PEEK });
    this.r = redis as Scripted;
  }

  private key(k: string): string {
    return `${this.prefix}rl:${k}`;
  }

  async consume(key: string, limit: number, windowSec: number): Promise<{ allowed: boolean; remaining: number; resetAt: number; retryAfter: number }> {
    const [count, ttl] = await this.r.parleyRlIncr(this.key(key), windowSec * 1000);
    const resetMs = Date.now() + ttl;
    return {
      allowed: count <= limit,
      remaining: Math.max(0, limit - count),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfter: Math.max(0.001, ttl / 1000),
    };
  }

  async retryAfter(key: string, limit: number, _windowSec: number): Promise<number> {
    const [count, ttl] = await this.r.parleyRlPeek(this.key(key));
    if (count < limit) return 0;
    return Math.max(0.001, ttl / 1000);
  }

  async hit(key: string, windowSec: number): Promise<void> {
    await this.r.parleyRlIncr(this.key(key), windowSec * 1000);
  }

  async reset(key: string): Promise<void> {
    await this.r.del(this.key(key));
  }
}

/**
 * Fixed-window counters keyed by a string. In-process by default; the Redis
 * implementation shares the counts between processes (scale-out).
 */
export interface RateLimiter {
  /** Seconds until the key may be used again, or 0 when under the limit. */
  retryAfter(key: string, limit: number, windowSec: number): Promise<number>;
  /** Records one use of the key. */
  hit(key: string, windowSec: number): Promise<void>;
  reset(key: string): Promise<void>;
  /**
   * Counts one request in the key's fixed window and says whether it is allowed,
   * how many remain, and when the window resets (unix seconds).
   */
  consume(key: string, limit: number, windowSec: number): Promise<{ allowed: boolean; remaining: number; resetAt: number; retryAfter: number }>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly hits = new Map<string, number[]>();
  private readonly windows = new Map<string, { start: number; count: number }>();

  async consume(key: string, limit: number, windowSec: number): Promise<{ allowed: boolean; remaining: number; resetAt: number; retryAfter: number }> {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= windowSec * 1000) {
      if (this.windows.size > 100_000) this.windows.clear();
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    const resetMs = w.start + windowSec * 1000;
    return {
      allowed: w.count <= limit,
      remaining: Math.max(0, limit - w.count),
      resetAt: Math.ceil(resetMs / 1000),
      retryAfter: Math.max(0.001, (resetMs - now) / 1000),
    };
  }
  private prune(key: string, windowSec: number, now: number): number[] {
    const list = (this.hits.get(key) ?? []).filter((t) => t > now - windowSec * 1000);
    if (list.length === 0) this.hits.delete(key);
    else this.hits.set(key, list);
    return list;
  }
  async retryAfter(key: string, limit: number, windowSec: number): Promise<number> {
    const now = Date.now();
    const list = this.prune(key, windowSec, now);
    if (list.length < limit) return 0;
    const oldest = list[list.length - limit]!;
    return Math.max(0.001, (oldest + windowSec * 1000 - now) / 1000);
  }
  async hit(key: string, windowSec: number): Promise<void> {
    const now = Date.now();
    const list = this.prune(key, windowSec, now);
    list.push(now);
    this.hits.set(key, list);
  }
  async reset(key: string): Promise<void> {
    this.hits.delete(key);
  }
}

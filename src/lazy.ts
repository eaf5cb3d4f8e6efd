import { createRequire } from 'node:module';

const requireCjs = createRequire(import.meta.url);

/**
 * Loads a CommonJS package on first use instead of at start: image decoding
 * (sharp), math (KaTeX), PostgreSQL (pg) and Redis (ioredis) are each needed
 * only by some deployments or some requests, and loading them all eagerly
 * costs start-up time and resident memory (performance.md P7, P10).
 */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= requireCjs(id) as T);
}

import { afterEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { logRequest } from '../../src/http/logging.js';
import type { AppCtx } from '../../src/domain/context.js';
import type { Metrics } from '../../src/http/metrics.js';

// logRequest writes the request line itself for a logger that leaves pino's line as it is
// (http/logging.ts, writeRequestLine): the bytes must be pino's.
const metrics = { observe() {} } as unknown as Metrics;
function capture(opts: pino.LoggerOptions = { level: 'info' }): { app: AppCtx; lines: string[] } {
  const lines: string[] = [];
  const log = pino(opts, { write: (s: string) => void lines.push(s) });
  return { app: { log } as unknown as AppCtx, lines };
}
afterEach(() => vi.restoreAllMocks());

describe('the request log line', () => {
  it('is pino\'s line, byte for byte', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_795_000_000_123);
    const cases: [string, string, string, number, number, number | undefined][] = [
      ['ab12-3', 'GET', '/api/v1/users/me', 200, 0.4234, 1],
      ['proxy.id:7_x', 'POST', '/api/v1/messages', 400, 12, undefined],
      ['x', 'DELETE', '/json/users/:user_id', 500, 1e-9, 12345],
    ];
    for (const [reqId, method, route, status, ms, userId] of cases) {
      const fast = capture();
      logRequest(fast.app, metrics, reqId, method, route, status, ms, userId);
      const slow = capture();
      slow.app.log.info({ reqId, method, route, status, ms: Math.round(ms * 100) / 100, userId }, 'request');
      expect(fast.lines).toHaveLength(1);
      expect(fast.lines[0]).toBe(slow.lines[0]);
    }
  });

  it('goes through pino when the strings need escaping, a mixin or a replaced info method changes it, or ms is not finite', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_795_000_000_123);
    const quoted = capture();
    logRequest(quoted.app, metrics, 'a', 'GET', '/x/"y"\\é', 200, 1, 1);
    expect(JSON.parse(quoted.lines[0]!).route).toBe('/x/"y"\\é');
    const mixed = capture({ level: 'info', mixin: () => ({ extra: 1 }) });
    logRequest(mixed.app, metrics, 'a', 'GET', '/r', 200, 1, 1);
    expect(JSON.parse(mixed.lines[0]!).extra).toBe(1);
    const hooked = capture();
    logRequest(hooked.app, metrics, 'a', 'GET', '/r', 200, 1, 1);
    const seen: unknown[] = [];
    hooked.app.log.info = ((obj: unknown) => void seen.push(obj)) as never;
    logRequest(hooked.app, metrics, 'b', 'GET', '/r', 200, 1, 1);
    expect(seen).toHaveLength(1);
    const nan = capture();
    logRequest(nan.app, metrics, 'a', 'GET', '/r', 200, NaN, 1);
    expect(JSON.parse(nan.lines[0]!).ms).toBe(null);
  });
});

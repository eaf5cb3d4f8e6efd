import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { workerSettings } from '../../src/cli/cluster.js';
import { SERVER_NODE_FLAGS, withServerNodeFlags } from '../../src/node-flags.js';
import { ROOT } from '../support/built-server.js';

describe("the server's node flags (src/node-flags.ts)", () => {
  it('are a larger young generation', () => {
    expect(SERVER_NODE_FLAGS).toEqual(['--max-semi-space-size=32']);
  });

  it('are added after the flags given, unless those set the same option (either spelling)', () => {
    expect(withServerNodeFlags([])).toEqual(['--max-semi-space-size=32']);
    expect(withServerNodeFlags(['--expose-gc'])).toEqual(['--expose-gc', '--max-semi-space-size=32']);
    expect(withServerNodeFlags(['--max-semi-space-size=8'])).toEqual(['--max-semi-space-size=8']);
    expect(withServerNodeFlags(['--max_semi_space_size=64', '--cpu-prof'])).toEqual(['--max_semi_space_size=64', '--cpu-prof']);
  });

  it('are what `npm start` runs node with', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`node ${SERVER_NODE_FLAGS.join(' ')} tools/start.mjs`);
  });

  it("are given to `parley cluster`'s workers, after the primary's own", () => {
    const s = workerSettings(['--enable-source-maps']);
    expect(s.execArgv).toEqual(['--enable-source-maps', '--max-semi-space-size=32']);
    expect(s.exec).toBe(path.join(ROOT, 'src/main.js'));
  });
});

// The benchmarks' smoke run (issue 20): `BENCH_QUICK=1 node bench/run.mjs` runs every script of
// bench/ with tiny sizes and writes its figures to a temporary file. No time is asserted: this
// catches a benchmark that no longer runs (a renamed route, a changed answer, a missing field),
// so that `npm run bench` on an idle machine does not fail after the fact.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('npm run bench, quick mode', () => {
  it('runs every benchmark and reports a figure for every row', async () => {
    expect(fs.existsSync(path.join(ROOT, 'dist/src/main.js')), 'the server is built (npm run build)').toBe(true);
    const results = path.join(os.tmpdir(), `parley-bench-quick-test-${process.pid}.json`);
    fs.rmSync(results, { force: true });
    const out: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bench/run.mjs')], {
        cwd: ROOT,
        env: { ...process.env, BENCH_QUICK: '1', BENCH_RESULTS: results },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (d) => out.push(String(d)));
      child.stderr.on('data', (d) => out.push(String(d)));
      child.on('exit', (c) => resolve(c));
    });
    const log = out.join('');
    expect(code, log.slice(-4000)).toBe(0);
    const figures = JSON.parse(fs.readFileSync(results, 'utf8')) as Record<string, unknown>;
    fs.rmSync(results, { force: true });
    expect(Object.keys(figures).sort()).toEqual(
      ['F1', 'P1', 'P2', 'P2_search_sqlite', 'P3', 'P4', 'P5', 'P6', 'P7_P10', 'P8', 'P9', 'markdown', 'presence', 'scale', 'w1-web'].sort(),
    );
    // Every row of the printed table has its figures (a missing field prints "n/a").
    const table = log.slice(log.indexOf('Parley benchmarks'));
    for (const id of ['P1', 'P2', 'P2s', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8', 'P9', 'P10', 'P11', 'W1', 'F1', 'MD', 'PR']) {
      expect(table, `row ${id}`).toMatch(new RegExp(`^${id}\\s`, 'm'));
    }
    // ... and none of them lacks a figure (a field a script no longer records prints "n/a").
    expect(table.split('\n').filter((l) => l.includes('n/a'))).toEqual([]);
    // The capacity model is computed from the run's figures: every per-unit cost it needs was recorded.
    expect(log).toContain('Capacity model (QUICK');
    expect(log).toMatch(/^\| at the peak hour \| 10k users \| 100k users \| 1M users \|$/m);
    expect(log).not.toContain('Capacity model: not computed');
    // The measured figures of the repository are never touched by a smoke run.
    expect(log).toContain('QUICK');
  }, 600_000);
});

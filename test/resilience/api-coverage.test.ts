import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '../../src/http/routes.js';
// @ts-expect-error plain ESM tool without type declarations
import { renderApiCoverage, ZULIP_NAMES } from '../../tools/api-coverage.mjs';

const DOC = path.join(import.meta.dirname, '../../docs/api-coverage.md');

describe('docs/api-coverage.md', () => {
  it('names the Zulip endpoint of every route, and only of routes that exist', () => {
    const table = routes.map((r) => `${r.method} ${r.path}`).sort();
    expect(Object.keys(ZULIP_NAMES as Record<string, unknown>).sort()).toEqual(table);
  });

  it('is what tools/api-coverage.mjs generates from the route table (run it after adding a route)', () => {
    expect(fs.readFileSync(DOC, 'utf8')).toBe(renderApiCoverage(routes));
  });
});

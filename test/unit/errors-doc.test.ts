import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.js';

// docs/errors.md lists every error code with its HTTP status; this keeps it in step with the code.
describe('docs/errors.md', () => {
  const doc = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, number>();
  for (const m of doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)) rows.set(m[1]!, Number(m[2]));

  it('documents every code with its status, and nothing else', () => {
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });
});

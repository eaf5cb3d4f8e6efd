import { describe, expect, it } from 'vitest';
import { byFullName } from '../../src/domain/actions/system-bots.js';
import { migrationOrder } from '../../src/store/db.js';
import { migrations } from '../../src/store/migrations/index.js';

/**
 * Two orders computed at every start without localeCompare (which loads ICU's
 * collation data: 3 MB of resident memory, performance.md P7). Each must be
 * localeCompare's order wherever it skips it.
 */
const sign = (n: number): number => Math.sign(n);

describe('orders kept equal to localeCompare without calling it', () => {
  it('migration names: by their distinct numbers, else localeCompare', () => {
    const names = Object.keys(migrations);
    const shuffled = [...names].reverse();
    expect([...shuffled].sort(migrationOrder(names))).toEqual([...shuffled].sort((a, b) => a.localeCompare(b)));
    for (const a of names) for (const b of names) expect(sign(migrationOrder(names)(a, b))).toBe(sign(a.localeCompare(b)));
    // Two names with one number (or one without): localeCompare itself, whatever it says.
    const odd = ['0100-b', '0100_a', 'x-1'];
    for (const a of odd) for (const b of odd) expect(migrationOrder(odd)(a, b)).toBe(a.localeCompare(b));
  });

  it('full names: Title Case ASCII words by code units, anything else by localeCompare, always in localeCompare order', () => {
    const words = ['A', 'Ab', 'Abc', 'B', 'Bot', 'Bots', 'Notification', 'Welcome', 'Z', 'Zulip', 'Feedback'];
    const names: string[] = [];
    for (const a of words) {
      names.push(a);
      for (const b of words) names.push(`${a} ${b}`, `${a}${b.toLowerCase()}`);
    }
    names.push('apple', 'Banana', 'émile', 'Émile', 'Zoë', 'a b', 'A-B', 'AB', 'Ab  c', '');
    for (const a of names) for (const b of names) expect(sign(byFullName({ full_name: a }, { full_name: b })), `${a} / ${b}`).toBe(sign(a.localeCompare(b)));
  });
});

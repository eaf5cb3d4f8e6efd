import { describe, expect, it } from 'vitest';
import { htmlDiff } from '../../src/domain/rules/html-diff.js';
import { flagList, FLAG_READ, FLAG_STARRED, FLAG_TOPIC_WILDCARD, FLAG_PRIVATE } from '../../src/domain/rules/message-flags.js';
import { LARGER_THAN_MAX_MESSAGE_ID, parseAnchor, parseNarrow } from '../../src/domain/rules/message-narrow.js';
import { fts5Match, highlightHtml, parseSearch } from '../../src/domain/rules/search-text.js';
import { resolveToggled, truncateTopic } from '../../src/domain/rules/topics.js';

describe('message rules', () => {
  it('content_html_diff in Zulip\'s (lxml htmldiff) style', () => {
    expect(htmlDiff('<p>content before edit</p>', '<p>content after edit</p>')).toBe(
      '<div><p>content <span class="highlight_text_inserted">after</span> <span class="highlight_text_deleted">before</span> edit</p></div>',
    );
    expect(htmlDiff('', '')).toBe('<div></div>');
    expect(htmlDiff('<p>a b</p>', '<p>a b c</p>')).toBe('<div><p>a b <span class="highlight_text_inserted">c</span></p></div>');
  });

  it('flag lists follow the bit order, hide internal flags and add the deprecated wildcard alias', () => {
    expect(flagList(FLAG_READ | FLAG_STARRED | FLAG_PRIVATE)).toEqual(['read', 'starred']);
    expect(flagList(FLAG_TOPIC_WILDCARD)).toEqual(['topic_wildcard_mentioned', 'wildcard_mentioned']);
  });

  it('anchors', () => {
    expect(parseAnchor('newest', false)).toBe(LARGER_THAN_MAX_MESSAGE_ID);
    expect(parseAnchor('oldest', false)).toBe(0);
    expect(parseAnchor(undefined, true)).toBe('first_unread');
    expect(parseAnchor(' 42 ', false)).toBe(42);
    expect(parseAnchor('-7', false)).toBe(0);
    expect(parseAnchor('123456789012345678901', false)).toBe(LARGER_THAN_MAX_MESSAGE_ID);
    expect(() => parseAnchor('4.5', false)).toThrow('Invalid anchor');
  });

  it('narrows in both forms, with aliases and negation', () => {
    expect(parseNarrow([['stream', 'x'], { operator: 'pm_with', operand: [1, 2], negated: true }])).toEqual([
      { operator: 'stream', operand: 'x', negated: false },
      { operator: 'pm-with', operand: [1, 2], negated: true },
    ]);
    expect(parseNarrow(null)).toEqual([]);
    expect(() => parseNarrow([{ operator: 'dm', operand: [1, 'a'] }])).toThrow('operand[1] is not an integer');
    const q = parseSearch('Foo "bar baz"  the qux Running');
    expect(q.words).toEqual(['foo', 'bar', 'baz', 'qux', 'running']);
    expect(q.phrases).toEqual(['bar baz']);
    expect([...q.stems]).toEqual(['foo', 'bar', 'baz', 'qux', 'run']);
    expect(fts5Match(q.words)).toBe('"foo" "bar" "baz" "qux" "running"');
    expect(parseSearch('the "and"').words).toEqual([]);
    // Tags, attributes and character references are never split or matched.
    expect(highlightHtml('<a href="/run" title="run">runs &amp; run&#39;s</a>', q.stems)).toBe(
      '<a href="/run" title="run"><span class="highlight">runs</span> &amp; <span class="highlight">run</span>&#39;s</a>',
    );
  });

  it('topics: truncation and resolve detection', () => {
    expect(truncateTopic('x'.repeat(61))).toBe('x'.repeat(57) + '...');
    expect(resolveToggled('✔ abc', 'abc')).toBe(true);
    expect(resolveToggled('abc', '✔ abc')).toBe(true);
    expect(resolveToggled('abd', 'abc')).toBe(false);
  });
});

// Hostile input, render results (mention flags, links, /me), normalisation, topic links
// and the never-throwing wrapper (spec §1, §13, §19-§21; behaviour-b "message object").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  normalizeMessageContent, renderMarkdown, renderMarkdownSafe, topicLinks, RENDER_FAILED_HTML,
} from '../../src/domain/rules/markdown/index.js';
import { exampleMarkdownContext } from '../../src/domain/rules/markdown/example-context.js';

const ctx = exampleMarkdownContext();
const p = (s: string) => `<p>${s}</p>`;

const hostile: [string, string, string][] = [
  ['script tag escaped', '<script>alert(1)</script>', p('&lt;script&gt;alert(1)&lt;/script&gt;')],
  ['html tags escaped', '<b>x</b>', p('&lt;b&gt;x&lt;/b&gt;')],
  ['html comment escaped', '<!-- x -->', p('&lt;!-- x --&gt;')],
  ['img onerror escaped', '<img src=x onerror=alert(1)>', p('&lt;img src=x onerror=alert(1)&gt;')],
  ['javascript link literal', '[x](javascript:alert(1))', p('[x](javascript:alert(1))')],
  ['javascript with spaces literal', '[x]( javascript:alert(1) )', p('[x]( javascript:alert(1) )')],
  ['data url literal', '[x](data:text/html,<b>)', p('[x](data:text/html,&lt;b&gt;)')],
  ['vbscript literal', '[x](vbscript:msgbox)', p('[x](vbscript:msgbox)')],
  ['bare javascript not linked', 'javascript:alert(1)', p('javascript:alert(1)')],
  ['quote in href escaped', '[x](https://x.io/"onmouseover="a)', p('<a href="https://x.io/&quot;onmouseover=&quot;a">x</a>')],
  ['quote in title escaped', '[x](https://x.io "a&quot;b")', p('<a href="https://x.io" title="a&amp;quot;b">x</a>')],
  ['html in link label escaped', '[<i>x</i>](https://x.io)', p('<a href="https://x.io">&lt;i&gt;x&lt;/i&gt;</a>')],
  ['html in code fence escaped', '```\n<script>\n```', '<div class="codehilite"><pre><span></span><code>&lt;script&gt;\n</code></pre></div>'],
  ['html in language word: not a fence, last line opens one', '```<script>\nx\n```', p('```&lt;script&gt;<br>\nx') + '\n<div class="codehilite"><pre><span></span><code>\n</code></pre></div>'],
  ['html in mention name escaped', '@**<b>x</b>**', p('@<strong>&lt;b&gt;x&lt;/b&gt;</strong>')],
  ['html in time escaped', '<time:<b>>', p('<span class="timestamp-error">Invalid time format: &lt;b</span>&gt;')],
  ['nested emphasis soup', '***a**b*c***', p('<strong>*a</strong>b<em>c</em>**')],
  ['unbalanced stars', '**a *b', p('**a *b')],
  ['unclosed fence inside quote fence', '````quote\n```\ncode', '<blockquote>\n<div class="codehilite"><pre><span></span><code>code\n</code></pre></div>\n</blockquote>'],
  ['unclosed quote fence', '```quote\ntext', '<blockquote>\n<p>text</p>\n</blockquote>'],
  ['unclosed spoiler', '```spoiler h\nbody', '<div class="spoiler-block"><div class="spoiler-header">\n<p>h</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>body</p>\n</div></div>'],
  ['unclosed link', '[x](https://x.io', p('[x](<a href="https://x.io">https://x.io</a>')],
  ['unclosed bracket', '[x', p('[x')],
  ['placeholder characters neutralised', 'a\u0002klzzwxh:0000\u0003b', p('a\uFFFDklzzwxh:0000\uFFFDb')],
  ['control-ish entity', '&#0;', p('&#0;')],
  ['null-like text is escaped not dropped', 'a < b && c', p('a &lt; b &amp;&amp; c')],
  ['code span inside link target', '[x](https://a.com/`"onmouseover=x`)', p('[x](https://a.com/<code>"onmouseover=x</code>)')],
  ['code span after bare URL', 'https://a.com/`"x`', p('https://a.com/<code>"x</code>')],
  ['mention and code inside link label', '[@**Iago** `x`](https://x.io)', p('<a href="https://x.io"><span class="user-mention" data-user-id="32">@Iago</span> <code>x</code></a>')],
  ['deep quote nesting', '>>>>>> x', `${'<blockquote>\n'.repeat(6)}<p>x</p>\n${'</blockquote>\n'.repeat(5)}</blockquote>`],
];

describe('Zulip Markdown: hostile input', () => {
  it.each(hostile)('%s', (_name, input, expected) => {
    expect(renderMarkdown(input, ctx).html).toBe(expected);
  });

  it('handles a 10,000-character line quickly', () => {
    const long = 'x'.repeat(10_000);
    const start = performance.now();
    expect(renderMarkdown(long, ctx).html).toBe(p(long));
    expect(renderMarkdown('*'.repeat(10_000), ctx).html).toBe('<hr>');
    expect(renderMarkdown('a' + '`'.repeat(5000), ctx).html).toBe(p('a' + '`'.repeat(5000)));
    expect(renderMarkdown('a *'.repeat(3000), ctx).html.startsWith('<p>a *a *')).toBe(true);
    expect(renderMarkdown('(https://x.io/' + '('.repeat(5000), ctx).html.length).toBeGreaterThan(5000);
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('never emits a raw tag from user text', () => {
    const evil = ['<svg onload=x>', '"><script>', "'><img src=x>", '<a href="javascript:x">y</a>'];
    for (const s of evil) {
      const html = renderMarkdown(`${s} **${s}** [${s}](https://x.io) \`${s}\` :${s}:`, ctx).html;
      expect(html).not.toMatch(/<(svg|script|img|a href="javascript)/i);
    }
  });
});

describe('random input', () => {
  const ALLOWED = new Set(['p', 'br', 'strong', 'em', 'del', 'code', 'a', 'span', 'div', 'pre', 'blockquote', 'ul', 'ol',
    'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'time', 'img', 'video']);
  const pieces = ['*', '**', '_', '~~', '`', '```', '\n', '\n\n', '> ', '* ', '1. ', '# ', '[', ']', '(', ')', '<', '>', '"', "'",
    '&', '@', '#', ':', ':smile:', '@**Iago**', '#**ops>t**', 'https://x.io/a.png', 'javascript:', '<script>', ' onerror=', '|', '-',
    'x', ' ', '\t', '\\', '😀', '<time:', 'www.a.com', '  '];
  it('always yields well-formed, allow-listed markup', () => {
    const c = exampleMarkdownContext({ inlineImagePreview: true, sender: { id: 32, translateEmoticons: true } });
    fc.assert(fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
      const html = renderMarkdown(parts.join(''), c).html;
      expect(html).not.toMatch(/[\u0001-\u0003]/);
      for (const m of html.matchAll(/<\/?([a-zA-Z0-9]+)/g)) expect(ALLOWED.has(m[1]!)).toBe(true);
      expect(html).not.toMatch(/<[^>]*\son\w+=/i);
      expect(html).not.toMatch(/href="javascript:/i);
      // Every tag is well formed: name, then attributes whose values are quoted strings
      // without a raw "<". (Quotes in text content, e.g. <p>a="</p>, are harmless.)
      for (const m of html.matchAll(/<(?=[a-zA-Z/])/g)) {
        expect(html.slice(m.index)).toMatch(/^<\/?[a-zA-Z0-9]+(\s+[a-zA-Z0-9_:-]+(="[^"<]*")?)*\s*\/?>/);
      }
    }), { numRuns: 400 });
  });
});

describe('render results', () => {
  it('reports mentions, ignoring silent and quoted ones', () => {
    const r = renderMarkdown('@**Iago** @_**Full Name** @*group name* @_*old team*\n> @**Full Name**', ctx);
    expect([...r.mentionedUserIds]).toEqual([32]);
    expect([...r.mentionedGroupIds]).toEqual([17]);
    expect(r.streamWildcardMentioned).toBe(false);
    expect(r.topicWildcardMentioned).toBe(false);
  });

  it('reports wildcards, but not silent or quoted ones', () => {
    expect(renderMarkdown('@**all**', ctx).streamWildcardMentioned).toBe(true);
    expect(renderMarkdown('@**channel**', ctx).streamWildcardMentioned).toBe(true);
    expect(renderMarkdown('@**topic**', ctx).topicWildcardMentioned).toBe(true);
    expect(renderMarkdown('@_**all**', ctx).streamWildcardMentioned).toBe(false);
    expect(renderMarkdown('> @**everyone**', ctx).streamWildcardMentioned).toBe(false);
    expect(renderMarkdown('@**topic**', ctx).streamWildcardMentioned).toBe(false);
  });

  it('does not flag deactivated users', () => {
    expect(renderMarkdown('@**Gone User**', ctx).mentionedUserIds.size).toBe(0);
  });

  it('collects link targets once each', () => {
    const r = renderMarkdown('https://a.io [x](https://b.io) https://a.io #123', ctx);
    expect([...r.links].sort()).toEqual(['https://a.io', 'https://b.io', 'https://trac.example.com/ticket/123']);
  });

  it('detects /me messages', () => {
    expect(renderMarkdown('/me waves', ctx).isMeMessage).toBe(true);
    expect(renderMarkdown('/me waves\nagain', ctx).isMeMessage).toBe(false);
    expect(renderMarkdown('/mewaves', ctx).isMeMessage).toBe(false);
    expect(renderMarkdown('hi /me', ctx).isMeMessage).toBe(false);
  });
});

describe('normalizeMessageContent', () => {
  it('strips trailing whitespace and leading newlines only', () => {
    expect(normalizeMessageContent('\n\n  hi  \n\n')).toEqual({ ok: true, content: '  hi' });
  });
  it('refuses empty bodies', () => {
    expect(normalizeMessageContent(' \n\t ')).toEqual({ ok: false, error: 'Message must not be empty' });
  });
  it('refuses NUL bytes', () => {
    expect(normalizeMessageContent('a\u0000b')).toEqual({ ok: false, error: 'Message must not contain null bytes' });
  });
  it('truncates at 10000 characters with the notice', () => {
    const r = normalizeMessageContent('y'.repeat(10_001));
    expect(r.ok && r.content.length).toBe(10_000);
    expect(r.ok && r.content.endsWith('y\n[message truncated]')).toBe(true);
    expect(normalizeMessageContent('y'.repeat(10_000))).toEqual({ ok: true, content: 'y'.repeat(10_000) });
  });
  it('counts code points, not UTF-16 units', () => {
    const s = '😀'.repeat(10_000);
    expect(normalizeMessageContent(s)).toEqual({ ok: true, content: s });
  });
});

describe('topicLinks', () => {
  it('links linkifier matches and raw URLs in order', () => {
    expect(topicLinks('#12 see ZUL-3 and https://x.io/a', ctx.linkifiers)).toEqual([
      { text: '#12', url: 'https://trac.example.com/ticket/12' },
      { text: 'ZUL-3', url: 'https://jira.example.com/browse/ZUL-3' },
      { text: 'https://x.io/a', url: 'https://x.io/a' },
    ]);
  });
  it('gives schemeless URLs https', () => {
    expect(topicLinks('docs at zulip.com', [])).toEqual([{ text: 'zulip.com', url: 'https://zulip.com' }]);
  });
  it('returns nothing for a plain topic', () => {
    expect(topicLinks('lunch plans', ctx.linkifiers)).toEqual([]);
  });
});

describe('renderMarkdownSafe', () => {
  it('returns the rendering when all is well', () => {
    expect(renderMarkdownSafe('**x**', ctx)).toMatchObject({ ok: true, html: p('<strong>x</strong>') });
  });
  it('logs with letters masked and returns the fallback on failure', () => {
    const broken = exampleMarkdownContext({ users: { byId: () => undefined, byName: () => { throw new Error('db down'); } } });
    const logged: string[] = [];
    const r = renderMarkdownSafe('Hi @**Iago** 42', broken, (_m, d) => logged.push(d.redactedContent));
    expect(r.ok).toBe(false);
    expect(r.html).toBe(RENDER_FAILED_HTML);
    expect(r.error).toBe('Unable to render message');
    expect(logged).toEqual(['xx @**xxxx** 42']);
  });
});

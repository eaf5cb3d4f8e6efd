// Block-level Zulip Markdown: expected HTML is taken from the facts in
// shared/spec/zulip-markdown.md (§1-§8, §15, §16, §18), not from our own output.
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/domain/rules/markdown/index.js';
import { exampleMarkdownContext } from '../../src/domain/rules/markdown/example-context.js';

const code = (body: string, lang?: string) =>
  `<div class="codehilite"${lang ? ` data-code-language="${lang}"` : ''}><pre><span></span><code>${body}\n</code></pre></div>`;

const cases: [string, string, string][] = [
  // §1/§2 paragraphs and breaks
  ['plain paragraph', 'content', '<p>content</p>'],
  ['empty input', '', ''],
  ['whitespace only', '   \n  ', ''],
  ['two paragraphs', 'a\n\nb', '<p>a</p>\n<p>b</p>'],
  ['many blank lines collapse', 'a\n\n\n\nb', '<p>a</p>\n<p>b</p>'],
  ['single newline is br', 'a\nb', '<p>a<br>\nb</p>'],
  ['three lines', 'a\nb\nc', '<p>a<br>\nb<br>\nc</p>'],
  ['leading spaces dropped', '   indented', '<p>indented</p>'],
  ['trailing spaces kept mid-line', 'a  \nb', '<p>a  <br>\nb</p>'],
  ['quotes stay literal in text', `say "hi" it's`, `<p>say "hi" it's</p>`],
  ['ampersand escaped', 'R & D', '<p>R &amp; D</p>'],
  ['entity passes through', '&copy; &#39; &amp;', '<p>&copy; &#39; &amp;</p>'],
  ['angle brackets escaped', '1 < 2 > 0', '<p>1 &lt; 2 &gt; 0</p>'],
  // §3 emphasis
  ['emphasis', '*x*', '<p><em>x</em></p>'],
  ['strong', '**bold**', '<p><strong>bold</strong></p>'],
  ['strong em', '***x***', '<p><strong><em>x</em></strong></p>'],
  ['mid-word emphasis', 'un*a*b', '<p>un<em>a</em>b</p>'],
  ['spaced stars stay text', '2 * 3 * 4', '<p>2 * 3 * 4</p>'],
  ['emphasis needs no inner edge space', 'a * x* b', '<p>a * x* b</p>'],
  ['strong is single line', '**a\nb**', '<p>**a<br>\nb**</p>'],
  ['underscore never formats', '_x_ __y__', '<p>_x_ __y__</p>'],
  ['strikethrough', '~~x~~', '<p><del>x</del></p>'],
  ['strikethrough keeps inner spaces', '~~ a b ~~', '<p><del> a b </del></p>'],
  ['triple tilde is not strikethrough', 'a ~~~b~~~', '<p>a ~~~b~~~</p>'],
  ['em inside strong', '**bold *em* more**', '<p><strong>bold <em>em</em> more</strong></p>'],
  ['strong inside em', '*a **b** c*', '<p><em>a <strong>b</strong> c</em></p>'],
  ['del inside strong', '**a ~~b~~**', '<p><strong>a <del>b</del></strong></p>'],
  // §4 inline code
  ['inline code', '`x`', '<p><code>x</code></p>'],
  ['double backtick code', '``a ` b``', '<p><code>a ` b</code></p>'],
  ['code keeps spaces', '` x `', '<p><code> x </code></p>'],
  ['code escapes', '`<b>&amp;</b>`', '<p><code>&lt;b&gt;&amp;amp;&lt;/b&gt;</code></p>'],
  ['code is not processed', '`**x** :smile: @**Iago**`', '<p><code>**x** :smile: @**Iago**</code></p>'],
  ['unmatched backtick', 'a ` b', '<p>a ` b</p>'],
  // §5 code blocks
  ['fence without language', '```\ncode\n```', code('code')],
  ['fence escapes quotes without language', '```\na & "b" \'c\' <d>\n```', code('a &amp; &quot;b&quot; &#39;c&#39; &lt;d&gt;')],
  ['tilde fence', '~~~\nx\n~~~', code('x')],
  ['fence with python alias', '```py\nx = 1\n```', code('<span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>', 'Python')],
  ['fence language is lower-cased', '```MyLang\nx\n```', code('x', 'mylang')],
  ['js alias display name', '```js\nx\n```', code('<span class="nx">x</span>', 'JavaScript')],
  ['py2 display name', '```py2\nx\n```', code('x', 'Python 2.x')],
  ['tex display name', '```latex\nx\n```', code('x', 'TeX')],
  ['text display name', '```text\nx\n```', code('x', 'Text only')],
  ['language keeps quotes literal', '```mylang\n"a" \'b\' & <c>\n```', code(`"a" 'b' &amp; &lt;c&gt;`, 'mylang')],
  ['dot language syntax', '``` .py\nx\n```', code('<span class="n">x</span>', 'Python')],
  ['brace language syntax', '```{.py}\nx\n```', code('<span class="n">x</span>', 'Python')],
  ['code lines right-trimmed', '```\na   \nb\n```', code('a\nb')],
  ['unclosed fence runs to end', '```\nunclosed\nfence', code('unclosed\nfence')],
  ['fence right after paragraph', 'a\n```\nb\n```\nc', '<p>a</p>\n' + code('b') + '\n<p>c</p>'],
  ['longer fence needed to close', '````\n```\n````', code('```')],
  ['markdown not processed in code', '```\n**x** @**Iago**\n```', code('**x** @**Iago**')],
  ['empty fence', '```\n```', code('')],
  ['indented code block', 'para\n\n    code\n    more', '<p>para</p>\n' + code('code\nmore')],
  ['tab expands in indented code', '\tcode', code('code')],
  // §6 quotes
  ['blockquote', '> text', '<blockquote>\n<p>text</p>\n</blockquote>'],
  ['lazy continuation', '> a\nb', '<blockquote>\n<p>a<br>\nb</p>\n</blockquote>'],
  ['nested quote', '>> x', '<blockquote>\n<blockquote>\n<p>x</p>\n</blockquote>\n</blockquote>'],
  ['blank line splits quotes', '> a\n\n> b', '<blockquote>\n<p>a</p>\n</blockquote>\n<blockquote>\n<p>b</p>\n</blockquote>'],
  ['bare marker is text', '>', '<p>&gt;</p>'],
  ['quote fence', '```quote\n**q**\n```', '<blockquote>\n<p><strong>q</strong></p>\n</blockquote>'],
  ['quoted fence alias', '~~~quoted\nhi\n~~~', '<blockquote>\n<p>hi</p>\n</blockquote>'],
  ['quote fence with code inside', '````quote\n```\nx\n```\n````', '<blockquote>\n' + code('x') + '\n</blockquote>'],
  ['nested quote fences', '```quote\n~~~quote\nin\n~~~\nout\n```', '<blockquote>\n<blockquote>\n<p>in</p>\n</blockquote>\n<p>out</p>\n</blockquote>'],
  ['quote then paragraph', '> q\n\np', '<blockquote>\n<p>q</p>\n</blockquote>\n<p>p</p>'],
  // §7 lists
  ['bullet list', '* a\n* b', '<ul>\n<li>a</li>\n<li>b</li>\n</ul>'],
  ['dash and plus bullets mix', '- a\n+ b\n* c', '<ul>\n<li>a</li>\n<li>b</li>\n<li>c</li>\n</ul>'],
  ['ordered list', '1. a\n2. b', '<ol>\n<li>a</li>\n<li>b</li>\n</ol>'],
  ['repeated numbers fine', '1. a\n1. b\n1. c', '<ol>\n<li>a</li>\n<li>b</li>\n<li>c</li>\n</ol>'],
  ['ordered start', '3. a\n4. b', '<ol start="3">\n<li>a</li>\n<li>b</li>\n</ol>'],
  ['nested bullets 2 spaces', '* a\n  * b', '<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>'],
  ['nested ordered 2 spaces', '1. a\n  1. b', '<ol>\n<li>a<ol>\n<li>b</li>\n</ol>\n</li>\n</ol>'],
  ['nested ordered own start', '1. a\n  5. b', '<ol>\n<li>a<ol start="5">\n<li>b</li>\n</ol>\n</li>\n</ol>'],
  ['three levels', '* a\n  * b\n    * c', '<ul>\n<li>a<ul>\n<li>b<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n</li>\n</ul>'],
  ['back out of nesting', '* a\n  * b\n* c', '<ul>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ul>'],
  ['hanging list off paragraph', 'text\n* a\n* b', '<p>text</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>'],
  ['hanging ordered list', 'text\n1. a', '<p>text</p>\n<ol>\n<li>a</li>\n</ol>'],
  ['loose list', '* a\n\n* b', '<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>'],
  ['bullet then ordered are two lists', '* a\n1. b', '<ul>\n<li>a</li>\n</ul>\n<ol>\n<li>b</li>\n</ol>'],
  ['list items are inline formatted', '* **a**\n* `b`', '<ul>\n<li><strong>a</strong></li>\n<li><code>b</code></li>\n</ul>'],
  // §8 headings and rules
  ['h1', '# h', '<h1>h</h1>'],
  ['h6', '###### h', '<h6>h</h6>'],
  ['trailing hashes dropped', '## h ##', '<h2>h</h2>'],
  ['hash word is paragraph', '#word', '<p>#word</p>'],
  ['seven hashes is paragraph', '####### x', '<p>####### x</p>'],
  ['heading inline formatting', '# *x*', '<h1><em>x</em></h1>'],
  ['heading between paragraphs', 'a\n# h\nb', '<p>a</p>\n<h1>h</h1>\n<p>b</p>'],
  ['hr dashes', '---', '<hr>'],
  ['hr stars', '***', '<hr>'],
  ['hr underscores', '___', '<hr>'],
  ['no setext heading', 'text\n---', '<p>text</p>\n<hr>'],
  ['no setext equals', 'text\n===', '<p>text<br>\n===</p>'],
  // §15 spoilers
  ['spoiler with header', '```spoiler Header text\ncontent\n```',
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>Header text</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>'],
  ['spoiler without header', '```spoiler\ncontent\n```',
    '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>'],
  ['spoiler header is markdown', '```spoiler **Bold** :smile:\nx\n```',
    '<div class="spoiler-block"><div class="spoiler-header">\n<p><strong>Bold</strong> <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>x</p>\n</div></div>'],
  ['spoiler in quote', '```quote\n```spoiler h\nx\n```\n```',
    '<blockquote>\n<div class="spoiler-block"><div class="spoiler-header">\n<p>h</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>x</p>\n</div></div>\n</blockquote>'],
  // §18 tables
  ['table', '|a|b|\n|-|-|\n|1|2|',
    '<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>'],
  ['table without outer pipes', 'a | b\n--|--\n1 | 2',
    '<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>'],
  ['table alignment', '|a|b|c|\n|:-|:-:|-:|\n|1|2|3|',
    '<table>\n<thead>\n<tr>\n<th style="text-align: left;">a</th>\n<th style="text-align: center;">b</th>\n<th style="text-align: right;">c</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td style="text-align: left;">1</td>\n<td style="text-align: center;">2</td>\n<td style="text-align: right;">3</td>\n</tr>\n</tbody>\n</table>'],
  ['table cells inline formatted', '|a|\n|-|\n|**b**|',
    '<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><strong>b</strong></td>\n</tr>\n</tbody>\n</table>'],
];

describe('Zulip Markdown: blocks', () => {
  const ctx = exampleMarkdownContext();
  it.each(cases)('%s', (_name, input, expected) => {
    expect(renderMarkdown(input, ctx).html).toBe(expected);
  });

  it('renders inline math as KaTeX spliced into the paragraph', () => {
    const html = renderMarkdown('sum $$x^2$$', ctx).html;
    expect(html.startsWith('<p>sum <span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML">')).toBe(true);
    expect(html).toContain('<annotation encoding="application/x-tex">x^2</annotation>');
  });

  it('renders each chunk of a math block as a display paragraph', () => {
    const html = renderMarkdown('```math\nx\n\ny\n```', ctx).html;
    const parts = html.split('\n<p><span class="katex-display">');
    expect(parts).toHaveLength(2);
    expect(html.startsWith('<p><span class="katex-display"><span class="katex">')).toBe(true);
    expect(html.endsWith('</span></span></p>')).toBe(true);
  });

  it('shows TeX errors as Zulip does', () => {
    expect(renderMarkdown('$$\\frac{$$', ctx).html).toBe('<p><span class="tex-error">$$\\frac{$$</span></p>');
    expect(renderMarkdown('```math\n\\frac{\n```', ctx).html).toBe('<p><span class="tex-error">\\frac{</span></p>');
  });

  it('leaves $$ alone when it touches word characters or a third $', () => {
    expect(renderMarkdown('$$a$$b', ctx).html).toBe('<p>$$a$$b</p>');
    expect(renderMarkdown('$$$a$$', ctx).html).toBe('<p>$$$a$$</p>');
    expect(renderMarkdown('$$_a$$', ctx).html).toBe('<p>$$_a$$</p>');
  });
});

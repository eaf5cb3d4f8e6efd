// Inline Zulip Markdown: links, mentions, channel links, emoji, times, linkifiers.
// Expected HTML comes from shared/spec/zulip-markdown.md (§9, §11-§14, §17, §19).
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/domain/rules/markdown/index.js';
import { exampleMarkdownContext } from '../../src/domain/rules/markdown/example-context.js';

const emoji = (code: string, name: string, syntax = `:${name}:`) => {
  const title = name.replace(/_/g, ' ');
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">${syntax}</span>`;
};
const p = (s: string) => `<p>${s}</p>`;

const cases: [string, string, string][] = [
  // §9 links
  ['markdown link', '[zulip](https://zulip.com)', p('<a href="https://zulip.com">zulip</a>')],
  ['schemeless link gets http', '[zulip](www.zulip.org)', p('<a href="http://www.zulip.org">zulip</a>')],
  ['link title', '[l](https://x.io "T")', p('<a href="https://x.io" title="T">l</a>')],
  ['empty label shows href', '[](https://x.io)', p('<a href="https://x.io">https://x.io</a>')],
  ['blank label shows href', '[  ](https://x.io)', p('<a href="https://x.io">https://x.io</a>')],
  ['label is not formatted', '[**b**](https://x.io)', p('<a href="https://x.io">**b**</a>')],
  ['relative path link kept', '[x](/path)', p('<a href="/path">x</a>')],
  ['fragment link kept', '[y](#frag)', p('<a href="#frag">y</a>')],
  ['mailto from bare address', '[z](user@example.com)', p('<a href="mailto:user@example.com">z</a>')],
  ['realm narrow link made relative', '[w](http://127.0.0.1:9991/#narrow/channel/9-ops)', p('<a href="#narrow/channel/9-ops">w</a>')],
  ['realm upload link made relative', '[f](http://127.0.0.1:9991/user_uploads/2/ab/f.pdf)', p('<a href="user_uploads/2/ab/f.pdf">f</a>')],
  ['javascript link stays text', '[l](javascript:alert(1))', p('[l](javascript:alert(1))')],
  ['custom scheme stays text', '[l](myapp://x)', p('[l](myapp://x)')],
  ['allowed exotic scheme', '[call](tel:+123)', p('<a href="tel:+123">call</a>')],
  ['image syntax is not an image', '![alt](https://x.io/a.png)', p('![alt](<a href="https://x.io/a.png">https://x.io/a.png</a>)')],
  ['reference link stays text', '[x][y]', p('[x][y]')],
  ['autolink', 'see https://x.io now', p('see <a href="https://x.io">https://x.io</a> now')],
  ['autolink www', 'www.a.com', p('<a href="http://www.a.com">www.a.com</a>')],
  ['autolink bare domain with tld', 'go to zulip.com.', p('go to <a href="http://zulip.com">zulip.com</a>.')],
  ['excluded tld not linked', 'open setup.py', p('open setup.py')],
  ['unknown tld not linked', 'file.notatld', p('file.notatld')],
  ['autolink email', 'mail foo@bar.com', p('mail <a href="mailto:foo@bar.com">foo@bar.com</a>')],
  ['autolink trailing punctuation', '(https://x.io/a), end', p('(<a href="https://x.io/a">https://x.io/a</a>), end')],
  ['autolink balanced parens', 'https://en.wikipedia.org/wiki/A_(b)', p('<a href="https://en.wikipedia.org/wiki/A_(b)">https://en.wikipedia.org/wiki/A_(b)</a>')],
  ['autolink ampersand', 'https://x.io/?a=1&b=2', p('<a href="https://x.io/?a=1&amp;b=2">https://x.io/?a=1&amp;b=2</a>')],
  ['angle brackets stay around link', '<https://x.io>', p('&lt;<a href="https://x.io">https://x.io</a>&gt;')],
  ['autolink needs start boundary', 'xhttps://x.io', p('xhttps://x.io')],
  ['autolink inside strong on a longer line', '**see https://x.io now**', p('<strong>see <a href="https://x.io">https://x.io</a> now</strong>')],
  ['url alone in strong stays text', '**https://x.io**', p('<strong>https://x.io</strong>')],
  ['realm autolink relative', 'http://127.0.0.1:9991/#narrow/dm/3', p('<a href="#narrow/dm/3">http://127.0.0.1:9991/#narrow/dm/3</a>')],
  // §11 user mentions
  ['mention', '@**Full Name**', p('<span class="user-mention" data-user-id="31">@Full Name</span>')],
  ['mention case-insensitive keeps stored name', '@**full name**', p('<span class="user-mention" data-user-id="31">@Full Name</span>')],
  ['mention with id', '@**Full Name|31**', p('<span class="user-mention" data-user-id="31">@Full Name</span>')],
  ['mention by id only', '@**|32**', p('<span class="user-mention" data-user-id="32">@Iago</span>')],
  ['mention name/id mismatch', '@**Iago|31**', p('@<strong>Iago|31</strong>')],
  ['silent mention', '@_**Full Name**', p('<span class="user-mention silent" data-user-id="31">Full Name</span>')],
  ['deactivated user is silent', '@**Gone User**', p('<span class="user-mention silent" data-user-id="33">Gone User</span>')],
  ['unknown user', '@**Nobody**', p('@<strong>Nobody</strong>')],
  ['unknown silent user', '@_**Nobody**', p('@_<strong>Nobody</strong>')],
  ['mention needs boundary', 'x@**Full Name**', p('x@<strong>Full Name</strong>')],
  ['mention after paren', '(@**Iago**)', p('(<span class="user-mention" data-user-id="32">@Iago</span>)')],
  ['plain at-name is text', '@Iago', p('@Iago')],
  ['mention with unicode name', '@**Zoë Ünïcode**', p('<span class="user-mention" data-user-id="34">@Zoë Ünïcode</span>')],
  ['wildcard all', '@**all**', p('<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span>')],
  ['wildcard everyone', '@**everyone**', p('<span class="user-mention channel-wildcard-mention" data-user-id="*">@everyone</span>')],
  ['wildcard channel', '@**channel**', p('<span class="user-mention channel-wildcard-mention" data-user-id="*">@channel</span>')],
  ['wildcard stream', '@**stream**', p('<span class="user-mention channel-wildcard-mention" data-user-id="*">@stream</span>')],
  ['topic wildcard', '@**topic**', p('<span class="topic-mention">@topic</span>')],
  ['silent wildcard', '@_**all**', p('<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span>')],
  ['silent topic wildcard', '@_**topic**', p('<span class="topic-mention silent">topic</span>')],
  ['mention in quote is silent', '> @**Iago**', '<blockquote>\n<p><span class="user-mention silent" data-user-id="32">Iago</span></p>\n</blockquote>'],
  ['mention in quote fence is silent', '```quote\n@**Iago**\n```', '<blockquote>\n<p><span class="user-mention silent" data-user-id="32">Iago</span></p>\n</blockquote>'],
  ['no bold inside mention', '@**Iago** **b**', p('<span class="user-mention" data-user-id="32">@Iago</span> <strong>b</strong>')],
  // groups
  ['group mention', '@*group name*', p('<span class="user-group-mention" data-user-group-id="17">@group name</span>')],
  ['silent group mention', '@_*group name*', p('<span class="user-group-mention silent" data-user-group-id="17">group name</span>')],
  ['unknown group', '@*nogroup*', p('@<em>nogroup</em>')],
  ['deactivated group silent', '@*old team*', p('<span class="user-group-mention silent" data-user-group-id="18">old team</span>')],
  ['system group display name, silent', '@_*role:administrators*', p('<span class="user-group-mention silent" data-user-group-id="19">Administrators</span>')],
  ['group mention in quote silent', '> @*group name*', '<blockquote>\n<p><span class="user-group-mention silent" data-user-group-id="17">group name</span></p>\n</blockquote>'],
  // §12 channel, topic and message links
  ['channel link', '#**ops**', p('<a class="stream" data-stream-id="9" href="/#narrow/channel/9-ops">#ops</a>')],
  ['topic link', '#**ops>db move**', p('<a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-ops/topic/db.20move">#ops &gt; db move</a>')],
  ['message link', '#**ops>db move@214**', p('<a class="message-link" href="/#narrow/channel/9-ops/topic/db.20move/near/214">#ops &gt; db move @ 💬</a>')],
  ['empty topic link', '#**ops>**', p('<a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-ops/topic/">#ops &gt; <em>general chat</em></a>')],
  ['unknown channel', '#**nope**', p('#<strong>nope</strong>')],
  ['channel match is case-sensitive', '#**OPS**', p('#<strong>OPS</strong>')],
  ['channel slug encoding', '#**R&D**', p('<a class="stream" data-stream-id="10" href="/#narrow/channel/10-R.26D">#R&amp;D</a>')],
  ['channel slug unicode and spaces', '#**café talk**', p('<a class="stream" data-stream-id="11" href="/#narrow/channel/11-caf.C3.A9-talk">#café talk</a>')],
  ['topic encoding dots and quotes', "#**ops>v2.1 Kim's**", p(`<a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-ops/topic/v2.2E1.20Kim.27s">#ops &gt; v2.1 Kim's</a>`)],
  // §13 emoji
  ['emoji by name', ':smile:', p(emoji('1f642', 'smile'))],
  ['alias keeps alias', ':thumbs_up:', p(emoji('1f44d', 'thumbs_up'))],
  ['big smile override', ':big_smile:', p(emoji('1f604', 'big_smile'))],
  ['override names', ':folded_hands: :holiday_tree: :poop:', p(`${emoji('1f64f', 'folded_hands')} ${emoji('1f384', 'holiday_tree')} ${emoji('1f4a9', 'poop')}`)],
  ['oh_no and confused', ':oh_no: :confused:', p(`${emoji('1f615', 'oh_no')} ${emoji('1f615', 'confused')}`)],
  ['smiling_face override', ':smiling_face:', p(emoji('263a', 'smiling_face'))],
  ['cldr name', ':astonished:', p(emoji('1f632', 'astonished'))],
  ['emoji touching text', ':cat:x:dog:', p(`${emoji('1f408', 'cat')}x${emoji('1f415', 'dog')}`)],
  ['unknown emoji literal', ':notanemoji:', p(':notanemoji:')],
  ['iamcal-only name unknown', ':slightly_smiling_face:', p(':slightly_smiling_face:')],
  ['skin tone name invalid', ':skin-tone-2:', p(':skin-tone-2:')],
  ['custom realm emoji', ':party_parrot:', p('<img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/images/7.gif" title="party parrot">')],
  ['zulip emoji', ':zulip:', p('<img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip">')],
  ['unicode emoji canonical name', '👍', p(emoji('1f44d', '+1'))],
  ['unicode keycap', '#️⃣', p(emoji('0023-20e3', 'hash'))],
  ['unicode zwj sequence', '🤷‍♀️', p(emoji('1f937-200d-2640', 'woman_shrugging'))],
  ['text presentation heart stays', '❤', p('❤')],
  ['emoji presentation heart converts', '❤️', p(emoji('2764', 'heart'))],
  ['lone arrow stays', '↔', p('↔')],
  ['skin tone sequence stays raw', '👍🏽', p('👍🏽')],
  ['emoticons off by default', ':) <3', p(':) &lt;3')],
  ['emoji not in code', '`:smile:`', p('<code>:smile:</code>')],
  // §14 /me, §17 times
  ['me message is plain', '/me waves', p('/me waves')],
  ['global time with offset', '<time:2025-03-14T15:30:00+01:00>', p('<time datetime="2025-03-14T14:30:00Z">2025-03-14T15:30:00+01:00</time>')],
  ['naive time is UTC', '<time:2025-03-14 14:30>', p('<time datetime="2025-03-14T14:30:00Z">2025-03-14 14:30</time>')],
  ['unix timestamp time', '<time:1710426600>', p('<time datetime="2024-03-14T14:30:00Z">1710426600</time>')],
  ['invalid time', '<time:junk>', p('<span class="timestamp-error">Invalid time format: junk</span>')],
  // §19 linkifiers
  ['linkifier', 'fixes #123', p('fixes <a href="https://trac.example.com/ticket/123">#123</a>')],
  ['second linkifier', 'see ZUL-9.', p('see <a href="https://jira.example.com/browse/ZUL-9">ZUL-9</a>.')],
  ['linkifier needs start boundary', 'a#123', p('a#123')],
  ['linkifier not followed by letter', '#123abc', p('#123abc')],
  ['linkifier not in code', '`#123`', p('<code>#123</code>')],
  ['linkifier not inside link label', '[#123](https://x.io)', p('<a href="https://x.io">#123</a>')],
];

describe('Zulip Markdown: inline', () => {
  const ctx = exampleMarkdownContext();
  it.each(cases)('%s', (_name, input, expected) => {
    expect(renderMarkdown(input, ctx).html).toBe(expected);
  });

  it('translates emoticons for senders who asked for it', () => {
    const c = exampleMarkdownContext({ sender: { id: 32, translateEmoticons: true } });
    expect(renderMarkdown(':) <3 :/', c).html).toBe(p(`${emoji('1f642', 'smile')} ${emoji('2764', 'heart')} ${emoji('1f615', 'confused')}`));
    expect(renderMarkdown('a:)', c).html).toBe(p('a:)'));
    expect(renderMarkdown('(:D)', c).html).toBe(p(`(${emoji('1f600', 'grinning')})`));
  });

  it('adds /with/<id> to topic links when the topic has messages', () => {
    const c = exampleMarkdownContext({ latestTopicMessageId: (ch, topic) => (ch === 9 && topic === 'db move' ? 250 : undefined) });
    expect(renderMarkdown('#**ops>db move**', c).html).toBe(
      p('<a class="stream-topic" data-stream-id="9" href="/#narrow/channel/9-ops/topic/db.20move/with/250">#ops &gt; db move</a>'));
  });

  it('uses the realm default code language for bare fences', () => {
    const c = exampleMarkdownContext({ defaultCodeBlockLanguage: 'py' });
    expect(renderMarkdown('```\nx\n```', c).html).toBe('<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span>\n</code></pre></div>');
  });
});

describe('inline previews (realm inline_image_preview on)', () => {
  const c = exampleMarkdownContext({ inlineImagePreview: true });
  const img = (href: string, src = href, title?: string) =>
    `<div class="message_inline_image"><a href="${href}"${title ? ` title="${title}"` : ''}><img src="${src}"></a></div>`;
  const previewCases: [string, string, string][] = [
    ['bare image URL replaces its paragraph', 'https://x.io/a.png', img('https://x.io/a.png')],
    ['image after the paragraph', 'Logo: https://x.io/a.png\nboring',
      p('Logo: <a href="https://x.io/a.png">https://x.io/a.png</a><br>\nboring') + '\n' + img('https://x.io/a.png')],
    ['named link gets title, divs adjacent', '[pic](https://x.io/a.jpg) https://x.io/b.gif',
      p('<a href="https://x.io/a.jpg">pic</a> <a href="https://x.io/b.gif">https://x.io/b.gif</a>') + '\n'
      + img('https://x.io/a.jpg', 'https://x.io/a.jpg', 'pic') + img('https://x.io/b.gif')],
    ['video', 'https://x.io/v.mp4',
      '<div class="message_inline_image message_inline_video"><a href="https://x.io/v.mp4"><video preload="metadata" src="https://x.io/v.mp4"></video></a></div>'],
    ['youtube keeps the paragraph', 'https://youtu.be/dQw4w9WgXcQ',
      p('<a href="https://youtu.be/dQw4w9WgXcQ">https://youtu.be/dQw4w9WgXcQ</a>')
      + '\n<div class="youtube-video message_inline_image"><a data-id="dQw4w9WgXcQ" href="https://youtu.be/dQw4w9WgXcQ"><img src="https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg"></a></div>'],
    ['no previews in quotes', '> https://x.io/a.png', '<blockquote>\n' + p('<a href="https://x.io/a.png">https://x.io/a.png</a>') + '\n</blockquote>'],
    ['each URL once', 'https://x.io/a.png https://x.io/a.png',
      p('<a href="https://x.io/a.png">https://x.io/a.png</a> <a href="https://x.io/a.png">https://x.io/a.png</a>') + '\n' + img('https://x.io/a.png')],
    ['non-media link has no preview', 'https://x.io/page', p('<a href="https://x.io/page">https://x.io/page</a>')],
  ];
  it.each(previewCases)('%s', (_name, input, expected) => {
    expect(renderMarkdown(input, c).html).toBe(expected);
  });

  it('gives no previews at all past 24 distinct URLs', () => {
    const many = Array.from({ length: 25 }, (_, i) => `https://x.io/${i}.png`).join(' ');
    expect(renderMarkdown(many, c).html).not.toContain('message_inline_image');
    const ok = Array.from({ length: 24 }, (_, i) => `https://x.io/${i}.png`).join(' ');
    expect(renderMarkdown(ok, c).html.split('message_inline_image')).toHaveLength(25);
  });

  it('proxies external images only', () => {
    const proxied = exampleMarkdownContext({ inlineImagePreview: true, imageProxyUrl: (u) => `/external_content/x/${Buffer.from(u).toString('hex')}` });
    expect(renderMarkdown('https://x.io/a.png', proxied).html).toBe(img('https://x.io/a.png', '/external_content/x/68747470733a2f2f782e696f2f612e706e67'));
    expect(renderMarkdown('[f](/user_uploads/2/a/b.png)', proxied).html).toContain('<img src="/user_uploads/2/a/b.png">');
  });

  it('is off unless the realm turns it on', () => {
    expect(renderMarkdown('https://x.io/a.png', exampleMarkdownContext()).html).toBe(p('<a href="https://x.io/a.png">https://x.io/a.png</a>'));
  });
});

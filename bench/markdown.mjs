// Markdown rendering throughput: 1,000 typical chat messages (plain text, mentions,
// emoji, links, code), rendered 3 times after a warm-up; prints the median run as
// microseconds per message. The target (issue 5) is under 1 ms per message.
// Usage: npm run build && node bench/markdown.mjs
import { renderMarkdown } from '../dist/src/domain/rules/markdown/index.js';
import { exampleMarkdownContext } from '../dist/src/domain/rules/markdown/example-context.js';
import { record } from './lib.mjs';

const templates = [
  (i) => `Morning all! The deploy #${i} went out, let me know if you see anything odd.`,
  (i) => `@**Iago** can you take a look at ZUL-${i} when you have a minute? :folded_hands:`,
  (i) => `Sounds good :+1: I'll pick it up after lunch 🍕`,
  (i) => `Here's the failing bit:\n\`\`\`py\ndef f(x):\n    return x * ${i}\n\`\`\`\nany ideas?`,
  (i) => `**Reminder**: standup moved to <time:2025-03-14T15:30:00+01:00>. See #**ops>db move** for context.`,
  (i) => `> quoted reply from @_**Full Name**\n\nI agree, *mostly*. Docs: https://example.com/docs/page-${i}?q=1&r=2`,
  (i) => `- first item\n- second item with \`code ${i}\`\n- third :tada:`,
  (i) => `lol 😂😂 that's great`,
  (i) => `@*group name* please review [the PR](https://github.com/zulip/zulip/pull/${i}) before Friday ~~Thursday~~.`,
  (i) => `Just a plain sentence number ${i} with nothing special in it at all, but a bit longer than the others so it looks like real chat.`,
];
const messages = Array.from({ length: 1000 }, (_, i) => templates[i % templates.length](i));
const ctx = exampleMarkdownContext();

for (let i = 0; i < 300; i++) renderMarkdown(messages[i % messages.length], ctx); // warm-up (JIT)

const runs = [];
for (let run = 0; run < 3; run++) {
  const start = process.hrtime.bigint();
  for (const m of messages) renderMarkdown(m, ctx);
  runs.push(Number(process.hrtime.bigint() - start) / 1e6);
}
const sorted = [...runs].sort((a, b) => a - b);
const median = sorted[1];
console.log(`runs (ms per 1000 messages): ${runs.map((r) => r.toFixed(1)).join(', ')}`);
console.log(`median: ${(median / 1000 * 1000).toFixed(1)} µs per message (${median.toFixed(1)} ms / 1000)`);
record('markdown', { us_per_message: +median.toFixed(1), messages: messages.length, runs_ms_per_1000: runs.map((r) => +r.toFixed(1)) });

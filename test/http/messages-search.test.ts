import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { createChannel, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

/**
 * The `search` narrow operator (issue 16): stemmed full-text search through the
 * index of migration 1000 (PostgreSQL tsvector + GIN, SQLite FTS5 porter),
 * Zulip's quoted-phrase rule and match_content / match_subject highlighting.
 * Runs on both stores (vitest projects sqlite and postgres).
 */
let t: TestServer;
const ids: Record<string, number> = {};
beforeAll(async () => {
  t = await startTestServer();
  await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago']);
  await createChannel(t, 'Verona', ['hamlet', 'othello']);
  await createChannel(t, 'secret', ['iago', 'othello'], { invite_only: true, history_public_to_subscribers: true });
  ids.run = await sendChannelMessage(t, 'hamlet', 'Denmark', 'mornings', 'We run every morning');
  ids.running = await sendChannelMessage(t, 'cordelia', 'Denmark', 'mornings', 'I am RUNNING late today');
  ids.runs = await sendChannelMessage(t, 'iago', 'Verona', 'sport', 'She runs a marathon');
  ids.fox1 = await sendChannelMessage(t, 'hamlet', 'Denmark', 'animals', 'The quick brown fox jumps');
  ids.fox2 = await sendChannelMessage(t, 'cordelia', 'Denmark', 'animals', 'a fox, brown and quick');
  ids.html = await sendChannelMessage(t, 'hamlet', 'Verona', 'markup', 'Searching **bold** [search here](https://example.com/search) `search code` & extras');
  ids.topic = await sendChannelMessage(t, 'hamlet', 'Denmark', 'Deploy schedule', 'see you there');
  ids.secret = await sendChannelMessage(t, 'iago', 'secret', 'plans', 'running secret plans');
  ids.dm = await sendDirectMessage(t, 'cordelia', ['othello'], 'running in private');
  ids.dmHamlet = await sendDirectMessage(t, 'cordelia', ['hamlet'], 'are you running tomorrow');
});
afterAll(async () => t.close());

const search = async (who: string, narrow: unknown[], n = 100): Promise<any> =>
  expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: n, num_after: 0, narrow }, who as never));
const found = async (who: string, operand: string, extra: unknown[] = []): Promise<number[]> =>
  (await search(who, [...extra, { operator: 'search', operand }])).messages.map((m: any) => m.id);

describe('GET /messages: the search operator', () => {
  it('stems words: running finds run, runs and running (any case)', async () => {
    expect(await found('hamlet', 'running')).toEqual([ids.run, ids.running, ids.runs, ids.dmHamlet]);
    expect(await found('hamlet', 'run')).toEqual([ids.run, ids.running, ids.runs, ids.dmHamlet]);
    expect(await found('hamlet', 'Runs')).toEqual([ids.run, ids.running, ids.runs, ids.dmHamlet]);
  });

  it('several words must all match, in any order, in content or topic', async () => {
    expect(await found('hamlet', 'quick fox')).toEqual([ids.fox1, ids.fox2]);
    expect(await found('hamlet', 'fox marathon')).toEqual([]);
    // "mornings" is the topic, "late" the content.
    expect(await found('hamlet', 'late morning')).toEqual([ids.running]);
  });

  it('a quoted phrase must appear as it is (Zulip: content or topic ILIKE)', async () => {
    expect(await found('hamlet', '"quick brown"')).toEqual([ids.fox1]);
    expect(await found('hamlet', '"Quick Brown" fox')).toEqual([ids.fox1]);
    expect(await found('hamlet', '"brown fox" jumps')).toEqual([ids.fox1]);
    expect(await found('hamlet', '"deploy sched"')).toEqual([]);
    expect(await found('hamlet', '"deploy schedule"')).toEqual([ids.topic]);
  });

  it('stop words are ignored, and stop words alone match nothing (PostgreSQL english)', async () => {
    expect(await found('hamlet', 'the fox')).toEqual([ids.fox1, ids.fox2]);
    expect(await found('hamlet', 'the and')).toEqual([]);
  });

  it('newest first: anchor newest with num_before gives the newest matches', async () => {
    expect(await search('hamlet', [{ operator: 'search', operand: 'run' }], 2).then((b) => b.messages.map((m: any) => m.id))).toEqual([ids.runs, ids.dmHamlet]);
  });

  it('pages from any anchor, both ways (SQLite walks the full-text index from the anchor)', async () => {
    const page = async (anchor: unknown, before: number, after: number): Promise<{ ids: number[]; found: boolean }> => {
      const b = expectSuccess(await t.get('/messages', { anchor, num_before: before, num_after: after, narrow: [{ operator: 'search', operand: 'run' }] }, 'hamlet'));
      return { ids: b.messages.map((m: any) => m.id), found: b.found_anchor };
    };
    expect(await page(ids.running, 1, 1)).toEqual({ ids: [ids.run, ids.running, ids.runs], found: true });
    expect(await page(ids.runs, 0, 0)).toEqual({ ids: [ids.runs], found: true });
    expect(await page('oldest', 0, 2)).toEqual({ ids: [ids.run, ids.running], found: false });
    // An anchor that is not a match: the neighbours on each side, no anchor.
    expect(await page(ids.fox1, 2, 1)).toEqual({ ids: [ids.running, ids.runs, ids.dmHamlet], found: false });
    expect(await page(ids.dmHamlet + 1000, 0, 5)).toEqual({ ids: [], found: false });
  });

  it('combines with other operators, and with a negated search', async () => {
    expect(await found('hamlet', 'run', [{ operator: 'channel', operand: 'Denmark' }])).toEqual([ids.run, ids.running]);
    expect(await found('hamlet', 'run', [{ operator: 'sender', operand: 'iago@zulip.com' }])).toEqual([ids.runs]);
    expect(await found('hamlet', 'run', [{ operator: 'is', operand: 'dm' }])).toEqual([ids.dmHamlet]);
    expect(await found('hamlet', 'run', [{ operator: 'topic', operand: 'mornings' }, { operator: 'channel', operand: 'Denmark' }])).toEqual([ids.run, ids.running]);
    expect(await found('hamlet', 'fox', [{ operator: 'search', operand: 'jumps', negated: true }])).toEqual([ids.fox2]);
  });

  it('access: nothing from a channel or conversation the user cannot see', async () => {
    // hamlet is not in `secret` and not in cordelia's DM with othello.
    expect(await found('hamlet', 'secret plans')).toEqual([]);
    expect(await found('hamlet', 'private')).toEqual([]);
    const refused = await t.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: 'secret' }, { operator: 'search', operand: 'running' }] }, 'hamlet');
    expect(refused.status).toBe(200);
    expect(refused.body.messages).toEqual([]);
    // Subscribers find it; othello finds his DM too.
    expect(await found('othello', 'running')).toEqual([ids.runs, ids.secret, ids.dm]);
    // A public channel's history is searchable by a non-subscriber in a channel narrow (as any narrow).
    expect(await found('othello', 'quick', [{ operator: 'channel', operand: 'Denmark' }])).toEqual([ids.fox1, ids.fox2]);
    // ...but the guest gets nothing from a channel he is not in.
    expect(await found('polonius', 'quick', [{ operator: 'channel', operand: 'Denmark' }])).toEqual([]);
  });

  it('highlights whole stemmed words in match_content, never inside tags or entities', async () => {
    const body = await search('hamlet', [{ operator: 'search', operand: 'search' }]);
    expect(body.messages.map((m: any) => m.id)).toEqual([ids.html]);
    const [m] = body.messages;
    expect(m.content).toBe('<p>Searching <strong>bold</strong> <a href="https://example.com/search">search here</a> <code>search code</code> &amp; extras</p>');
    expect(m.match_content).toBe(
      '<p><span class="highlight">Searching</span> <strong>bold</strong> <a href="https://example.com/search"><span class="highlight">search</span> here</a> <code><span class="highlight">search</span> code</code> &amp; extras</p>',
    );
    expect(m.match_subject).toBe('markup');
    const running = await search('hamlet', [{ operator: 'search', operand: 'run' }, { operator: 'channel', operand: 'Denmark' }]);
    expect(running.messages.map((x: any) => x.match_content)).toEqual(['<p>We <span class="highlight">run</span> every morning</p>', '<p>I am <span class="highlight">RUNNING</span> late today</p>']);
    expect(running.messages.map((x: any) => x.match_subject)).toEqual(['mornings', 'mornings']);
    // "amp" in the entity is not a word.
    const amp = await search('hamlet', [{ operator: 'search', operand: "extras bold" }]);
    expect(amp.messages[0].match_content).toBe(
      '<p>Searching <strong><span class="highlight">bold</span></strong> <a href="https://example.com/search">search here</a> <code>search code</code> &amp; <span class="highlight">extras</span></p>',
    );
  });

  it('apply_markdown=false: content is the Markdown, match_content still the highlighted HTML (a page reads both contents)', async () => {
    const narrow = [{ operator: 'search', operand: 'bold' }];
    const raw = expectSuccess(await t.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow, apply_markdown: false }, 'hamlet')).messages;
    const html = (await search('hamlet', narrow)).messages;
    expect(raw.map((m: any) => m.id)).toEqual([ids.html]);
    expect(raw[0].content).toBe('Searching **bold** [search here](https://example.com/search) `search code` & extras');
    expect(raw[0].content_type).toBe('text/x-markdown');
    expect(raw[0].match_content).toBe(html[0].match_content);
    expect(raw[0].match_content).toContain('<span class="highlight">bold</span>');
    expect(html[0].content).not.toBe(raw[0].content);
  });

  it('topic matches are highlighted in match_subject (HTML-escaped topic)', async () => {
    const body = await search('hamlet', [{ operator: 'search', operand: 'deploying' }]);
    expect(body.messages.map((m: any) => [m.id, m.match_subject, m.match_content])).toEqual([[ids.topic, '<span class="highlight">Deploy</span> schedule', '<p>see you there</p>']]);
  });

  it('the index follows edits, topic moves and deletes in the same transaction', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'edits', 'original wording xylophone');
    expect(await found('hamlet', 'xylophone')).toEqual([id]);
    expectSuccess(await t.patch(`/messages/${id}`, { content: 'changed wording zeppelin' }, 'hamlet'));
    expect(await found('hamlet', 'xylophone')).toEqual([]);
    expect(await found('hamlet', 'zeppelin')).toEqual([id]);
    expectSuccess(await t.patch(`/messages/${id}`, { topic: 'airships galore', propagate_mode: 'change_all', send_notification_to_old_thread: false, send_notification_to_new_thread: false }, 'hamlet'));
    expect(await found('hamlet', 'airship')).toEqual([id]);
    expect(await found('hamlet', 'edits')).toEqual([]);
    expectSuccess(await t.delete(`/messages/${id}`, {}, 'iago'));
    expect(await found('iago', 'zeppelin')).toEqual([]);
  });

  it('a search page costs a fixed number of statements (3: page, people, channel names; the page says no message has reactions), whatever its size', async () => {
    const stats = t.app.ctx.store.stats;
    const measure = async (n: number): Promise<number> => {
      const before = stats.queries;
      await search('hamlet', [{ operator: 'search', operand: 'run' }], n);
      return stats.queries - before;
    };
    expect(await measure(2)).toBe(3);
    expect(await measure(50)).toBe(3);
  });
});

// Inline patterns that refer to realm objects: user and group mentions, channel, topic
// and message links, and <time:...> global times (spec §11, §12, §17).
import { element, escapeText } from './html.js';
import { regexFinder, type InlinePattern, type InlineRun } from './inline-engine.js';
import { channelSlug, encodeHashComponent } from './links.js';
import { parseGlobalTime } from './time.js';
import type { MentionUser } from './types.js';

// Mentions and channel links must start at the beginning, after whitespace or after one
// of ' " ( { [ / < (so "x@**A**" is not a mention).
const BEFORE = `(?<![^\\s'"({[/<])`;
const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);

const textSpan = (attrs: Record<string, string>, text: string) =>
  ({ kind: 'html' as const, html: element('span', attrs, escapeText(text)) });

function lookupUser(run: InlineRun, name: string): MentionUser | undefined | null {
  const users = run.state.ctx.users;
  const idSyntax = /^(.+)?\|(\d+)$/su.exec(name);
  if (idSyntax) {
    const user = users.byId(Number(idSyntax[2]));
    // "@**Name|id**" must name that very user, else it is not a mention at all.
    if (idSyntax[1] !== undefined && user && user.fullName !== idSyntax[1]) return null;
    return user;
  }
  return users.byName(name)[0];
}

/** @**Name**, @**Name|id**, @**|id**, @_**Name** and the wildcards. */
export const userMention: InlinePattern = {
  name: 'usermention',
  find: regexFinder(new RegExp(`${BEFORE}@(_?)\\*\\*([^*]+)\\*\\*`, 'gu'), /@/),
  handle: (m, _data, run) => {
    const name = m.groups[2]!;
    // Inside quotes every mention is shown silently and notifies nobody.
    let silent = m.groups[1] === '_' || run.state.quoteDepth > 0;
    const result = run.state.result;
    if (STREAM_WILDCARDS.has(name)) {
      if (!silent) result.streamWildcardMentioned = true;
      const cls = 'user-mention channel-wildcard-mention' + (silent ? ' silent' : '');
      return { node: textSpan({ class: cls, 'data-user-id': '*' }, silent ? name : `@${name}`) };
    }
    if (name === 'topic') {
      if (!silent) result.topicWildcardMentioned = true;
      return { node: textSpan({ class: silent ? 'topic-mention silent' : 'topic-mention' }, silent ? name : '@topic') };
    }
    const user = lookupUser(run, name);
    if (!user) return null;
    if (user.isActive === false) silent = true;
    if (!silent) result.mentionedUserIds.add(user.id);
    const attrs = { class: silent ? 'user-mention silent' : 'user-mention', 'data-user-id': String(user.id) };
    return { node: textSpan(attrs, silent ? user.fullName : `@${user.fullName}`) };
  },
};

/** @*group*, @_*group*. */
export const groupMention: InlinePattern = {
  name: 'usergroupmention',
  find: regexFinder(new RegExp(`${BEFORE}@(_?)\\*([^*]+)\\*`, 'gu'), /@/),
  handle: (m, _data, run) => {
    const group = run.state.ctx.groups.byName(m.groups[2]!);
    if (!group) return null;
    const silent = m.groups[1] === '_' || run.state.quoteDepth > 0 || !!group.deactivated || !!group.isSystemGroup;
    if (!silent) run.state.result.mentionedGroupIds.add(group.id);
    const attrs = { class: silent ? 'user-group-mention silent' : 'user-group-mention', 'data-user-group-id': String(group.id) };
    return { node: textSpan(attrs, silent ? group.name : `@${group.name}`) };
  },
};

function topicHref(channelId: number, channelName: string, topic: string): string {
  return `/#narrow/channel/${channelSlug(channelId, channelName)}/topic/${encodeHashComponent(topic)}`;
}

function topicText(run: InlineRun, channel: string, topic: string): string {
  if (topic !== '') return run.expand(`#${channel} > ${topic}`);
  return `${escapeText(`#${channel} > `)}<em>${escapeText(run.state.ctx.emptyTopicName ?? 'general chat')}</em>`;
}

/** #**channel>topic@123**: a link to one message. */
export const messageLink: InlinePattern = {
  name: 'stream_topic_message',
  find: regexFinder(new RegExp(`${BEFORE}#\\*\\*([^*>]+)>([^*]*)@(\\d+)\\*\\*`, 'gu'), /#\*\*/),
  handle: (m, _data, run) => {
    const channel = run.state.ctx.channels.byName(m.groups[1]!);
    if (!channel) return null;
    const topic = m.groups[2]!;
    const href = `${topicHref(channel.id, channel.name, topic)}/near/${m.groups[3]}`;
    const text = topic === ''
      ? `${topicText(run, channel.name, '')}${escapeText(' @ 💬')}`
      : run.expand(`#${channel.name} > ${topic} @ 💬`);
    return { node: { kind: 'html', html: element('a', { class: 'message-link', href }, text) } };
  },
};

/** #**channel>topic**: a topic link, ending in /with/<latest id> when the topic has messages. */
export const topicLink: InlinePattern = {
  name: 'topic',
  find: regexFinder(new RegExp(`${BEFORE}#\\*\\*([^*>]+)>([^*]*)\\*\\*`, 'gu'), /#\*\*/),
  handle: (m, _data, run) => {
    const ctx = run.state.ctx;
    const channel = ctx.channels.byName(m.groups[1]!);
    if (!channel) return null;
    const topic = m.groups[2]!;
    let href = topicHref(channel.id, channel.name, topic);
    const latest = ctx.latestTopicMessageId?.(channel.id, topic);
    if (latest !== undefined) href += `/with/${latest}`;
    const attrs = { class: 'stream-topic', 'data-stream-id': String(channel.id), href };
    return { node: { kind: 'html', html: element('a', attrs, topicText(run, channel.name, topic)) } };
  },
};

/** #**channel**. The name match is exact and case-sensitive. */
export const channelLink: InlinePattern = {
  name: 'stream',
  find: regexFinder(new RegExp(`${BEFORE}#\\*\\*([^*]+)\\*\\*`, 'gu'), /#\*\*/),
  handle: (m, _data, run) => {
    const channel = run.state.ctx.channels.byName(m.groups[1]!);
    if (!channel) return null;
    const attrs = { class: 'stream', 'data-stream-id': String(channel.id), href: `/#narrow/channel/${channelSlug(channel.id, channel.name)}` };
    return { node: { kind: 'html', html: element('a', attrs, escapeText(`#${channel.name}`)) } };
  },
};

/** <time:...>: a <time> in UTC, or Zulip's timestamp-error span. */
export const globalTime: InlinePattern = {
  name: 'timestamp',
  find: regexFinder(/<time:([^>]*?)>/g, /<time:/),
  handle: (m, _data, run) => {
    const input = m.groups[1]!;
    const iso = parseGlobalTime(input);
    if (iso === null) {
      const html = element('span', { class: 'timestamp-error' }, run.expand(`Invalid time format: ${input}`));
      return { node: { kind: 'html', html } };
    }
    return { node: { kind: 'html', html: element('time', { datetime: iso }, run.expand(input)) } };
  },
};

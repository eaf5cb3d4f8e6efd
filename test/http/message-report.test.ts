import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, startTestServer, type Res, type TestServer } from '../support/server.js';
import { createChannel, newestMessages, sendChannelMessage, sendDirectMessage } from '../support/messages.js';
import { plain, realmSetting } from '../support/channels.js';
import { expectStateConsistent } from '../support/events.js';

/** POST /messages/{message_id}/report (Zulip's views/message_report.py, lib/message_report.py). */

let t: TestServer;
let general: number;
let secret: number;
let modChannel: number;
beforeAll(async () => {
  t = await startTestServer();
  general = await createChannel(t, 'report general', ['hamlet', 'othello', 'cordelia']);
  secret = await createChannel(t, 'report secret', ['othello'], { invite_only: true });
  modChannel = await createChannel(t, 'moderation', ['iago', 'shiva'], { invite_only: true });
});
afterAll(async () => t.close());

const base = () => t.config.externalScheme + '://' + t.config.externalHost;
const FULL_NAMES = { hamlet: 'King Hamlet', othello: 'Othello, the Moor of Venice', cordelia: "Cordelia, Lear's daughter", iago: 'Iago' } as const;
const mention = (who: keyof typeof FULL_NAMES) => `@_**${FULL_NAMES[who]}|${t.users[who].id}**`;
const when = async (id: number) => {
  const [m] = await t.app.ctx.db.selectFrom('messages').select('date_sent').where('id', '=', id).execute();
  return `<time:${new Date(Number(m!.date_sent) * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;
};
const messageCount = async () => Number((await t.app.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

async function refused(res: () => Promise<Res>, status: number, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await messageCount();
  let r: Res | undefined;
  const events = await t.captureEvents(async () => {
    r = await res();
  });
  expectError(r!, status, code, msg, extra);
  expect(events).toEqual([]);
  expect(await messageCount()).toBe(before);
}

/** The newest message in the moderation channel, as Iago (a member) sees it. */
const latestReport = async () => (await newestMessages(t, 'iago', [{ operator: 'channel', operand: modChannel }], 1, { apply_markdown: false }))[0];
const latestConfirmation = async (who: 'hamlet' | 'othello') => (await newestMessages(t, who, [{ operator: 'dm', operand: 'notification-bot@zulip.com' }], 1, { apply_markdown: false }))[0];

describe('POST /messages/{message_id}/report', () => {
  it('is refused while the realm has no moderation request channel', async () => {
    const id = await sendChannelMessage(t, 'othello', general, 'food', 'pineapple');
    await refused(() => t.post(`/messages/${id}/report`, { report_type: 'spam' }, 'hamlet'), 400, 'BAD_REQUEST', 'Message reporting is not enabled in this organization.');
    await realmSetting(t, 'moderation_request_channel_id', modChannel);
  });

  it("posts Zulip's report into the moderation channel as Notification Bot, then a confirmation DM", async () => {
    const id = await sendChannelMessage(t, 'othello', general, 'food', 'I like pineapple on **pizza**');
    let res: Res | undefined;
    const deliveries = plain(
      await t.captureEvents(async () => {
        res = await t.post(`/messages/${id}/report`, { report_type: 'harassment', description: 'crime against food' }, 'hamlet');
      }),
    );
    expect(expectSuccess(res!)).toEqual({ result: 'success', msg: '' });
    const report = await latestReport();
    const link = `#**report general>food@${id}**`;
    expect(report.content).toBe(
      `${mention('hamlet')} reported a message sent by ${mention('othello')} at ${await when(id)}.\n` +
        '```quote\n**Harassment**. crime against food\n```\n\n' +
        `\`\`\` spoiler Original message at ${link}\nI like pineapple on **pizza**\n\`\`\``,
    );
    expect(report.subject).toBe('Othello, the Moor of Venice moderation');
    expect(report.sender_email).toBe('notification-bot@zulip.com');
    const confirmation = await latestConfirmation('hamlet');
    expect(confirmation.content).toBe(`You reported [a message](${base()}/#narrow/channel/${general}-report-general/topic/food/near/${id}) for harassment.`);
    // Events: the report to the moderation channel's members, then the DM to the reporter.
    const messages = deliveries.filter((d) => d.event.type === 'message');
    expect(messages.map((d) => [(d.event.message as { id: number }).id, d.userIds])).toEqual([
      [report.id, [t.users.iago.id, t.users.shiva.id].sort((a, b) => a - b)],
      // (the sending bot is a recipient of its own DM, as for every internal DM)
      [confirmation.id, [t.users.hamlet.id, confirmation.sender_id].sort((a, b) => a - b)],
    ]);
    // The moderation channel got its first message (its creation notice was removed by the fixture).
    expect(deliveries.filter((d) => d.event.type !== 'message')).toEqual([
      { event: { type: 'stream', op: 'update', property: 'first_message_id', value: report.id, stream_id: modChannel, name: 'moderation' }, userIds: [t.users.owner.id, t.users.iago.id, t.users.shiva.id].sort((a, b) => a - b) },
    ]);
    // Hamlet (no member of the moderation channel) cannot see the report.
    expectError(await t.get(`/messages/${report.id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('validates report_type and description; "other" needs an explanation', async () => {
    const id = await sendChannelMessage(t, 'othello', general, 'food', 'anchovies');
    await refused(() => t.post(`/messages/${id}/report`, { report_type: 'rude' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid report_type');
    await refused(() => t.post(`/messages/${id}/report`, {}, 'hamlet'), 400, 'REQUEST_VARIABLE_MISSING', "Missing 'report_type' argument", { var_name: 'report_type' });
    await refused(() => t.post(`/messages/${id}/report`, { report_type: 'other' }, 'hamlet'), 400, 'BAD_REQUEST', 'An explanation is required.');
    await refused(() => t.post(`/messages/${id}/report`, { report_type: 'spam', description: 'x'.repeat(1001) }, 'hamlet'), 400, 'BAD_REQUEST', 'description is too long (limit: 1000 characters)');
    expectSuccess(await t.post(`/messages/${id}/report`, { report_type: 'other', description: 'x'.repeat(1000) }, 'hamlet'));
    expect((await latestReport()).content).toContain('```quote\n**Other reason**. ' + 'x'.repeat(1000) + '\n```');
    expectSuccess(await t.post(`/messages/${id}/report`, { report_type: 'norms' }, 'hamlet'));
    expect((await latestReport()).content).toContain('```quote\n**Violates community norms**. \n```');
    expect((await latestConfirmation('hamlet')).content).toMatch(/ for violates community norms\.$/);
  });

  it('refuses messages the caller cannot read with the error of a missing one', async () => {
    const hidden = await sendChannelMessage(t, 'othello', secret, 'x', 'secret stuff');
    await refused(() => t.post(`/messages/${hidden}/report`, { report_type: 'spam' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    await refused(() => t.post('/messages/99999999/report', { report_type: 'spam' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    const dm = await sendDirectMessage(t, 'othello', ['cordelia'], 'psst');
    await refused(() => t.post(`/messages/${dm}/report`, { report_type: 'spam' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('direct messages: 1:1, own 1:1 (names the recipient), to oneself, and group DMs', async () => {
    const dm = await sendDirectMessage(t, 'othello', ['hamlet'], 'I dip fries in ice cream');
    const pair = [t.users.hamlet.id, t.users.othello.id].sort((a, b) => a - b).join(',');
    expectSuccess(await t.post(`/messages/${dm}/report`, { report_type: 'spam' }, 'hamlet'));
    expect((await latestReport()).content).toBe(
      `${mention('hamlet')} reported a message sent by ${mention('othello')} at ${await when(dm)}.\n` +
        '```quote\n**Spam**. \n```\n\n' +
        `\`\`\` spoiler [Original message](${base()}/#narrow/dm/${pair}-dm/near/${dm})\nI dip fries in ice cream\n\`\`\``,
    );
    expect((await latestConfirmation('hamlet')).content).toBe(`You reported [a message](${base()}/#narrow/dm/${pair}-dm/near/${dm}) for spam.`);
    // Reporting one's own message is allowed; the header names the recipient.
    expectSuccess(await t.post(`/messages/${dm}/report`, { report_type: 'spam' }, 'othello'));
    expect((await latestReport()).content).toMatch(new RegExp(`^${escape(`${mention('othello')} reported a message sent by ${mention('othello')} to ${mention('hamlet')} at `)}`));
    const self = await sendDirectMessage(t, 'othello', ['othello'], 'note to self');
    expectSuccess(await t.post(`/messages/${self}/report`, { report_type: 'spam' }, 'othello'));
    expect((await latestReport()).content).toMatch(new RegExp(`^${escape(`${mention('othello')} reported a message sent by ${mention('othello')} to ${mention('othello')} at `)}`));
    // Group DM: the recipients other than the sender, in id order, as a list.
    const gdm = await sendDirectMessage(t, 'othello', ['hamlet', 'cordelia', 'iago'], 'I eat cereal with water');
    expectSuccess(await t.post(`/messages/${gdm}/report`, { report_type: 'inappropriate' }, 'hamlet'));
    const others = (['hamlet', 'cordelia', 'iago'] as const).slice().sort((a, b) => t.users[a].id - t.users[b].id).map(mention);
    const all = [t.users.hamlet.id, t.users.cordelia.id, t.users.iago.id, t.users.othello.id].sort((a, b) => a - b).join(',');
    const report = await latestReport();
    expect(report.content).toBe(
      `${mention('hamlet')} reported a message sent by ${mention('othello')} to ${others[0]}, ${others[1]}, and ${others[2]} at ${await when(gdm)}.\n` +
        '```quote\n**Inappropriate content**. \n```\n\n' +
        `\`\`\` spoiler [Original message](${base()}/#narrow/dm/${all}-group/near/${gdm})\nI eat cereal with water\n\`\`\``,
    );
  });

  it('picks a fence longer than any in the message, truncates long messages, and uses the empty topic when the channel requires it', async () => {
    const fenced = await sendChannelMessage(t, 'othello', general, 'code', '````\ncode\n````');
    expectSuccess(await t.post(`/messages/${fenced}/report`, { report_type: 'spam' }, 'hamlet'));
    expect((await latestReport()).content).toMatch(/\n````` spoiler Original message at #\*\*report general>code@\d+\*\*\n````\ncode\n````\n`````$/);
    const long = await sendChannelMessage(t, 'othello', general, 'long', 'y'.repeat(9000));
    expectSuccess(await t.post(`/messages/${long}/report`, { report_type: 'spam' }, 'hamlet'));
    expect((await latestReport()).content).toContain('\n' + 'y'.repeat(8500 - 20) + '\n[message truncated]\n```');
    // Names the #**…>…@id** syntax cannot carry get a plain Markdown link.
    const odd = await createChannel(t, 'odd*name', ['othello']);
    const oddMsg = await sendChannelMessage(t, 'othello', odd, 'a>b', 'hm');
    expectSuccess(await t.post(`/messages/${oddMsg}/report`, { report_type: 'spam' }, 'hamlet'));
    expect((await latestReport()).content).toContain(`spoiler Original message at [#odd&#42;name > a&gt;b @ 💬](#narrow/channel/${odd}-odd*name/topic/a.3Eb/near/${oddMsg})`);
    expectSuccess(await t.patch(`/streams/${modChannel}`, { topics_policy: 'empty_topic_only' }, 'iago'));
    expectSuccess(await t.post(`/messages/${long}/report`, { report_type: 'spam' }, 'hamlet'));
    const emptyTopic = await t.app.ctx.db.selectFrom('messages').select('topic').where('id', '=', (await latestReport()).id).executeTakeFirstOrThrow();
    expect(emptyTopic.topic).toBe('');
    expectSuccess(await t.patch(`/streams/${modChannel}`, { topics_policy: 'inherit' }, 'iago'));
  });

  it("stale /register + the report's events == fresh /register, for a moderator and for the reporter", async () => {
    const id = await sendChannelMessage(t, 'othello', general, 'food', 'olives on pizza');
    const params = { event_types: ['message', 'update_message_flags', 'stream'], fetch_event_types: ['message', 'update_message_flags', 'recent_private_conversations'] };
    await expectStateConsistent(t, 'iago', () => t.post(`/messages/${id}/report`, { report_type: 'spam' }, 'hamlet'), params);
    await expectStateConsistent(t, 'hamlet', () => t.post(`/messages/${id}/report`, { report_type: 'norms' }, 'hamlet'), params);
  });

  it('an archived moderation channel turns reporting off', async () => {
    const id = await sendChannelMessage(t, 'othello', general, 'food', 'olives');
    expectSuccess(await t.delete(`/streams/${modChannel}`, {}, 'iago'));
    await refused(() => t.post(`/messages/${id}/report`, { report_type: 'spam' }, 'hamlet'), 400, 'BAD_REQUEST', 'Message reporting is not enabled in this organization.');
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

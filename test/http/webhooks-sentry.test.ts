import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from '../support/server.js';
import { expectChannelMessage, messagesSentBy, postHook, setupHook, type Hook } from '../support/webhooks.js';

/**
 * Sentry internal-integration payloads shaped as Sentry's documentation shows
 * them (only the fields read), with the topics and Markdown of Zulip's Sentry
 * integration (zerver/webhooks/sentry/tests.py).
 */
let t: TestServer;
let hook: Hook;
beforeAll(async () => {
  t = await startTestServer();
  hook = await setupHook(t, 'sentryhook', 'sentry');
});
afterAll(async () => t.close());

const WEB = 'https://sentry.io/organizations/acme/issues/1635244907/events/599349254a1447a99774b5310711c1a8/';
const pythonEvent = (over: Record<string, unknown> = {}) => ({
  action: 'created',
  data: {
    event: {
      title: 'Exception: Custom exception!',
      version: '7',
      platform: 'python',
      level: 'error',
      web_url: WEB,
      datetime: '2020-04-28T13:56:05.123456Z',
      metadata: { filename: 'trigger-exception.py', type: 'Exception' },
      exception: {
        values: [
          {
            type: 'Exception',
            value: 'Custom exception!',
            stacktrace: {
              frames: [
                { filename: 'other.py', context_line: 'x = 1', pre_context: [], post_context: [] },
                {
                  filename: 'trigger-exception.py',
                  pre_context: ['', '', 'if __name__ == "__main__":', '    sentry_sdk.init(dsn=SECRET_DSN)', '    try:'],
                  context_line: '        raise Exception("Custom exception!")',
                  post_context: ['    except Exception as e:', '        sentry_sdk.capture_exception(e)'],
                },
              ],
            },
          },
        ],
      },
      ...over,
    },
  },
  actor: { type: 'application', name: 'Sentry' },
});

describe('Sentry integration', () => {
  it('an exception event with its traceback', async () => {
    await expectChannelMessage(t, hook, 'sentry', {}, pythonEvent(), {}, 'Exception: Custom exception!',
      `**New exception:** [Exception: Custom exception!](${WEB})\n\`\`\`quote\n**level:** error\n**timestamp:** 2020-04-28 13:56:05\n**filename:** trigger-exception.py\n\`\`\`\n\nTraceback:\n\`\`\`python3\n\n\n     if __name__ == "__main__":\n         sentry_sdk.init(dsn=SECRET_DSN)\n         try:\n--->         raise Exception("Custom exception!")\n         except Exception as e:\n             sentry_sdk.capture_exception(e)\n\`\`\``);
  });

  it('an exception without a matching frame, and a long title cut to 60 characters', async () => {
    const title = "TypeError: Cannot read properties of null (reading 'insertBefore')";
    await expectChannelMessage(t, hook, 'sentry', {}, pythonEvent({ title, platform: 'javascript', metadata: { filename: null } }), {}, "TypeError: Cannot read properties of null (reading 'inser...",
      `**New exception:** [${title}](${WEB})\n\`\`\`quote\n**level:** error\n**timestamp:** 2020-04-28 13:56:05\n**filename:** None\n\`\`\``);
  });

  it('a message event', async () => {
    const event = { title: 'A simple message-based issue.', version: '7', platform: 'python', level: 'info', web_url: WEB, datetime: '2020-04-28T14:05:04.000Z', logentry: { formatted: 'A simple message-based issue.' } };
    await expectChannelMessage(t, hook, 'sentry', {}, { action: 'created', data: { event } }, {}, 'A simple message-based issue.',
      `**New message event:** [A simple message-based issue.](${WEB})\n\`\`\`quote\n**level:** info\n**timestamp:** 2020-04-28 14:05:04\n\`\`\``);
  });

  it('issues created, assigned to a team, resolved and ignored', async () => {
    const issue = (over: Record<string, unknown> = {}) => ({ title: 'Exception: program has entered an invalid state.', level: 'error', lastSeen: '2020-04-28T13:56:05.000Z', assignedTo: null, ...over });
    const actor = { type: 'user', name: 'Hemanth V. Alluri' };
    const topic = 'Exception: program has entered an invalid state.';
    await expectChannelMessage(t, hook, 'sentry', {}, { action: 'created', data: { issue: issue() }, actor }, {}, topic,
      '**New issue created:** Exception: program has entered an invalid state.\n```quote\n**level:** error\n**timestamp:** 2020-04-28 13:56:05\n**assignee:** No one\n```');
    await expectChannelMessage(t, hook, 'sentry', {}, { action: 'assigned', data: { issue: issue({ assignedTo: { type: 'team', name: 'lone-wolf' } }) }, actor }, {}, topic,
      'Issue **Exception: program has entered an invalid state.** has now been assigned to **team lone-wolf** by **Hemanth V. Alluri**.');
    await expectChannelMessage(t, hook, 'sentry', {}, { action: 'resolved', data: { issue: issue() }, actor }, {}, topic, 'Issue **Exception: program has entered an invalid state.** was marked as resolved by **Hemanth V. Alluri**.');
    await expectChannelMessage(t, hook, 'sentry', {}, { action: 'ignored', data: { issue: issue() }, actor }, {}, topic, 'Issue **Exception: program has entered an invalid state.** was ignored by **Hemanth V. Alluri**.');
  });

  it('the deprecated plugin payload', async () => {
    await expectChannelMessage(t, hook, 'sentry', {}, { project_name: 'zulip', level: 'error', url: 'https://sentry.io/zulip/zulip/issues/156699934/', message: 'This is an example python exception' }, {}, 'zulip',
      'New [issue](https://sentry.io/zulip/zulip/issues/156699934/) (level: ERROR):\n\n``` quote\nThis is an example python exception\n```');
  });

  it('Raven SDK events and unknown issue actions are unsupported; bad payloads are 400s', async () => {
    const q = { api_key: hook.key, stream: hook.channel };
    const { res, sent } = await messagesSentBy(t, () => postHook(t, 'sentry', q, pythonEvent({ version: '6' })));
    expect({ status: res.status, body: res.body, sent }).toEqual({
      status: 200,
      body: { result: 'success', msg: "The 'Raven SDK' event isn't currently supported by the Sentry webhook; ignoring", code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE', webhook_name: 'Sentry', event_type: 'Raven SDK' },
      sent: [],
    });
    expect((await postHook(t, 'sentry', q, { action: 'archived', data: { issue: { title: 'x', assignedTo: null } }, actor: {} })).body.event_type).toBe('unknown-issue-action type');
    expectError(await postHook(t, 'sentry', q, { project_name: 'zulip' }), 400, 'BAD_REQUEST', 'payload["level"] is missing');
    expectError(await postHook(t, 'sentry', q, '{'), 400, 'INVALID_JSON', 'Malformed JSON');
  });
});

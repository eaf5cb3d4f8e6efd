import type { AppCtx } from '../context.js';
import { transact } from '../context.js';
import type { UserRow } from '../../store/users.js';
import type { ChannelRow } from '../../store/channels.js';
import { doCreateChannel } from './channels.js';
import { doSetRealmProperty } from './realm-settings.js';
import { internalSendChannelMessage, removeSingleNewlines } from './internal-send.js';
import { subscribeNewHumanUser } from './onboarding.js';

/**
 * What a new organization starts with (Zulip's do_create_realm and
 * send_initial_realm_messages, zerver/actions/create_realm.py and
 * zerver/lib/onboarding.py), "Zulip" read as Parley:
 *  - channels "Parley" (Questions and discussion about using Parley.),
 *    "sandbox" (Experiment with Parley here. :test_tube:) and "general"
 *    (For team-wide conversations), created in that order, all three default channels;
 *  - general receives the new-channel, signup and update announcements;
 *  - the owner is subscribed to them, and Welcome Bot posts the topics
 *    "moving messages", "experiments", "start a conversation", "greetings"
 *    and, last, "welcome to Parley!".
 */

export const GENERAL_CHANNEL = 'general';
export const DISCUSSION_CHANNEL = 'Parley';
export const SANDBOX_CHANNEL = 'sandbox';
export const WELCOME_TOPIC = 'welcome to Parley!';

const H = 'https://zulip.com/help';

function initialMessages(): { channel: string; topic: string; content: string }[] {
  const nl = removeSingleNewlines;
  const moving = [
    nl(`
If anything is out of place, it’s easy to [move messages](${H}/move-content-to-another-topic),
[rename](${H}/rename-a-topic) and [split](${H}/move-content-to-another-topic) topics,
or even move a topic [to a different channel](${H}/move-content-to-another-channel).
`),
    nl(`
:point_right: Try moving this message to another topic and back.
`),
  ];
  const experiments = [
    nl(`
:point_right:  Use this topic to try out [Parley's messaging features](${H}/format-your-message-using-markdown).
`),
    nl(`
\`\`\`spoiler Want to see some examples?

\`\`\`\`python

print("code blocks")

\`\`\`\`

- bulleted
- lists

Link to a conversation: #**${DISCUSSION_CHANNEL}>${WELCOME_TOPIC}**

\`\`\`
`),
  ];
  const start = [
    nl(`
To kick off a new conversation, pick a channel in the left sidebar, and click
the \`+\` button next to its name.
`),
    nl(`
Label your conversation with a topic. Think about finishing the sentence: “Hey,
can we chat about…?”
`),
    nl(`
:point_right: Try starting a new conversation in this channel.
`),
  ];
  const greetings = [
    nl(`
This **greetings** topic is a great place to say “hi” :wave: to your teammates.
`),
    nl(`
:point_right: Click on this message to start a new message in the same conversation.
`),
  ];
  const welcome = [
    nl(`
Parley is organized to help you communicate more efficiently. Conversations are
labeled with topics, which summarize what the conversation is about.

For example, this message is in the “${WELCOME_TOPIC}” topic in the
#**${DISCUSSION_CHANNEL}** channel, as you can see in the left sidebar
and above.
`),
    nl(`
You can read Parley one conversation at a time, seeing each message in context,
no matter how many other conversations are going on.
`),
    nl(`
:point_right: When you're ready, check out your [Inbox](/#inbox) for other
conversations with unread messages.
`),
  ];
  return [
    ...moving.map((content) => ({ channel: DISCUSSION_CHANNEL, topic: 'moving messages', content })),
    ...experiments.map((content) => ({ channel: SANDBOX_CHANNEL, topic: 'experiments', content })),
    ...start.map((content) => ({ channel: SANDBOX_CHANNEL, topic: 'start a conversation', content })),
    ...greetings.map((content) => ({ channel: GENERAL_CHANNEL, topic: 'greetings', content })),
    ...welcome.map((content) => ({ channel: DISCUSSION_CHANNEL, topic: WELCOME_TOPIC, content })),
  ];
}

/**
 * Lets the event loop take what arrived (connections, requests) before the next step. Without
 * it, steps whose statements are synchronous (SQLite) would run back to back in microtasks and
 * hold every request until the last one. Two passes of the loop: a connection accepted in the
 * first has its request read, and answered, in the second, before the next step starts (with
 * one pass, a new client's first request waited for two steps).
 */
async function yieldToRequests(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Creates the first-start channels and messages; the owner must exist (and the system bots). */
export async function createInitialRealmContent(app: AppCtx, realmId: number, owner: UserRow): Promise<ChannelRow[]> {
  const specs = [
    { name: DISCUSSION_CHANNEL, description: 'Questions and discussion about using Parley.' },
    { name: SANDBOX_CHANNEL, description: 'Experiment with Parley here. :test_tube:' },
    { name: GENERAL_CHANNEL, description: 'For team-wide conversations' },
  ];
  // One transaction per channel, and one for the announcement settings and the owner's
  // subscriptions, with the event loop free between them: at the first start this runs right
  // after the server starts answering, and the first channel description rendered (Markdown
  // and the emoji tables, built at first use) is cold work, 20-30 ms that a single transaction
  // for all of it held every request for (P10: the first answer waited for it).
  const channels: ChannelRow[] = [];
  for (const s of specs) {
    await yieldToRequests();
    channels.push(
      await transact(app, (tx) =>
        doCreateChannel(app, tx, realmId, owner.id, {
          name: s.name,
          description: s.description,
          inviteOnly: false,
          isWebPublic: false,
          historyPublicToSubscribers: null,
          messageRetentionDays: null,
          topicsPolicy: 'inherit',
          folderId: null,
          isDefault: true,
          groupSettings: {},
        }),
      ),
    );
  }
  await yieldToRequests();
  await transact(app, async (tx) => {
    const general = channels[2]!;
    for (const name of ['new_stream_announcements_stream_id', 'signup_announcements_stream_id', 'zulip_update_announcements_stream_id']) {
      await doSetRealmProperty(tx, realmId, name, general.id);
    }
    await subscribeNewHumanUser(app, tx, owner, { channelIds: [], includeDefaults: true, referrerId: null, notifyReferrer: false });
  });
  const byName = new Map(channels.map((c) => [c.name, c]));
  for (const m of initialMessages()) {
    // Each send is its own transaction; between them the event loop takes the requests that
    // arrived meanwhile (the server answers while Welcome Bot posts, src/app.ts).
    await yieldToRequests();
    await internalSendChannelMessage(app, { realmId, bot: 'welcome', channelId: byName.get(m.channel)!.id, topic: m.topic, content: m.content });
  }
  return channels;
}

import { at, list, message, optStr, str, unsupported, type Integration, type WebhookResult } from './types.js';

/**
 * Sentry, after Zulip's zerver/webhooks/sentry/view.py. Internal-integration
 * payloads: data.event (an exception with the frame of metadata.filename as a
 * traceback, or a message event) and data.issue with `action` created /
 * resolved / assigned / ignored; anything without `data` is the deprecated
 * plugin payload. The topic is the event or issue title (the framework cuts it
 * to 60 characters as Zulip does). Raven SDK events (version < 7) are
 * "The 'Raven SDK' event isn't currently supported by the Sentry webhook".
 */
const HIGHLIGHT: Record<string, string> = { go: 'go', java: 'java', javascript: 'javascript', node: 'javascript', python: 'python3', ruby: 'ruby' };

const when = (s: string): string => s.split('.')[0]!.replace('T', ' ');

/** Zulip's convert_lines_to_traceback_string: five spaces before each line, blank lines kept. */
function tracebackLines(lines: unknown): string {
  if (!Array.isArray(lines)) return '';
  return lines.map((l) => (l === '' ? '\n' : `     ${String(l)}\n`)).join('');
}

function eventPayload(p: unknown): WebhookResult {
  const title = str(p, 'title');
  if (Number.parseInt(String(at(p, 'version') ?? '0'), 10) < 7) return unsupported('Raven SDK');
  const lang = HIGHLIGHT[optStr(p, 'platform') ?? ''] ?? '';
  const head = (kind: string) => `**${kind}:** [${title}](${str(p, 'web_url')})\n\`\`\`quote\n**level:** ${str(p, 'level')}\n**timestamp:** ${when(str(p, 'datetime'))}\n`;
  if (at(p, 'exception') !== undefined) {
    const filename = optStr(p, 'metadata', 'filename');
    let body = `${head('New exception')}**filename:** ${filename ?? 'None'}\n\`\`\`\n`;
    const values = list(p, 'exception', 'values');
    const withStack = values.findIndex((v) => v !== null && typeof v === 'object' && 'stacktrace' in v);
    if (withStack >= 0) {
      const frames = list(p, 'exception', 'values', withStack, 'stacktrace', 'frames');
      const i = frames.findIndex((f) => at(f, 'filename') === filename);
      if (i >= 0) {
        const frame = frames[i];
        const context = `${str(frame, 'context_line')}\n`;
        body += `\nTraceback:\n\`\`\`${lang}\n${tracebackLines(at(frame, 'pre_context'))}---> ${context}${tracebackLines(at(frame, 'post_context'))}\`\`\`\n`;
      }
    }
    return message(title, body);
  }
  if (at(p, 'logentry') !== undefined) return message(title, `${head('New message event')}\`\`\`\n`);
  return unsupported('unknown-event type');
}

function issuePayload(action: string, issue: unknown, actor: unknown): WebhookResult {
  const title = str(issue, 'title');
  const assigned = at(issue, 'assignedTo');
  const assignee = assigned ? (at(assigned, 'type') === 'team' ? `team ${str(assigned, 'name')}` : str(assigned, 'name')) : 'No one';
  switch (action) {
    case 'created':
      return message(title, `**New issue created:** ${title}\n\`\`\`quote\n**level:** ${str(issue, 'level')}\n**timestamp:** ${when(str(issue, 'lastSeen'))}\n**assignee:** ${assignee}\n\`\`\``);
    case 'resolved':
      return message(title, `Issue **${title}** was marked as resolved by **${str(actor, 'name')}**.`);
    case 'assigned':
      return message(title, `Issue **${title}** has now been assigned to **${assignee}** by **${str(actor, 'name')}**.`);
    case 'ignored':
      return message(title, `Issue **${title}** was ignored by **${str(actor, 'name')}**.`);
    default:
      return unsupported('unknown-issue-action type');
  }
}

export const sentryIntegration: Integration = {
  name: 'sentry',
  displayName: 'Sentry',
  ownParams: [],
  events: [],
  handle: ({ payload: p }): WebhookResult => {
    const data = at(p, 'data');
    if (data && typeof data === 'object') {
      if ('event' in data) return eventPayload(at(data, 'event'));
      if ('issue' in data) return issuePayload(str(p, 'action'), at(data, 'issue'), at(p, 'actor'));
      return unsupported(`[${Object.keys(data).map((k) => `'${k}'`).join(', ')}]`);
    }
    // The deprecated plugin payload.
    const level = str(p, 'level').toUpperCase();
    const topic = String(at(p, 'project_name') ?? 'None');
    return message(topic, `New [issue](${String(at(p, 'url') ?? 'None')}) (level: ${level}):\n\n\`\`\` quote\n${String(at(p, 'message') ?? 'None')}\n\`\`\``);
  },
};

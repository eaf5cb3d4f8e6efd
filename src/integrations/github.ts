import { JsonableError, badRequest } from '../domain/errors.js';
import { branchNotifiable, prOrIssueMessage, pushCommitsMessage, pushTagMessage, setupMessage, topicWithBranch, topicWithPrOrIssue, type CommitData } from './git.js';
import { at, bool, ignore, int, list, message, optStr, str, unsupported, type Integration, type WebhookInput, type WebhookResult } from './types.js';

/**
 * GitHub, after Zulip's zerver/webhooks/github/view.py: the event is the
 * X-GitHub-Event header, refined by the payload's action into Zulip's event
 * names (push_commits, push_tags, opened_pull_request, ...), which are what
 * only_events / exclude_events match. Topics: "<repo> / <branch>" for
 * pushes, "<repo> / PR #<n> <title>" and "<repo> / issue #<n> <title>",
 * else the repository name. `branches` filters pushes; with
 * `ignore_private_repositories=true` events from private repositories are
 * dropped. Events Zulip ignores on purpose (check_suite, label, meta, ...) are
 * a silent success; events we do not handle are UnsupportedWebhookEventTypeError.
 */

const IGNORED_EVENTS = new Set(['check_suite', 'label', 'meta', 'milestone', 'organization', 'project_card', 'repository_vulnerability_alert']);
const IGNORED_PULL_REQUEST_ACTIONS = new Set(['approved', 'converted_to_draft', 'labeled', 'review_request_removed', 'unlabeled']);

const repoName = (p: unknown): string => str(p, 'repository', 'name');
const sender = (p: unknown): string => str(p, 'sender', 'login');
const branchOf = (ref: string): string => ref.replace(/^refs\/heads\//, '');
const tagOf = (ref: string): string => ref.replace(/^refs\/tags\//, '');

interface Ctx {
  readonly p: unknown;
  readonly includeTitle: boolean;
}

function prTopic(p: unknown): string {
  return topicWithPrOrIssue(repoName(p), 'PR', int(p, 'pull_request', 'number'), str(p, 'pull_request', 'title'));
}

function issueTopic(p: unknown): string {
  const type = at(p, 'issue', 'pull_request') !== undefined ? 'PR' : 'issue';
  return topicWithPrOrIssue(repoName(p), type, int(p, 'issue', 'number'), str(p, 'issue', 'title'));
}

function pushCommits({ p }: Ctx): string {
  const commits: CommitData[] = list(p, 'commits').map((_c, i) => ({
    name: optStr(p, 'commits', i, 'author', 'username') || str(p, 'commits', i, 'author', 'name'),
    sha: str(p, 'commits', i, 'id'),
    url: str(p, 'commits', i, 'url'),
    message: str(p, 'commits', i, 'message'),
  }));
  return pushCommitsMessage({
    userName: sender(p),
    compareUrl: str(p, 'compare'),
    branch: branchOf(str(p, 'ref')),
    commits,
    deleted: bool(p, 'deleted'),
    forcePush: bool(p, 'forced'),
  });
}

function openedOrUpdatedPr({ p, includeTitle }: Ctx): string {
  let action = str(p, 'action');
  if (action === 'synchronize') action = 'updated';
  const changes = at(p, 'changes');
  const description = (changes && typeof changes === 'object' && 'body' in changes) || action === 'opened' ? optStr(p, 'pull_request', 'body') : null;
  const withBranches = action === 'opened' || action === 'merged';
  return prOrIssueMessage({
    userName: sender(p),
    action,
    url: str(p, 'pull_request', 'html_url'),
    number: int(p, 'pull_request', 'number'),
    targetBranch: withBranches ? str(p, 'pull_request', 'head', 'label') : null,
    baseBranch: withBranches ? str(p, 'pull_request', 'base', 'label') : null,
    message: description,
    assignee: at(p, 'pull_request', 'assignee') ? str(p, 'pull_request', 'assignee', 'login') : null,
    title: includeTitle ? str(p, 'pull_request', 'title') : null,
  });
}

function closedPr({ p, includeTitle }: Ctx): string {
  return prOrIssueMessage({
    userName: sender(p),
    action: bool(p, 'pull_request', 'merged') ? 'merged' : 'closed without merge',
    url: str(p, 'pull_request', 'html_url'),
    number: int(p, 'pull_request', 'number'),
    title: includeTitle ? str(p, 'pull_request', 'title') : null,
  });
}

function assignedPr({ p, includeTitle }: Ctx): string {
  return prOrIssueMessage({
    userName: sender(p),
    action: str(p, 'action'),
    url: str(p, 'pull_request', 'html_url'),
    number: int(p, 'pull_request', 'number'),
    title: includeTitle ? str(p, 'pull_request', 'title') : null,
    assigneeUpdated: str(p, 'assignee', 'login'),
  });
}

function issues({ p, includeTitle }: Ctx): string {
  const action = str(p, 'action');
  return prOrIssueMessage({
    userName: sender(p),
    action,
    url: str(p, 'issue', 'html_url'),
    number: int(p, 'issue', 'number'),
    message: action === 'assigned' || action === 'unassigned' ? null : optStr(p, 'issue', 'body'),
    title: includeTitle ? str(p, 'issue', 'title') : null,
    assigneeUpdated: at(p, 'assignee') ? str(p, 'assignee', 'login') : null,
    type: 'issue',
  });
}

function commentAction(p: unknown): string {
  const action = str(p, 'action');
  return `${action === 'created' ? '[commented]' : `${action} a [comment]`}(${str(p, 'comment', 'html_url')}) on`;
}

function issueComment({ p, includeTitle }: Ctx): string {
  return prOrIssueMessage({
    userName: sender(p),
    action: commentAction(p),
    url: str(p, 'issue', 'html_url'),
    number: int(p, 'issue', 'number'),
    message: str(p, 'comment', 'body'),
    title: includeTitle ? str(p, 'issue', 'title') : null,
    type: at(p, 'issue', 'pull_request') !== undefined ? 'PR' : 'issue',
  });
}

const BODIES: Record<string, { body: (c: Ctx) => string; topic: (p: unknown) => string }> = {
  ping: { body: ({ p }) => setupMessage('GitHub', sender(p)), topic: (p) => (at(p, 'repository') ? repoName(p) : str(p, 'organization', 'login')) },
  push_commits: { body: pushCommits, topic: (p) => topicWithBranch(repoName(p), branchOf(str(p, 'ref'))) },
  push_tags: { body: ({ p }) => pushTagMessage(sender(p), tagOf(str(p, 'ref')), null, bool(p, 'created') ? 'pushed' : 'removed'), topic: repoName },
  opened_pull_request: { body: openedOrUpdatedPr, topic: prTopic },
  updated_pull_request: { body: openedOrUpdatedPr, topic: prTopic },
  closed_pull_request: { body: closedPr, topic: prTopic },
  assigned_or_unassigned_pull_request: { body: assignedPr, topic: prTopic },
  issues: { body: issues, topic: issueTopic },
  issue_comment: { body: issueComment, topic: issueTopic },
  create: { body: ({ p }) => `${sender(p)} created ${str(p, 'ref_type')} ${str(p, 'ref')}.`, topic: repoName },
  delete: { body: ({ p }) => `${sender(p)} deleted ${str(p, 'ref_type')} ${str(p, 'ref')}.`, topic: repoName },
  fork: { body: ({ p }) => `${sender(p)} forked [${str(p, 'forkee', 'name')}](${str(p, 'forkee', 'html_url')}).`, topic: repoName },
  watch: { body: ({ p }) => `${sender(p)} starred the repository [${str(p, 'repository', 'full_name')}](${str(p, 'repository', 'html_url')}).`, topic: repoName },
  public: { body: ({ p }) => `${sender(p)} made the repository [${str(p, 'repository', 'full_name')}](${str(p, 'repository', 'html_url')}) public.`, topic: repoName },
};

/** Zulip's get_zulip_event_name: null for events dropped on purpose. */
function zulipEvent(header: string, p: unknown, branches: string | undefined): string | null {
  if (header === 'pull_request') {
    const action = str(p, 'action');
    if (action === 'opened' || action === 'reopened') return 'opened_pull_request';
    if (action === 'synchronize' || action === 'edited') return 'updated_pull_request';
    if (action === 'assigned' || action === 'unassigned') return 'assigned_or_unassigned_pull_request';
    if (action === 'closed') return 'closed_pull_request';
    if (IGNORED_PULL_REQUEST_ACTIONS.has(action)) return null;
    return `pull_request:${action}`;
  }
  if (header === 'push') {
    const ref = str(p, 'ref');
    if (ref.startsWith('refs/heads/gh-readonly-queue/')) return null;
    if (ref.startsWith('refs/heads/')) return branchNotifiable(branchOf(ref), branches) ? 'push_commits' : null;
    return 'push_tags';
  }
  if (header === 'issues') {
    const action = str(p, 'action');
    return ['labeled', 'unlabeled', 'milestoned', 'demilestoned', 'transferred'].includes(action) ? `issues:${action}` : 'issues';
  }
  if (header in BODIES) return header;
  if (IGNORED_EVENTS.has(header)) return null;
  return header;
}

function handle({ payload: p, headers, params, includeTitle }: WebhookInput): WebhookResult {
  const header = headers['x-github-event'];
  if (header === undefined) {
    throw new JsonableError("Missing the HTTP event header 'X-GitHub-Event'", { code: 'MISSING_HTTP_EVENT_HEADER', data: { header: 'X-GitHub-Event' } });
  }
  let ignorePrivate = false;
  if (params.ignore_private_repositories !== undefined) {
    let v: unknown;
    try {
      v = JSON.parse(params.ignore_private_repositories);
    } catch {
      throw badRequest('ignore_private_repositories is not valid JSON');
    }
    if (typeof v !== 'boolean') throw badRequest('ignore_private_repositories is not a boolean');
    ignorePrivate = v;
  }
  if (ignorePrivate && at(p, 'repository') !== undefined && bool(p, 'repository', 'private')) return ignore;
  // An edited comment whose text did not change (GitHub sends these) is dropped.
  if (header.includes('comment') && at(p, 'action') === 'edited' && at(p, 'changes', 'body', 'from') === at(p, 'comment', 'body')) return ignore;
  const event = zulipEvent(header, p, params.branches);
  if (event === null) return ignore;
  const handler = BODIES[event];
  if (!handler) return unsupported(event);
  return message(handler.topic(p), handler.body({ p, includeTitle }), event);
}

export const githubIntegration: Integration = {
  name: 'github',
  displayName: 'GitHub',
  ownParams: ['branches', 'ignore_private_repositories'],
  events: Object.keys(BODIES),
  handle,
};

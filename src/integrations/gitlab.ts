import { JsonableError, badRequest } from '../domain/errors.js';
import { prOrIssueMessage, pushCommitsMessage, pushTagMessage, topicWithPrOrIssue, type CommitData } from './git.js';
import { at, int, list, message, optStr, str, unsupported, type Integration, type WebhookInput, type WebhookResult } from './types.js';

/**
 * GitLab, after Zulip's zerver/webhooks/gitlab/view.py. The event is the
 * X-Gitlab-Event header, with object_attributes.action appended for issue,
 * merge request and wiki hooks ("Merge Request Hook merge") and the noteable
 * type for note hooks ("Note Hook Issue"); these names are what only_events /
 * exclude_events match. A `topic` override prefixes the content with
 * "[[<project>](<url>)] " and puts titles in the links;
 * use_merge_request_title=false leaves the title out of MR topics; `branches`
 * filters pushes (Zulip tests it as a substring of the parameter).
 */
const EMPTY_SHA = '0000000000000000000000000000000000000000';

const repoName = (p: unknown): string => (at(p, 'project') !== undefined ? str(p, 'project', 'name') : str(p, 'repository', 'name'));
const homepage = (p: unknown): string => (at(p, 'project') !== undefined ? str(p, 'project', 'web_url') : str(p, 'repository', 'homepage'));
const branchOf = (p: unknown): string => str(p, 'ref').replace('refs/heads/', '');
const issueUser = (p: unknown): string => str(p, 'user', 'name');

/** Assignee names: `assignees`, else the single `assignee`. */
function assignees(p: unknown): string[] {
  const many = at(p, 'assignees');
  if (Array.isArray(many) && many.length > 0) return many.map((_a, i) => str(p, 'assignees', i, 'name'));
  return at(p, 'assignee') ? [str(p, 'assignee', 'name')] : [];
}

type Body = (p: unknown, includeTitle: boolean) => string;

const push: Body = (p) => {
  if (at(p, 'after') === EMPTY_SHA) return `${str(p, 'user_name')} deleted branch ${branchOf(p)}.`;
  const commits: CommitData[] = list(p, 'commits').map((_c, i) => ({
    name: str(p, 'commits', i, 'author', 'name'),
    sha: str(p, 'commits', i, 'id'),
    message: str(p, 'commits', i, 'message'),
    url: str(p, 'commits', i, 'url'),
  }));
  return pushCommitsMessage({ userName: str(p, 'user_name'), compareUrl: `${homepage(p)}/-/compare/${str(p, 'before')}...${str(p, 'after')}`, branch: branchOf(p), commits });
};

const tagPush: Body = (p) => pushTagMessage(str(p, 'user_name'), str(p, 'ref').replace('refs/tags/', ''), null, at(p, 'checkout_sha') ? 'pushed' : 'removed');

/** The fields every issue and merge-request message reads from `object_attributes` (the title last, as before). */
const attributes = (p: unknown, action: string) => ({
  userName: issueUser(p),
  action,
  url: str(p, 'object_attributes', 'url'),
  number: int(p, 'object_attributes', 'iid'),
});
const titleOf = (p: unknown, includeTitle: boolean) => (includeTitle ? str(p, 'object_attributes', 'title') : null);
/** A merge request's branches, shown only for the action that names them. */
const branches = (p: unknown, shown: boolean) => ({
  targetBranch: shown ? str(p, 'object_attributes', 'source_branch') : null,
  baseBranch: shown ? str(p, 'object_attributes', 'target_branch') : null,
});

const issueCreated: Body = (p, includeTitle) => {
  let description = optStr(p, 'object_attributes', 'description');
  // Hidden (possibly multi-line) HTML comments are dropped.
  if (description) description = description.replace(/<!--[\s\S]*?-->/g, '').trimEnd();
  return prOrIssueMessage({ ...attributes(p, 'created'), message: description || null, assignees: assignees(p), type: 'issue', title: titleOf(p, includeTitle) });
};

const issueAction =
  (action: string): Body =>
  (p, includeTitle) =>
    prOrIssueMessage({ ...attributes(p, action), type: 'issue', title: titleOf(p, includeTitle) });

const mrAction =
  (action: string): Body =>
  (p, includeTitle) =>
    prOrIssueMessage({ ...attributes(p, action), ...branches(p, action === 'merged'), type: 'MR', title: titleOf(p, includeTitle) });

const mrOpenOrUpdated =
  (action: string): Body =>
  (p, includeTitle) =>
    prOrIssueMessage({
      ...attributes(p, action),
      ...branches(p, action === 'created'),
      message: optStr(p, 'object_attributes', 'description'),
      assignees: assignees(p),
      type: 'MR',
      title: titleOf(p, includeTitle),
    });

const mrUpdated: Body = (p, includeTitle) => (at(p, 'object_attributes', 'oldrev') ? mrAction('added commit(s) to')(p, includeTitle) : mrOpenOrUpdated('updated')(p, includeTitle));

const noteOn =
  (key: 'merge_request' | 'issue', type: string): Body =>
  (p, includeTitle) =>
    prOrIssueMessage({
      userName: issueUser(p),
      action: `[commented](${str(p, 'object_attributes', 'url')}) on`,
      url: str(p, key, 'url'),
      number: int(p, key, 'iid'),
      message: str(p, 'object_attributes', 'note'),
      type,
      title: includeTitle ? str(p, key, 'title') : null,
    });

const EVENTS: Record<string, Body> = {
  'Push Hook': push,
  'Tag Push Hook': tagPush,
  'Test Hook': (p) => `Webhook for **${repoName(p)}** has been configured successfully! :tada:`,
  'Issue Hook open': issueCreated,
  'Issue Hook close': issueAction('closed'),
  'Issue Hook reopen': issueAction('reopened'),
  'Issue Hook update': issueAction('updated'),
  'Confidential Issue Hook open': issueCreated,
  'Confidential Issue Hook close': issueAction('closed'),
  'Confidential Issue Hook reopen': issueAction('reopened'),
  'Confidential Issue Hook update': issueAction('updated'),
  'Note Hook MergeRequest': noteOn('merge_request', 'MR'),
  'Note Hook Issue': noteOn('issue', 'issue'),
  'Confidential Note Hook Issue': noteOn('issue', 'issue'),
  'Merge Request Hook approved': mrAction('approved'),
  'Merge Request Hook unapproved': mrAction('unapproved'),
  'Merge Request Hook open': mrOpenOrUpdated('created'),
  'Merge Request Hook update': mrUpdated,
  'Merge Request Hook merge': mrAction('merged'),
  'Merge Request Hook close': mrAction('closed'),
  'Merge Request Hook reopen': mrAction('reopened'),
  'Wiki Page Hook create': (p) => `${issueUser(p)} created [wiki page "${str(p, 'object_attributes', 'title')}"](${str(p, 'object_attributes', 'url')}).`,
  'Wiki Page Hook update': (p) => `${issueUser(p)} updated [wiki page "${str(p, 'object_attributes', 'title')}"](${str(p, 'object_attributes', 'url')}).`,
};

function topicFor(event: string, p: unknown, useMrTitle: boolean): string {
  if (event === 'Push Hook') return `${repoName(p)} / ${branchOf(p)}`;
  if (event.startsWith('Merge Request Hook')) return topicWithPrOrIssue(repoName(p), 'MR', int(p, 'object_attributes', 'iid'), useMrTitle ? str(p, 'object_attributes', 'title') : '').trimEnd();
  if (event.startsWith('Issue Hook') || event.startsWith('Confidential Issue Hook')) return topicWithPrOrIssue(repoName(p), 'issue', int(p, 'object_attributes', 'iid'), str(p, 'object_attributes', 'title'));
  if (event === 'Note Hook Issue' || event === 'Confidential Note Hook Issue') return topicWithPrOrIssue(repoName(p), 'issue', int(p, 'issue', 'iid'), str(p, 'issue', 'title'));
  if (event === 'Note Hook MergeRequest') return topicWithPrOrIssue(repoName(p), 'MR', int(p, 'merge_request', 'iid'), useMrTitle ? str(p, 'merge_request', 'title') : '').trimEnd();
  return repoName(p);
}

function eventOf(header: string, p: unknown): string {
  let event = header;
  if (event === 'System Hook') {
    const name = optStr(p, 'event_name') ?? str(p, 'object_kind');
    event = `${name.split('__')[0]!.replace(/_/g, ' ').replace(/\w\S*/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase())} Hook`;
  }
  if (['Confidential Issue Hook', 'Issue Hook', 'Merge Request Hook', 'Wiki Page Hook'].includes(event)) return `${event} ${optStr(p, 'object_attributes', 'action') ?? 'open'}`;
  if (event === 'Confidential Note Hook' || event === 'Note Hook') return `${event} ${str(p, 'object_attributes', 'noteable_type')}`;
  return event;
}

function handle({ payload: p, headers, params, includeTitle }: WebhookInput): WebhookResult {
  const header = headers['x-gitlab-event'];
  if (header === undefined) throw new JsonableError("Missing the HTTP event header 'X-GitLab-Event'", { code: 'MISSING_HTTP_EVENT_HEADER', data: { header: 'X-GitLab-Event' } });
  let useMrTitle = true;
  if (params.use_merge_request_title !== undefined) {
    let v: unknown;
    try {
      v = JSON.parse(params.use_merge_request_title);
    } catch {
      throw badRequest('use_merge_request_title is not valid JSON');
    }
    if (typeof v !== 'boolean') throw badRequest('use_merge_request_title is not a boolean');
    useMrTitle = v;
  }
  const event = eventOf(header, p);
  if (event === 'Push Hook' && params.branches !== undefined && !params.branches.includes(branchOf(p))) return { kind: 'ignore' };
  const body = EVENTS[event];
  if (!body) return unsupported(event);
  let content = body(p, includeTitle);
  if (includeTitle) content = `[[${repoName(p)}](${homepage(p)})] ${content}`;
  return message(topicFor(event, p, useMrTitle), content, event);
}

export const gitlabIntegration: Integration = {
  name: 'gitlab',
  displayName: 'GitLab',
  ownParams: ['branches', 'use_merge_request_title'],
  events: Object.keys(EVENTS),
  handle,
};

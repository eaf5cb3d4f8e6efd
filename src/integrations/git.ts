/**
 * Message templates shared by the git integrations, carried over from Zulip's
 * zerver/lib/webhooks/git.py (strings and rules only): commit rows with
 * 11-character short SHAs, at most 20 commits listed then
 * "[and N more commit(s)]", "Commits by A (n), B (m) and others (k)." when the
 * pusher is not the only author (at most 3 named), PR/issue lines with
 * optional title, branch info, assignee and a ~~~ quote of the body.
 */
export const COMMITS_LIMIT = 20;
const COMMITTERS_LIMIT = 3;

export const topicWithBranch = (repo: string, branch: string): string => `${repo} / ${branch}`;
export const topicWithPrOrIssue = (repo: string, type: string, id: number, title: string): string => `${repo} / ${type} #${id} ${title}`;

export const shortSha = (sha: string): string => sha.slice(0, 11);

export interface CommitData {
  readonly name: string;
  readonly sha: string;
  readonly url: string | null;
  readonly message: string;
}

function committers(commits: readonly CommitData[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const c of commits) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  // By commit count, ties alphabetically (Python sorts by (-count, name): code point order).
  let items = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (items.length > COMMITTERS_LIMIT) {
    const others = items.slice(COMMITTERS_LIMIT).reduce((n, [, k]) => n + k, 0);
    items = [...items.slice(0, COMMITTERS_LIMIT), ['others', others]];
  }
  return items;
}

export function commitsContent(commits: readonly CommitData[], isTruncated = false): string {
  let out = '';
  for (const c of commits.slice(0, COMMITS_LIMIT)) {
    out += `* ${c.message.split('\n')[0]} ([${shortSha(c.sha)}](${c.url ?? 'None'}))\n`;
  }
  if (commits.length > COMMITS_LIMIT) out += `[and ${commits.length - COMMITS_LIMIT} more commit(s)]`;
  else if (isTruncated) out += '[and more commit(s)]';
  return out.trimEnd();
}

export function pushCommitsMessage(o: {
  userName: string;
  compareUrl: string | null;
  branch: string;
  commits: readonly CommitData[];
  isTruncated?: boolean;
  deleted?: boolean;
  forcePush?: boolean;
}): string {
  const pushType = o.forcePush ? 'force pushed' : 'pushed';
  if (o.commits.length === 0 && o.deleted) return `${o.userName} [deleted](${o.compareUrl}) the branch ${o.branch}.`;
  if (o.commits.length === 0) return `${o.userName} [${pushType}](${o.compareUrl}) the branch ${o.branch}.`;
  const n = o.commits.length;
  const what = `${n} commit${n > 1 ? 's' : ''}`;
  const pushed = o.compareUrl ? `[${pushType}](${o.compareUrl}) ${what}` : `${pushType} ${what}`;
  const base = `${o.userName} ${pushed} to branch ${o.branch}.`;
  const items = committers(o.commits);
  const body = commitsContent(o.commits, o.isTruncated);
  if (items.length === 1 && items[0]![0] === o.userName) return `${base}\n\n${body}`.trimEnd();
  let details = `${items[0]![0]} (${items[0]![1]})`;
  for (const [name, k] of items.slice(1, -1)) details += `, ${name} (${k})`;
  if (items.length > 1) details += ` and ${items[items.length - 1]![0]} (${items[items.length - 1]![1]})`;
  return `${base} Commits by ${details}.\n\n${body}`.trimEnd();
}

const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

export function prOrIssueMessage(o: {
  userName: string;
  action: string;
  url: string;
  number?: number;
  targetBranch?: string | null;
  baseBranch?: string | null;
  message?: string | null;
  assignee?: string | null;
  assignees?: readonly string[];
  assigneeUpdated?: string | null;
  type?: string;
  title?: string | null;
}): string {
  const type = o.type ?? 'PR';
  const id = o.number !== undefined ? ` #${o.number}` : '';
  const title = o.title ?? null;
  const link = title !== null ? `[${type}${id} ${title}](${o.url})` : `[${type}${id}](${o.url})`;
  let main: string;
  if (o.assigneeUpdated) {
    main = `${o.userName} ${o.action} ${o.assigneeUpdated} ${o.action === 'assigned' ? 'to' : 'from'} ${link}`;
  } else {
    main = `${o.userName} ${o.action} ${link}`;
  }
  const branches = Boolean(o.targetBranch && o.baseBranch);
  if (branches) main += ` from \`${o.targetBranch}\` to \`${o.baseBranch}\``;
  const assignees = o.assignees ?? [];
  if (assignees.length > 0) {
    const names = assignees.length === 1 ? assignees[0]! : `${assignees.slice(0, -1).join(', ')} and ${assignees[assignees.length - 1]}`;
    main += ` (assigned to ${names})`;
  } else if (o.assignee) main += ` (assigned to ${o.assignee})`;
  const punctuation = o.message ? ':' : '.';
  if (assignees.length > 0 || o.assignee || branches || title === null) main += punctuation;
  else if (!PUNCTUATION.has(title.slice(-1))) main += punctuation;
  if (o.message) main += '\n' + quote(o.message);
  return main.trimEnd();
}

/** Zulip's CONTENT_MESSAGE_TEMPLATE. */
export const quote = (message: string): string => `\n~~~ quote\n${message}\n~~~`;

export function pushTagMessage(userName: string, tag: string, tagUrl: string | null, action = 'pushed'): string {
  const part = tagUrl ? `[${tag}](${tagUrl})` : tag;
  const msg = `${userName} ${action} tag ${part}`;
  return PUNCTUATION.has(tag.slice(-1)) ? msg : `${msg}.`;
}

export const setupMessage = (integration: string, userName?: string | null): string =>
  `${integration} webhook has been successfully configured${userName ? ` by ${userName}` : ''}.`;

/** Zulip's is_branch_name_notifiable: the `branches` URL parameter is a comma-separated list. */
export function branchNotifiable(branch: string, branches: string | undefined): boolean {
  if (branches === undefined) return true;
  return branches.split(',').map((b) => b.trim()).includes(branch);
}

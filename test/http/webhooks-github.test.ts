import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from '../support/server.js';
import { expectChannelMessage, expectNoMessage, messagesSentBy, postHook, setupHook, type Hook } from '../support/webhooks.js';

/**
 * GitHub payloads shaped as GitHub's webhook documentation shows them (only
 * the fields the integration reads), with the topics and Markdown Zulip's
 * GitHub integration produces (zerver/webhooks/github/tests.py).
 */
let t: TestServer;
let hook: Hook;
beforeAll(async () => {
  t = await startTestServer();
  hook = await setupHook(t, 'githubhook', 'github');
});
afterAll(async () => t.close());

const repo = { name: 'public-repo', full_name: 'baxterthehacker/public-repo', html_url: 'https://github.com/baxterthehacker/public-repo', private: false };
const senderObj = { login: 'baxterthehacker', html_url: 'https://github.com/baxterthehacker' };
const SHA = '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c';
const commit = (author: { name: string; username?: string }, message = 'Update README.md\n\nLonger description.') => ({
  id: SHA,
  message,
  url: `https://github.com/baxterthehacker/public-repo/commit/${SHA}`,
  author: { email: 'x@example.com', ...author },
});
const push = (commits: unknown[], over: Record<string, unknown> = {}) => ({
  ref: 'refs/heads/changes',
  before: '9049f1265b7d61be4a8904a9a27120d2064dab3b',
  after: SHA,
  created: false,
  deleted: false,
  forced: false,
  compare: 'https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f',
  commits,
  repository: repo,
  sender: senderObj,
  ...over,
});
const row = '* Update README.md ([0d1a26e67d8](https://github.com/baxterthehacker/public-repo/commit/0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c))';
const ev = (name: string) => ({ 'x-github-event': name });
const issue = { number: 2, title: 'Spelling error in the README file', html_url: 'https://github.com/baxterthehacker/public-repo/issues/2', body: "It looks like you accidentally spelled 'commit' with two 't's.", state: 'open' };
const pr = (over: Record<string, unknown> = {}) => ({
  number: 1,
  title: 'Update the README with new information',
  html_url: 'https://github.com/baxterthehacker/public-repo/pull/1',
  body: 'This is a pretty simple change that we need to pull into master.',
  merged: false,
  assignee: null,
  head: { label: 'baxterthehacker:changes' },
  base: { label: 'baxterthehacker:master' },
  ...over,
});
const TOPIC_PR = 'public-repo / PR #1 Update the README with new information';
const TOPIC_ISSUE = 'public-repo / issue #2 Spelling error in the README file';

describe('GitHub integration', () => {
  it('push with one commit by the pusher', async () => {
    const payload = push([commit({ name: 'baxterthehacker', username: 'baxterthehacker' })]);
    await expectChannelMessage(t, hook, 'github', {}, payload, ev('push'), 'public-repo / changes', `baxterthehacker [pushed](https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f) 1 commit to branch changes.\n\n${row}`);
  });

  it('push with 25 commits by several authors: committers summary and the 20-commit limit', async () => {
    const authors = [...Array(8).fill({ name: 'Tomasz Kolek', username: 'Tomasz' }), ...Array(7).fill({ name: 'Ben' }), ...Array(6).fill({ name: 'James', username: 'James' }), ...Array(3).fill({ name: 'Zoe' }), { name: 'baxterthehacker', username: 'baxterthehacker' }];
    const payload = push(authors.map((a) => commit(a)));
    const expected = `baxterthehacker [pushed](https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f) 25 commits to branch changes. Commits by Tomasz (8), Ben (7), James (6) and others (4).\n\n${Array(20).fill(row).join('\n')}\n[and 5 more commit(s)]`;
    await expectChannelMessage(t, hook, 'github', {}, payload, ev('push'), 'public-repo / changes', expected);
  });

  it('branches filters pushes; a listed branch still posts', async () => {
    const payload = push([commit({ name: 'John Snow' })]);
    const res = await expectNoMessage(t, hook, 'github', { branches: 'master,develop' }, payload, ev('push'));
    expect(res.body).toEqual({ result: 'success', msg: '' });
    await expectChannelMessage(t, hook, 'github', { branches: 'master, changes' }, payload, ev('push'), 'public-repo / changes', `baxterthehacker [pushed](https://github.com/baxterthehacker/public-repo/compare/9049f1265b7d...0d1a26e67d8f) 1 commit to branch changes. Commits by John Snow (1).\n\n${row}`);
  });

  it('push deleting a branch, and a pushed tag', async () => {
    const del = push([], { ref: 'refs/heads/feature', deleted: true, compare: 'https://github.com/baxterthehacker/public-repo/compare/2e8cf535fb38...000000000000' });
    await expectChannelMessage(t, hook, 'github', {}, del, ev('push'), 'public-repo / feature', 'baxterthehacker [deleted](https://github.com/baxterthehacker/public-repo/compare/2e8cf535fb38...000000000000) the branch feature.');
    await expectChannelMessage(t, hook, 'github', {}, push([], { ref: 'refs/tags/v1.0', created: true }), ev('push'), 'public-repo', 'baxterthehacker pushed tag v1.0.');
  });

  it('issue opened and closed (the body quoted), and a custom topic puts the title in the content', async () => {
    await expectChannelMessage(t, hook, 'github', {}, { action: 'opened', issue, repository: repo, sender: senderObj }, ev('issues'), TOPIC_ISSUE, "baxterthehacker opened [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nIt looks like you accidentally spelled 'commit' with two 't's.\n~~~");
    await expectChannelMessage(t, hook, 'github', { topic: 'notifications' }, { action: 'closed', issue: { ...issue, body: null }, repository: repo, sender: senderObj }, ev('issues'), 'notifications', 'baxterthehacker closed [issue #2 Spelling error in the README file](https://github.com/baxterthehacker/public-repo/issues/2).');
  });

  it('issue comment, and a comment on a pull request', async () => {
    const comment = { html_url: 'https://github.com/baxterthehacker/public-repo/issues/2#issuecomment-99262140', body: "You are totally right! I'll get this fixed right away." };
    await expectChannelMessage(t, hook, 'github', {}, { action: 'created', issue, comment, repository: repo, sender: senderObj }, ev('issue_comment'), TOPIC_ISSUE, "baxterthehacker [commented](https://github.com/baxterthehacker/public-repo/issues/2#issuecomment-99262140) on [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nYou are totally right! I'll get this fixed right away.\n~~~");
    const onPr = { ...issue, number: 1, title: 'Update the README with new information', html_url: 'https://github.com/baxterthehacker/public-repo/pull/1', pull_request: { url: 'x' } };
    await expectChannelMessage(t, hook, 'github', {}, { action: 'created', issue: onPr, comment: { html_url: 'https://github.com/baxterthehacker/public-repo/pull/1#issuecomment-1', body: 'Some comment' }, repository: repo, sender: senderObj }, ev('issue_comment'), TOPIC_PR, 'baxterthehacker [commented](https://github.com/baxterthehacker/public-repo/pull/1#issuecomment-1) on [PR #1](https://github.com/baxterthehacker/public-repo/pull/1):\n\n~~~ quote\nSome comment\n~~~');
  });

  it('pull request opened, synchronized, merged and closed without merge', async () => {
    const base = { repository: repo, sender: senderObj };
    await expectChannelMessage(t, hook, 'github', {}, { action: 'opened', pull_request: pr(), ...base }, ev('pull_request'), TOPIC_PR, 'baxterthehacker opened [PR #1](https://github.com/baxterthehacker/public-repo/pull/1) from `baxterthehacker:changes` to `baxterthehacker:master`:\n\n~~~ quote\nThis is a pretty simple change that we need to pull into master.\n~~~');
    await expectChannelMessage(t, hook, 'github', {}, { action: 'synchronize', pull_request: pr(), ...base }, ev('pull_request'), TOPIC_PR, 'baxterthehacker updated [PR #1](https://github.com/baxterthehacker/public-repo/pull/1).');
    await expectChannelMessage(t, hook, 'github', {}, { action: 'closed', pull_request: pr({ merged: true }), ...base }, ev('pull_request'), TOPIC_PR, 'baxterthehacker merged [PR #1](https://github.com/baxterthehacker/public-repo/pull/1).');
    await expectChannelMessage(t, hook, 'github', { topic: 'notifications' }, { action: 'closed', pull_request: pr(), ...base }, ev('pull_request'), 'notifications', 'baxterthehacker closed without merge [PR #1 Update the README with new information](https://github.com/baxterthehacker/public-repo/pull/1).');
    await expectChannelMessage(t, hook, 'github', {}, { action: 'assigned', pull_request: pr(), assignee: { login: 'octocat' }, ...base }, ev('pull_request'), TOPIC_PR, 'baxterthehacker assigned octocat to [PR #1](https://github.com/baxterthehacker/public-repo/pull/1).');
  });

  it('ping; only_events / exclude_events; private repositories ignored on request', async () => {
    await expectChannelMessage(t, hook, 'github', {}, { zen: 'Keep it simple.', hook_id: 1, repository: repo, sender: { login: 'TomaszKolek' } }, ev('ping'), 'public-repo', 'GitHub webhook has been successfully configured by TomaszKolek.');
    const opened = { action: 'opened', issue, repository: repo, sender: senderObj };
    await expectNoMessage(t, hook, 'github', { only_events: '["push*","*_pull_request"]' }, opened, ev('issues'));
    await expectNoMessage(t, hook, 'github', { exclude_events: '["issues"]' }, opened, ev('issues'));
    await expectChannelMessage(t, hook, 'github', { only_events: '["issue*"]' }, opened, ev('issues'), TOPIC_ISSUE, "baxterthehacker opened [issue #2](https://github.com/baxterthehacker/public-repo/issues/2):\n\n~~~ quote\nIt looks like you accidentally spelled 'commit' with two 't's.\n~~~");
    const priv = { ...opened, repository: { ...repo, private: true } };
    await expectNoMessage(t, hook, 'github', { ignore_private_repositories: 'true' }, priv, ev('issues'));
    await expectNoMessage(t, hook, 'github', {}, { action: 'created', repository: repo, sender: senderObj }, ev('check_suite'));
  });

  it('unsupported events, a missing event header and malformed payloads', async () => {
    const { res, sent } = await messagesSentBy(t, () => postHook(t, 'github', { api_key: hook.key, stream: hook.channel }, { action: 'requested', repository: repo, sender: senderObj }, ev('workflow_run')));
    expect({ status: res.status, body: res.body, sent }).toEqual({
      status: 200,
      body: { result: 'success', msg: "The 'workflow_run' event isn't currently supported by the GitHub webhook; ignoring", code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE', webhook_name: 'GitHub', event_type: 'workflow_run' },
      sent: [],
    });
    const q = { api_key: hook.key, stream: hook.channel };
    expect((await postHook(t, 'github', q, { action: 'labeled', issue, repository: repo, sender: senderObj }, ev('issues'))).body.event_type).toBe('issues:labeled');
    expectError(await postHook(t, 'github', q, { action: 'opened' }), 400, 'MISSING_HTTP_EVENT_HEADER', "Missing the HTTP event header 'X-GitHub-Event'", { header: 'X-GitHub-Event' });
    expectError(await postHook(t, 'github', q, '{"action": "opened",', ev('issues')), 400, 'INVALID_JSON', 'Malformed JSON');
    expectError(await postHook(t, 'github', q, { action: 'opened', repository: repo, sender: senderObj }, ev('issues')), 400, 'BAD_REQUEST', 'payload["issue"]["number"] is missing');
    expectError(await postHook(t, 'github', q, [1, 2], ev('push')), 400, 'BAD_REQUEST', 'payload["ref"] is missing');
    expectError(await postHook(t, 'github', { ...q, ignore_private_repositories: 'yes' }, {}, ev('push')), 400, 'BAD_REQUEST', 'ignore_private_repositories is not valid JSON');
  });
});

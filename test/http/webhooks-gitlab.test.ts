import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startTestServer, type TestServer } from '../support/server.js';
import { expectChannelMessage, expectNoMessage, messagesSentBy, postHook, setupHook, type Hook } from '../support/webhooks.js';

/**
 * GitLab payloads shaped as GitLab's webhook documentation shows them (only
 * the fields read), with the topics and Markdown of Zulip's GitLab
 * integration (zerver/webhooks/gitlab/tests.py).
 */
let t: TestServer;
let hook: Hook;
beforeAll(async () => {
  t = await startTestServer();
  hook = await setupHook(t, 'gitlabhook', 'gitlab');
});
afterAll(async () => t.close());

const project = { name: 'my-awesome-project', web_url: 'https://gitlab.com/tomaszkolek0/my-awesome-project' };
const user = { name: 'Tomasz Kolek', username: 'tomaszkolek0' };
const sha = (c: string) => c.repeat(40);
const commit = (c: string, author: string, message: string) => ({ id: sha(c), message, url: `https://gitlab.com/tomaszkolek0/my-awesome-project/commit/${sha(c)}`, author: { name: author, email: 'x@example.com' } });
const push = (commits: unknown[], over: Record<string, unknown> = {}) => ({
  object_kind: 'push',
  before: sha('1'),
  after: sha('2'),
  ref: 'refs/heads/tomek',
  user_name: 'Tomasz Kolek',
  project,
  commits,
  total_commits_count: commits.length,
  ...over,
});
const COMPARE = `https://gitlab.com/tomaszkolek0/my-awesome-project/-/compare/${sha('1')}...${sha('2')}`;
const ev = (name: string) => ({ 'x-gitlab-event': name });
const mr = (action: string, over: Record<string, unknown> = {}) => ({
  object_kind: 'merge_request',
  user,
  project,
  object_attributes: { iid: 2, title: 'NEW MR', url: 'https://gitlab.com/tomaszkolek0/my-awesome-project/merge_requests/2', source_branch: 'tomek', target_branch: 'master', description: 'description of merge request', action, ...over },
});
const issue = (action: string | undefined, over: Record<string, unknown> = {}) => ({
  object_kind: 'issue',
  user,
  project,
  object_attributes: { iid: 1, title: 'Issue title', url: 'https://gitlab.com/tomaszkolek0/my-awesome-project/issues/1', description: 'Issue description', ...(action ? { action } : {}), ...over },
});

describe('GitLab integration', () => {
  it('push with two commits, and with many commits by several authors', async () => {
    await expectChannelMessage(t, hook, 'gitlab', {}, push([commit('6', 'Tomasz Kolek', 'b'), commit('e', 'Tomasz Kolek', 'c\n\nbody')]), ev('Push Hook'), 'my-awesome-project / tomek',
      `Tomasz Kolek [pushed](${COMPARE}) 2 commits to branch tomek.\n\n* b ([66666666666](https://gitlab.com/tomaszkolek0/my-awesome-project/commit/${sha('6')}))\n* c ([eeeeeeeeeee](https://gitlab.com/tomaszkolek0/my-awesome-project/commit/${sha('e')}))`);
    const authors = ['Ben', 'Ben', 'Ben', 'baxterthehacker', 'baxterthehacker', 'James', 'Tomasz Kolek', ...Array(20).fill('Ben')];
    const row = `* b ([aaaaaaaaaaa](https://gitlab.com/tomaszkolek0/my-awesome-project/commit/${sha('a')}))`;
    await expectChannelMessage(t, hook, 'gitlab', {}, push(authors.map((a) => commit('a', a, 'b'))), ev('Push Hook'), 'my-awesome-project / tomek',
      `Tomasz Kolek [pushed](${COMPARE}) 27 commits to branch tomek. Commits by Ben (23), baxterthehacker (2), James (1) and others (1).\n\n${Array(20).fill(row).join('\n')}\n[and 7 more commit(s)]`);
  });

  it('branches filter, branch removal, tags and a custom topic with the project link', async () => {
    await expectNoMessage(t, hook, 'gitlab', { branches: 'master,develop' }, push([commit('6', 'Tomasz Kolek', 'b')]), ev('Push Hook'));
    await expectChannelMessage(t, hook, 'gitlab', {}, push([], { after: sha('0') }), ev('Push Hook'), 'my-awesome-project / tomek', 'Tomasz Kolek deleted branch tomek.');
    await expectChannelMessage(t, hook, 'gitlab', {}, push([], { ref: 'refs/tags/xyz', checkout_sha: sha('3') }), ev('Tag Push Hook'), 'my-awesome-project', 'Tomasz Kolek pushed tag xyz.');
    await expectChannelMessage(t, hook, 'gitlab', { topic: 'Specific topic', branches: 'master,tomek' }, push([commit('6', 'Tomasz Kolek', 'b')]), ev('Push Hook'), 'Specific topic',
      `[[my-awesome-project](https://gitlab.com/tomaszkolek0/my-awesome-project)] Tomasz Kolek [pushed](${COMPARE}) 1 commit to branch tomek.\n\n* b ([66666666666](https://gitlab.com/tomaszkolek0/my-awesome-project/commit/${sha('6')}))`);
  });

  it('issue opened (with assignees, hidden comments dropped), closed and reopened', async () => {
    const opened = { ...issue('open', { description: 'Issue description<!-- secret\nnotes -->\n' }), assignees: [{ name: 'Adam Birds' }, { name: 'Eeshan Garg' }, { name: 'Tim Abbott' }] };
    await expectChannelMessage(t, hook, 'gitlab', {}, opened, ev('Issue Hook'), 'my-awesome-project / issue #1 Issue title',
      'Tomasz Kolek created [issue #1](https://gitlab.com/tomaszkolek0/my-awesome-project/issues/1) (assigned to Adam Birds, Eeshan Garg and Tim Abbott):\n\n~~~ quote\nIssue description\n~~~');
    await expectChannelMessage(t, hook, 'gitlab', {}, issue('close'), ev('Issue Hook'), 'my-awesome-project / issue #1 Issue title', 'Tomasz Kolek closed [issue #1](https://gitlab.com/tomaszkolek0/my-awesome-project/issues/1).');
    await expectChannelMessage(t, hook, 'gitlab', { topic: 'notifications' }, issue('reopen'), ev('Confidential Issue Hook'), 'notifications',
      '[[my-awesome-project](https://gitlab.com/tomaszkolek0/my-awesome-project)] Tomasz Kolek reopened [issue #1 Issue title](https://gitlab.com/tomaszkolek0/my-awesome-project/issues/1).');
  });

  it('merge request opened, updated with commits, merged, closed; MR title left out on request', async () => {
    await expectChannelMessage(t, hook, 'gitlab', {}, { ...mr('open'), assignee: { name: 'Tomasz Kolek' } }, ev('Merge Request Hook'), 'my-awesome-project / MR #2 NEW MR',
      'Tomasz Kolek created [MR #2](https://gitlab.com/tomaszkolek0/my-awesome-project/merge_requests/2) from `tomek` to `master` (assigned to Tomasz Kolek):\n\n~~~ quote\ndescription of merge request\n~~~');
    await expectChannelMessage(t, hook, 'gitlab', {}, mr('update', { oldrev: sha('4') }), ev('Merge Request Hook'), 'my-awesome-project / MR #2 NEW MR', 'Tomasz Kolek added commit(s) to [MR #2](https://gitlab.com/tomaszkolek0/my-awesome-project/merge_requests/2).');
    await expectChannelMessage(t, hook, 'gitlab', {}, mr('merge'), ev('Merge Request Hook'), 'my-awesome-project / MR #2 NEW MR', 'Tomasz Kolek merged [MR #2](https://gitlab.com/tomaszkolek0/my-awesome-project/merge_requests/2) from `tomek` to `master`.');
    await expectChannelMessage(t, hook, 'gitlab', { use_merge_request_title: 'false' }, mr('close'), ev('Merge Request Hook'), 'my-awesome-project / MR #2', 'Tomasz Kolek closed [MR #2](https://gitlab.com/tomaszkolek0/my-awesome-project/merge_requests/2).');
  });

  it('comments on an issue and a merge request', async () => {
    const note = (noteable: string, url: string) => ({ object_kind: 'note', user, project, object_attributes: { noteable_type: noteable, note: 'This is again a random comment.', url } });
    await expectChannelMessage(t, hook, 'gitlab', {}, { ...note('Issue', 'https://gitlab.com/tomaszkolek0/my-awesome-project/-/issues/1#note_1'), issue: { iid: 1, title: 'Add more lines', url: 'https://gitlab.com/tomaszkolek0/my-awesome-project/-/issues/1' } }, ev('Note Hook'),
      'my-awesome-project / issue #1 Add more lines', 'Tomasz Kolek [commented](https://gitlab.com/tomaszkolek0/my-awesome-project/-/issues/1#note_1) on [issue #1](https://gitlab.com/tomaszkolek0/my-awesome-project/-/issues/1):\n\n~~~ quote\nThis is again a random comment.\n~~~');
    await expectChannelMessage(t, hook, 'gitlab', {}, { ...note('MergeRequest', 'https://gitlab.com/tomaszkolek0/my-awesome-project/-/merge_requests/1#note_2'), merge_request: { iid: 1, title: 'add new-feature', url: 'https://gitlab.com/tomaszkolek0/my-awesome-project/-/merge_requests/1' } }, ev('Note Hook'),
      'my-awesome-project / MR #1 add new-feature', 'Tomasz Kolek [commented](https://gitlab.com/tomaszkolek0/my-awesome-project/-/merge_requests/1#note_2) on [MR #1](https://gitlab.com/tomaszkolek0/my-awesome-project/-/merge_requests/1):\n\n~~~ quote\nThis is again a random comment.\n~~~');
  });

  it('only_events matches the refined event names; unsupported events; missing header', async () => {
    await expectNoMessage(t, hook, 'gitlab', { only_events: '["Merge Request Hook*"]' }, issue('close'), ev('Issue Hook'));
    await expectChannelMessage(t, hook, 'gitlab', { exclude_events: '["Issue Hook open"]' }, issue('close'), ev('Issue Hook'), 'my-awesome-project / issue #1 Issue title', 'Tomasz Kolek closed [issue #1](https://gitlab.com/tomaszkolek0/my-awesome-project/issues/1).');
    const { res, sent } = await messagesSentBy(t, () => postHook(t, 'gitlab', { api_key: hook.key, stream: hook.channel }, { object_kind: 'feature_flag' }, ev('Feature Flag Hook')));
    expect({ status: res.status, body: res.body, sent }).toEqual({
      status: 200,
      body: { result: 'success', msg: "The 'Feature Flag Hook' event isn't currently supported by the GitLab webhook; ignoring", code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE', webhook_name: 'GitLab', event_type: 'Feature Flag Hook' },
      sent: [],
    });
    expectError(await postHook(t, 'gitlab', { api_key: hook.key, stream: hook.channel }, push([])), 400, 'MISSING_HTTP_EVENT_HEADER', "Missing the HTTP event header 'X-GitLab-Event'", { header: 'X-GitLab-Event' });
    expectError(await postHook(t, 'gitlab', { api_key: hook.key, stream: hook.channel }, 'not json', ev('Push Hook')), 400, 'INVALID_JSON', 'Malformed JSON');
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemGroupId } from '../../src/domain/rules/group-settings.js';
import { expectError, expectSuccess, startTestServer, type TestServer } from '../support/server.js';
import { getEvents, registerQueue, withoutIds } from '../support/events.js';
import { createChannel, getMessage, sendChannelMessage, sendDirectMessage } from '../support/messages.js';

let t: TestServer;
let denmark: number;
let verona: number;
beforeAll(async () => {
  t = await startTestServer();
  denmark = await createChannel(t, 'Denmark', ['hamlet', 'cordelia', 'iago', 'othello']);
  verona = await createChannel(t, 'Verona', ['hamlet', 'iago', 'othello']);
});
afterAll(async () => t.close());
afterEach(() => {
  vi.useRealTimers();
});

/** Moves the clock forward (Date only) so time limits can be crossed without waiting. */
function travel(seconds: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

/** A refused edit or deletion: exact error, message unchanged, no event. */
async function expectRefused(id: number, fn: () => Promise<any>, code: string, msg: string, extra: Record<string, unknown> = {}): Promise<void> {
  const before = await t.app.ctx.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
  let res: any;
  const deliveries = await t.captureEvents(async () => {
    res = await fn();
  });
  expectError(res, 400, code, msg, extra);
  expect(deliveries).toEqual([]);
  expect(await t.app.ctx.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst()).toEqual(before);
}

describe('PATCH /messages/{id}: content', () => {
  it('edits the content: update_message to every recipient with their flags, history entry, last_edit_timestamp', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'edits', 'content before edit');
    const qc = await registerQueue(t, 'cordelia', { event_types: ['update_message'] });
    const res = await t.patch(`/messages/${id}`, { content: 'content after edit @**Cordelia, Lear\'s daughter**' }, 'hamlet');
    expect(expectSuccess(res)).toEqual({ result: 'success', msg: '', detached_uploads: [] });
    const [e] = withoutIds(await getEvents(t, 'cordelia', qc.queue_id, qc.last_event_id));
    const m = await getMessage(t, 'cordelia', id);
    const mention = `<span class="user-mention" data-user-id="${t.users.cordelia.id}">@Cordelia, Lear's daughter</span>`;
    expect(e).toEqual({
      type: 'update_message',
      user_id: t.users.hamlet.id,
      edit_timestamp: m.last_edit_timestamp,
      message_id: id,
      rendering_only: false,
      orig_content: 'content before edit',
      orig_rendered_content: '<p>content before edit</p>',
      content: "content after edit @**Cordelia, Lear's daughter**",
      rendered_content: `<p>content after edit ${mention}</p>`,
      is_me_message: false,
      stream_name: 'Denmark',
      stream_id: denmark,
      message_ids: [id],
      flags: ['mentioned'],
    });
    expect(m.flags).toEqual(['mentioned']);
    expect(m.edit_history).toEqual([
      { user_id: t.users.hamlet.id, timestamp: m.last_edit_timestamp, prev_content: 'content before edit', prev_rendered_content: '<p>content before edit</p>' },
    ]);
    expect(m.last_moved_timestamp).toBeUndefined();
  });

  it('history: oldest first, with content_html_diff', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'history', 'content before edit');
    const single = expectSuccess(await t.get(`/messages/${id}/history`, {}, 'cordelia')).message_history;
    expect(single).toEqual([{ content: 'content before edit', rendered_content: '<p>content before edit</p>', timestamp: single[0].timestamp, topic: 'history', user_id: t.users.hamlet.id }]);
    expectSuccess(await t.patch(`/messages/${id}`, { content: 'content after edit' }, 'hamlet'));
    const h = expectSuccess(await t.get(`/messages/${id}/history`, {}, 'cordelia')).message_history;
    expect(h).toHaveLength(2);
    expect(h[0]).toEqual({ content: 'content before edit', rendered_content: '<p>content before edit</p>', timestamp: single[0].timestamp, topic: 'history', user_id: t.users.hamlet.id });
    expect(h[1]).toEqual({
      content: 'content after edit',
      rendered_content: '<p>content after edit</p>',
      timestamp: h[1].timestamp,
      topic: 'history',
      user_id: t.users.hamlet.id,
      prev_content: 'content before edit',
      prev_rendered_content: '<p>content before edit</p>',
      content_html_diff: '<div><p>content <span class="highlight_text_inserted">after</span> <span class="highlight_text_deleted">before</span> edit</p></div>',
    });
  });

  it('blank content becomes "(deleted)"; DMs can be edited by their sender', async () => {
    const id = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'oops');
    const deliveries = await t.captureEvents(() => t.patch(`/messages/${id}`, { content: '   ' }, 'hamlet'));
    expect((await getMessage(t, 'cordelia', id)).content).toBe('<p>(deleted)</p>');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.userIds).toEqual([t.users.hamlet.id, t.users.cordelia.id].sort((a, b) => a - b));
    expect(deliveries[0]!.event.stream_id).toBeUndefined();
  });

  it('refuses content edits with Zulip\'s errors', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'errors', 'text');
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'dm');
    await expectRefused(id, () => t.patch(`/messages/${id}`, {}, 'hamlet'), 'BAD_REQUEST', 'Nothing to change');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x' }, 'cordelia'), 'BAD_REQUEST', "You don't have permission to edit this message");
    await expectRefused(dm, () => t.patch(`/messages/${dm}`, { topic: 'x' }, 'hamlet'), 'BAD_REQUEST', 'Direct messages cannot have topics.');
    await expectRefused(dm, () => t.patch(`/messages/${dm}`, { stream_id: denmark }, 'hamlet'), 'BAD_REQUEST', 'Direct messages cannot be moved to channels.');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x', propagate_mode: 'change_all' }, 'hamlet'), 'BAD_REQUEST', 'Invalid propagate_mode without topic edit');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x', propagate_mode: 'change_some' }, 'hamlet'), 'BAD_REQUEST', 'Invalid propagate_mode');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x', stream_id: verona }, 'hamlet'), 'BAD_REQUEST', 'Cannot change message content while changing channel');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { topic: '✔ general chat' }, 'hamlet'), 'BAD_REQUEST', 'General chat cannot be marked as resolved');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { topic: '✔' }, 'hamlet'), 'BAD_REQUEST', 'General chat cannot be marked as resolved');
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x', prev_content_sha256: 'abc' }, 'hamlet'), 'EXPECTATION_MISMATCH', "'prev_content_sha256' value does not match the expected value.");
    await expectRefused(dm, () => t.patch(`/messages/${dm}`, { content: 'x' }, 'iago'), 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.patch('/messages/999999', { content: 'x' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectSuccess(await t.patch('/realm', { allow_message_editing: false }, 'owner'));
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x' }, 'hamlet'), 'BAD_REQUEST', 'Your organization has turned off message editing');
    expectSuccess(await t.patch('/realm', { allow_message_editing: true }, 'owner'));
    travel(600 + 21);
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'x' }, 'hamlet'), 'BAD_REQUEST', 'The time limit for editing this message has passed');
  });

  it('refuses edits of messages in archived channels', async () => {
    const ch = await createChannel(t, 'archive me', ['hamlet']);
    const id = await sendChannelMessage(t, 'hamlet', ch, 'x', 'text');
    expectSuccess(await t.delete(`/streams/${ch}`, {}, 'owner'));
    await expectRefused(id, () => t.patch(`/messages/${id}`, { content: 'new' }, 'hamlet'), 'BAD_REQUEST', 'Invalid message(s)');
  });
});

describe('PATCH /messages/{id}: topics and moves', () => {
  it('change_one / change_later / change_all with legacy subject fields and per-message history', async () => {
    const a = await sendChannelMessage(t, 'hamlet', 'Denmark', 'moves', 'a');
    const b = await sendChannelMessage(t, 'cordelia', 'Denmark', 'moves', 'b');
    const c = await sendChannelMessage(t, 'hamlet', 'Denmark', 'moves', 'c');
    const q = await registerQueue(t, 'othello', { event_types: ['update_message'] });
    expectSuccess(await t.patch(`/messages/${b}`, { topic: 'later', propagate_mode: 'change_later' }, 'hamlet'));
    const [e] = withoutIds(await getEvents(t, 'othello', q.queue_id, q.last_event_id));
    expect(e).toMatchObject({
      type: 'update_message',
      message_id: b,
      stream_name: 'Denmark',
      stream_id: denmark,
      propagate_mode: 'change_later',
      orig_subject: 'moves',
      subject: 'later',
      topic_links: [],
      message_ids: [b, c],
      flags: [],
    });
    expect((await getMessage(t, 'hamlet', a)).subject).toBe('moves');
    const mb = await getMessage(t, 'hamlet', b);
    const mc = await getMessage(t, 'hamlet', c);
    expect(mc.subject).toBe('later');
    expect(mc.edit_history).toEqual([{ user_id: t.users.hamlet.id, timestamp: mc.last_moved_timestamp, prev_topic: 'moves', topic: 'later' }]);
    expect(mb.last_edit_timestamp).toBeUndefined();
    expect(mb.last_moved_timestamp).toBe(mb.edit_history[0].timestamp);
    expectSuccess(await t.patch(`/messages/${a}`, { topic: 'all of it', propagate_mode: 'change_all' }, 'hamlet'));
    expect((await getMessage(t, 'hamlet', b)).subject).toBe('later');
    expect((await getMessage(t, 'hamlet', a)).subject).toBe('all of it');
    expectSuccess(await t.patch(`/messages/${c}`, { topic: 'LATER' }, 'hamlet'));
    expect((await getMessage(t, 'hamlet', c)).subject).toBe('LATER');
  });

  it('resolving adds "✔ ", is not a move, and needs can_resolve_topics_group', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'bug 1', 'broken');
    expectSuccess(await t.patch(`/messages/${id}`, { topic: '✔ bug 1', propagate_mode: 'change_all' }, 'cordelia'));
    const m = await getMessage(t, 'hamlet', id);
    expect(m.subject).toBe('✔ bug 1');
    expect(m.last_moved_timestamp).toBeUndefined();
    const nobody = await systemGroupId(t.app.ctx.db, t.realmId, 'role:nobody');
    expectSuccess(await t.patch('/realm', { can_resolve_topics_group: { new: nobody } }, 'owner'));
    await expectRefused(id, () => t.patch(`/messages/${id}`, { topic: 'bug 1', propagate_mode: 'change_all' }, 'cordelia'), 'BAD_REQUEST', "You don't have permission to resolve topics in this channel.");
    const everyone = await systemGroupId(t.app.ctx.db, t.realmId, 'role:everyone');
    expectSuccess(await t.patch('/realm', { can_resolve_topics_group: { new: everyone } }, 'owner'));
    expectSuccess(await t.patch(`/messages/${id}`, { topic: 'bug 1', propagate_mode: 'change_all' }, 'cordelia'));
    expect((await getMessage(t, 'hamlet', id)).subject).toBe('bug 1');
  });

  it('topic edit permissions and time limits', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'perm', 'x');
    const nobody = await systemGroupId(t.app.ctx.db, t.realmId, 'role:nobody');
    expectSuccess(await t.patch('/realm', { can_move_messages_between_topics_group: { new: nobody } }, 'owner'));
    await expectRefused(id, () => t.patch(`/messages/${id}`, { topic: 'elsewhere' }, 'hamlet'), 'BAD_REQUEST', "You don't have permission to edit this message");
    const everyone = await systemGroupId(t.app.ctx.db, t.realmId, 'role:everyone');
    expectSuccess(await t.patch('/realm', { can_move_messages_between_topics_group: { new: everyone } }, 'owner'));
    travel(604800 + 21);
    await expectRefused(id, () => t.patch(`/messages/${id}`, { topic: 'elsewhere' }, 'hamlet'), 'BAD_REQUEST', "The time limit for editing this message's topic has passed.");
    // Moderators are not bound by it.
    expectSuccess(await t.patch(`/messages/${id}`, { topic: 'elsewhere' }, 'shiva'));
  });

  it('change_all beyond the time limit reports how many messages may move', async () => {
    const old = await sendChannelMessage(t, 'hamlet', 'Denmark', 'limits', 'old');
    travel(604800 + 100);
    const recent = await sendChannelMessage(t, 'hamlet', 'Denmark', 'limits', 'recent');
    await expectRefused(recent, () => t.patch(`/messages/${recent}`, { topic: 'moved', propagate_mode: 'change_all' }, 'hamlet'), 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', 'You only have permission to move the 1/2 most recent messages in this topic.', {
      first_message_id_allowed_to_move: recent,
      total_messages_in_topic: 2,
      total_messages_allowed_to_move: 1,
    });
    expect((await getMessage(t, 'hamlet', old)).subject).toBe('limits');
  });

  it('moves to another channel: history entry, new_stream_id, delete_message to users who lose access, first_message_id', async () => {
    const priv = await createChannel(t, 'private room', ['hamlet', 'iago'], { invite_only: true, history_public_to_subscribers: true });
    const id = await sendChannelMessage(t, 'hamlet', 'Verona', 'journey', 'we travel');
    const qo = await registerQueue(t, 'othello', { event_types: ['update_message', 'delete_message'], client_capabilities: { notification_settings_null: true, bulk_message_deletion: true } });
    const qi = await registerQueue(t, 'iago', { event_types: ['update_message'] });
    expectSuccess(await t.patch(`/messages/${id}`, { stream_id: priv }, 'hamlet'));
    const [eo] = withoutIds(await getEvents(t, 'othello', qo.queue_id, qo.last_event_id));
    expect(eo).toEqual({ type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: verona, topic: 'journey' });
    const [ei] = withoutIds(await getEvents(t, 'iago', qi.queue_id, qi.last_event_id));
    expect(ei).toMatchObject({ type: 'update_message', message_id: id, stream_id: verona, new_stream_id: priv, orig_subject: 'journey', propagate_mode: 'change_one', message_ids: [id] });
    expect(ei.subject).toBeUndefined();
    const m = await getMessage(t, 'iago', id);
    expect(m).toMatchObject({ stream_id: priv, display_recipient: 'private room', subject: 'journey' });
    expect(m.edit_history).toEqual([{ user_id: t.users.hamlet.id, timestamp: m.last_moved_timestamp, prev_stream: verona, stream: priv }]);
    expectError(await t.get(`/messages/${id}`, {}, 'othello'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expect(expectSuccess(await t.get(`/streams/${priv}`, {}, 'iago')).stream.first_message_id).toBe(id);
    const hist = expectSuccess(await t.get(`/messages/${id}/history`, {}, 'iago')).message_history;
    expect(hist[1]).toMatchObject({ prev_stream: verona, stream: priv, topic: 'journey' });
  });

  it('refuses moves without permission', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'stay', 'x');
    const nobody = await systemGroupId(t.app.ctx.db, t.realmId, 'role:nobody');
    expectSuccess(await t.patch('/realm', { can_move_messages_between_channels_group: { new: nobody } }, 'owner'));
    await expectRefused(id, () => t.patch(`/messages/${id}`, { stream_id: verona }, 'hamlet'), 'BAD_REQUEST', "You don't have permission to move this message");
    const members = await systemGroupId(t.app.ctx.db, t.realmId, 'role:members');
    expectSuccess(await t.patch('/realm', { can_move_messages_between_channels_group: { new: members } }, 'owner'));
    await expectRefused(id, () => t.patch(`/messages/${id}`, { stream_id: 999999 }, 'hamlet'), 'BAD_REQUEST', 'Invalid channel ID');
    travel(604800 + 21);
    await expectRefused(id, () => t.patch(`/messages/${id}`, { stream_id: verona }, 'hamlet'), 'BAD_REQUEST', "The time limit for editing this message's channel has passed");
  });
});

describe('edit history visibility', () => {
  it('moves: content-only edits disappear; none: the endpoint refuses and edit_history goes, timestamps stay', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'visibility', 'v1');
    expectSuccess(await t.patch(`/messages/${id}`, { content: 'v2' }, 'hamlet'));
    expectSuccess(await t.patch(`/messages/${id}`, { topic: 'visibility 2', content: 'v3' }, 'hamlet'));
    expectSuccess(await t.patch('/realm', { message_edit_history_visibility_policy: 'moves' }, 'owner'));
    const h = expectSuccess(await t.get(`/messages/${id}/history`, {}, 'cordelia')).message_history;
    expect(h.map((s: any) => Object.keys(s).sort())).toEqual([
      ['content', 'rendered_content', 'timestamp', 'topic', 'user_id'],
      ['content', 'prev_topic', 'rendered_content', 'timestamp', 'topic', 'user_id'],
    ]);
    const m = await getMessage(t, 'cordelia', id);
    expect(m.edit_history).toEqual([{ user_id: t.users.hamlet.id, timestamp: m.last_edit_timestamp, prev_topic: 'visibility', topic: 'visibility 2' }]);
    expectSuccess(await t.patch('/realm', { message_edit_history_visibility_policy: 'none' }, 'owner'));
    expectError(await t.get(`/messages/${id}/history`, {}, 'cordelia'), 400, 'BAD_REQUEST', 'Message edit history is disabled in this organization');
    const hidden = await getMessage(t, 'cordelia', id);
    expect(hidden.edit_history).toBeUndefined();
    expect(hidden.last_edit_timestamp).toBe(m.last_edit_timestamp);
    expectSuccess(await t.patch('/realm', { message_edit_history_visibility_policy: 'all' }, 'owner'));
  });

  it('history of an invisible message is "Invalid message(s)"; the empty topic is named unless allowed', async () => {
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'private');
    expectError(await t.get(`/messages/${dm}/history`, {}, 'othello'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', '', 'empty topic');
    expect(expectSuccess(await t.get(`/messages/${id}/history`, {}, 'hamlet')).message_history[0].topic).toBe('general chat');
    expect(expectSuccess(await t.get(`/messages/${id}/history`, { allow_empty_topic_name: true }, 'hamlet')).message_history[0].topic).toBe('');
  });
});

describe('DELETE /messages/{id}', () => {
  it('the sender deletes: delete_message to everyone who could see it; the message is gone', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'doomed', 'bye');
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.delete(`/messages/${id}`, {}, 'hamlet')));
    expect(deliveries).toEqual([
      {
        realmId: t.realmId,
        event: { type: 'delete_message', message_ids: [id], message_type: 'stream', stream_id: denmark, topic: 'doomed' },
        userIds: [t.users.iago.id, t.users.hamlet.id, t.users.cordelia.id, t.users.othello.id].sort((a, b) => a - b),
      },
    ]);
    expectError(await t.get(`/messages/${id}`, {}, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it('clients without bulk_message_deletion get one message_id', async () => {
    const id = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'dm to delete');
    const q = await registerQueue(t, 'cordelia', { event_types: ['delete_message'] });
    expectSuccess(await t.delete(`/messages/${id}`, {}, 'hamlet'));
    expect(withoutIds(await getEvents(t, 'cordelia', q.queue_id, q.last_event_id))).toEqual([{ type: 'delete_message', message_id: id, message_type: 'private' }]);
  });

  it('permissions: not others\' messages; admins may; the time limit', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'doomed', 'x');
    await expectRefused(id, () => t.delete(`/messages/${id}`, {}, 'cordelia'), 'BAD_REQUEST', "You don't have permission to delete this message");
    await expectRefused(id, () => t.delete(`/messages/${id}`, {}, 'polonius'), 'BAD_REQUEST', 'Invalid message(s)');
    expectSuccess(await t.delete(`/messages/${id}`, {}, 'iago'));
    const mine = await sendChannelMessage(t, 'hamlet', 'Denmark', 'doomed', 'y');
    expectSuccess(await t.patch('/realm', { message_content_delete_limit_seconds: '60' }, 'owner'));
    travel(61);
    await expectRefused(mine, () => t.delete(`/messages/${mine}`, {}, 'hamlet'), 'BAD_REQUEST', 'The time limit for deleting this message has passed');
    vi.useRealTimers();
    expectSuccess(await t.patch('/realm', { message_content_delete_limit_seconds: 'unlimited' }, 'owner'));
    const nobody = await systemGroupId(t.app.ctx.db, t.realmId, 'role:nobody');
    expectSuccess(await t.patch('/realm', { can_delete_own_message_group: { new: nobody } }, 'owner'));
    await expectRefused(mine, () => t.delete(`/messages/${mine}`, {}, 'hamlet'), 'BAD_REQUEST', "You don't have permission to delete this message");
    const everyone = await systemGroupId(t.app.ctx.db, t.realmId, 'role:everyone');
    expectSuccess(await t.patch('/realm', { can_delete_own_message_group: { new: everyone } }, 'owner'));
    expectSuccess(await t.delete(`/messages/${mine}`, {}, 'hamlet'));
  });
});

describe('POST /messages/{id}/typing', () => {
  it('sends typing_edit_message to the conversation; refuses others\' messages', async () => {
    const id = await sendChannelMessage(t, 'hamlet', 'Denmark', 'typing', 'x');
    const deliveries = await t.captureEvents(async () => expectSuccess(await t.post(`/messages/${id}/typing`, { op: 'start' }, 'hamlet')));
    expect(deliveries).toEqual([
      {
        realmId: t.realmId,
        event: { type: 'typing_edit_message', op: 'start', sender_id: t.users.hamlet.id, message_id: id, recipient: { type: 'channel', channel_id: denmark, topic: 'typing' } },
        userIds: [t.users.iago.id, t.users.hamlet.id, t.users.cordelia.id, t.users.othello.id].sort((a, b) => a - b),
      },
    ]);
    const dm = await sendDirectMessage(t, 'hamlet', ['cordelia'], 'dm');
    const dmEvents = await t.captureEvents(async () => expectSuccess(await t.post(`/messages/${dm}/typing`, { op: 'stop' }, 'hamlet')));
    const pair = [t.users.hamlet.id, t.users.cordelia.id].sort((a, b) => a - b);
    expect(dmEvents[0]!.event).toEqual({ type: 'typing_edit_message', op: 'stop', sender_id: t.users.hamlet.id, message_id: dm, recipient: { type: 'direct', user_ids: pair } });
    expectError(await t.post(`/messages/${id}/typing`, { op: 'start' }, 'cordelia'), 400, 'BAD_REQUEST', "You don't have permission to edit this message");
    expectError(await t.post(`/messages/${dm}/typing`, { op: 'start' }, 'iago'), 400, 'BAD_REQUEST', 'Invalid message(s)');
    expectError(await t.post(`/messages/${id}/typing`, { op: 'pause' }, 'hamlet'), 400, 'BAD_REQUEST', 'Invalid op');
    expectSuccess(await t.patch('/settings', { send_stream_typing_notifications: false, send_private_typing_notifications: false }, 'hamlet'));
    expectError(await t.post(`/messages/${id}/typing`, { op: 'start' }, 'hamlet'), 400, 'BAD_REQUEST', 'User has disabled typing notifications for channel messages');
    expectError(await t.post(`/messages/${dm}/typing`, { op: 'start' }, 'hamlet'), 400, 'BAD_REQUEST', 'User has disabled typing notifications for direct messages');
  });
});

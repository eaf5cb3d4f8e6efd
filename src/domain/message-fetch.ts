import { userAccessOf } from './access/user-access.js';
import type { AppCtx, Caller } from './context.js';
import { realmOf } from './realm-row-cache.js';
import { resolveNarrow } from './access/message-narrow.js';
import { bulkAccessible, invalidMessage } from './access/messages.js';
import { isPossibleId } from './rules/ids.js';
import { messageViewFor } from './actions/message-events.js';
import { linkifiersForRealm } from './access/linkifiers.js';
import { LARGER_THAN_MAX_MESSAGE_ID, type Anchor, type NarrowTerm } from './rules/message-narrow.js';
import { realmSettings } from './rules/realm-settings.js';
import { highlightHtml, type SearchQuery } from './rules/search-text.js';
import { presentMessage } from '../presenters/message.js';
import { firstUnreadId, searchRange, type FoundContent, type FoundRow, type SearchSpec } from '../store/message-search.js';
import { loadMessageRelations } from '../store/message-relations.js';
import { messagesWithFlagsByIds } from '../store/messages.js';
import { realmById } from '../store/realms.js';

/**
 * GET /messages as Zulip computes it (fetch_messages, limit_query_to_range,
 * post_process_limited_query): at most two keyset queries around the anchor,
 * then one query each for people, channel names and reactions.
 */
export interface FetchRequest {
  readonly anchor: Anchor;
  readonly numBefore: number;
  readonly numAfter: number;
  readonly includeAnchor: boolean;
  readonly narrow: readonly NarrowTerm[];
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly allowEmptyTopicName: boolean;
}

export interface FetchedRange {
  readonly rows: FoundRow[];
  readonly anchor: number;
  readonly foundAnchor: boolean;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
}

/** The rows of a narrow around an anchor (also used by POST /messages/flags/narrow); `content`: which contents to read (searchRange). */
export async function fetchRange(
  app: AppCtx,
  spec: SearchSpec,
  channelNarrow: boolean,
  req: Pick<FetchRequest, 'anchor' | 'numBefore' | 'numAfter' | 'includeAnchor'>,
  content: FoundContent = 'both',
): Promise<FetchedRange> {
  let anchor: number;
  if (req.anchor === 'first_unread') {
    const conditions = [...spec.conditions, { kind: 'muted_excluded' as const, userId: spec.userId, channels: !channelNarrow }];
    anchor = (await firstUnreadId(app.db, { ...spec, conditions })) ?? LARGER_THAN_MAX_MESSAGE_ID;
  } else anchor = req.anchor;
  const { numBefore, includeAnchor } = req;
  const anchoredToLeft = anchor === 0;
  const anchoredToRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const numAfter = anchoredToRight ? 0 : req.numAfter;
  const needBefore = !anchoredToLeft && numBefore > 0;
  const needAfter = !anchoredToRight && numAfter > 0;
  let rows: FoundRow[];
  if (needBefore && needAfter) {
    const before = await searchRange(app.db, spec, { dir: 'before', bound: anchor - 1, limit: numBefore }, content);
    const after = await searchRange(app.db, spec, { dir: 'after', bound: anchor, limit: numAfter + 1 }, content);
    rows = [...before, ...after];
  } else if (needBefore) {
    const bound = anchoredToRight ? anchor : anchor - (includeAnchor ? 0 : 1);
    rows = await searchRange(app.db, spec, { dir: 'before', bound, limit: numBefore + (anchoredToRight || !includeAnchor ? 0 : 1) }, content);
  } else if (needAfter) {
    rows = await searchRange(app.db, spec, { dir: 'after', bound: anchor + (includeAnchor ? 0 : 1), limit: numAfter + (includeAnchor ? 1 : 0) }, content);
  } else {
    rows = await searchRange(app.db, spec, { dir: 'exact', bound: anchor, limit: 1 }, content);
  }
  let beforeRows: FoundRow[];
  let anchorRows: FoundRow[] = [];
  let afterRows: FoundRow[] = [];
  if (anchoredToRight) beforeRows = rows;
  else {
    beforeRows = rows.filter((r) => r.id < anchor);
    anchorRows = rows.filter((r) => r.id === anchor);
    afterRows = rows.filter((r) => r.id > anchor);
  }
  if (numBefore) beforeRows = beforeRows.slice(-numBefore);
  if (numAfter) afterRows = afterRows.slice(0, numAfter);
  return {
    rows: [...beforeRows, ...anchorRows, ...afterRows],
    anchor,
    foundAnchor: anchorRows.length === 1,
    foundOldest: anchoredToLeft || beforeRows.length < numBefore,
    foundNewest: anchoredToRight || afterRows.length < numAfter,
  };
}

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');

export async function fetchMessages(app: AppCtx, caller: Caller, req: FetchRequest): Promise<Record<string, unknown>> {
  const realm = await realmOf(app, caller.realmId);
  const settings = realmSettings(realm.settings);
  const resolved = await resolveNarrow(app, caller, req.narrow, settings.realm_empty_topic_display_name);
  // Only the content the answer shows (rendered or Markdown), and the rendered one for search highlights.
  const content: FoundContent = req.applyMarkdown ? 'rendered' : resolved.search ? 'both' : 'markdown';
  const range = await fetchRange(app, resolved.spec, resolved.channelNarrow, req, content);
  const messages = await presentRows(app, caller, realm, settings, range.rows, req, resolved.search, resolved.channelNames);
  return {
    messages,
    found_anchor: range.foundAnchor,
    found_oldest: range.foundOldest,
    found_newest: range.foundNewest,
    history_limited: false,
    anchor: range.anchor,
  };
}

/** GET /messages with message_ids: those of the ids the caller may see, ascending. */
export async function fetchMessagesByIds(
  app: AppCtx,
  caller: Caller,
  ids: readonly number[],
  req: Pick<FetchRequest, 'narrow' | 'applyMarkdown' | 'clientGravatar' | 'allowEmptyTopicName'>,
): Promise<Record<string, unknown>> {
  const realm = await realmOf(app, caller.realmId);
  const settings = realmSettings(realm.settings);
  const resolved = await resolveNarrow(app, caller, req.narrow, settings.realm_empty_topic_display_name);
  const rows = await messagesWithFlagsByIds(app.db, [...new Set(ids)], caller.id);
  const visible = new Set((await bulkAccessible(app.db, caller, rows, new Set(rows.filter((r) => r.um_flags !== null).map((r) => r.id)))).map((m) => m.id));
  const messages = await presentRows(app, caller, realm, settings, rows.filter((r) => visible.has(r.id)), req, resolved.search);
  return { messages, history_limited: false, found_anchor: false, found_oldest: false, found_newest: false };
}

/**
 * GET /messages/matches_narrow (Zulip's messages_in_narrow_backend): which of
 * these messages match the narrow, with the search highlighting GET /messages
 * gives (or the rendered content and escaped topic without a search term).
 * As in Zulip, only messages the caller received (has a user_messages row
 * for) can match: the query walks the caller's rows, never channel history.
 * An id that no message can have (0, negative, beyond 32 bits) is refused as
 * "Invalid message(s)" (Parley's rule for impossible ids; Zulip would leave
 * it out); an id that could exist but does not is just absent, as in Zulip.
 */
export async function matchesNarrow(app: AppCtx, caller: Caller, ids: readonly number[], narrow: readonly NarrowTerm[]): Promise<Record<string, { match_content: string; match_subject: string }>> {
  const realm = await realmOf(app, caller.realmId);
  const settings = realmSettings(realm.settings);
  const resolved = await resolveNarrow(app, caller, narrow, settings.realm_empty_topic_display_name);
  if (!ids.every(isPossibleId)) throw invalidMessage();
  const unique = [...new Set(ids)];
  const out: Record<string, { match_content: string; match_subject: string }> = {};
  if (unique.length === 0) return out;
  const spec = { ...resolved.spec, includeHistory: false, conditions: [...resolved.spec.conditions, { kind: 'ids' as const, ids: unique }] };
  const rows = await searchRange(app.db, spec, { dir: 'after', bound: 0, limit: unique.length });
  const search = resolved.search;
  for (const r of rows) {
    const subject = escapeHtml(r.topic);
    out[String(r.id)] = search
      ? { match_content: highlightHtml(r.rendered_content, search.stems), match_subject: highlightHtml(subject, search.stems) }
      : { match_content: r.rendered_content, match_subject: subject };
  }
  return out;
}

async function presentRows(
  app: AppCtx,
  caller: Caller,
  realm: NonNullable<Awaited<ReturnType<typeof realmById>>>,
  settings: ReturnType<typeof realmSettings>,
  rows: readonly FoundRow[],
  req: Pick<FetchRequest, 'applyMarkdown' | 'clientGravatar' | 'allowEmptyTopicName'>,
  search: SearchQuery | null,
  knownChannels?: ReadonlyMap<number, string>,
): Promise<Record<string, unknown>[]> {
  const rel = await loadMessageRelations(app.db, rows, knownChannels);
  const access = await userAccessOf(app, caller);
  const view = { ...messageViewFor(app, realm, settings, req, await linkifiersForRealm(app.db, realm.id)), access };
  return rows.map((r) => {
    const out = presentMessage(r, rel, view, r.um_flags);
    if (search) {
      out.match_content = highlightHtml(r.rendered_content, search.stems);
      out.match_subject = highlightHtml(escapeHtml(r.topic), search.stems);
    }
    return out;
  });
}

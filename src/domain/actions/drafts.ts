import type { Caller, Tx, TxDb } from '../context.js';
import { badRequest, notFound, JsonableError } from '../errors.js';
import { accessChannelById, loadViewer } from '../access/channels.js';
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../rules/limits.js';
import { userSettings } from '../rules/user-settings.js';
import { isPossibleId } from '../rules/ids.js';
import { apiEmail } from '../../presenters/user.js';
import { presentDraft } from '../../presenters/draft.js';
import * as store from '../../store/drafts.js';
import type { DraftRow } from '../../store/drafts.js';
import { userById } from '../../store/users.js';

/** A draft as the request carries it (already checked for shape). */
export interface DraftInput {
  readonly type: '' | 'private' | 'stream';
  readonly to: readonly number[];
  readonly topic: string;
  readonly content: string;
  readonly timestamp?: number | null;
}

/** The stored form of a validated draft. */
interface ValidDraft {
  readonly type: string;
  readonly stream_id: number | null;
  readonly to_user_ids: string;
  readonly topic: string;
  readonly content: string;
  readonly last_edit_time: number;
}

/** Zulip's truncate_content, counting code points. */
function truncate(text: string, max: number, suffix: string): string {
  const chars = [...text];
  return chars.length > max ? chars.slice(0, max - [...suffix].length).join('') + suffix : text;
}

/** Zulip's normalize_body. */
function normalizeBody(body: string): string {
  const out = body.trimEnd().replace(/^\n+/, '');
  if (out.length === 0) throw badRequest('Message must not be empty');
  if (out.includes('\0')) throw badRequest('Message must not contain null bytes');
  return truncate(out, MAX_MESSAGE_LENGTH, '\n[message truncated]');
}

/** The user's enable_drafts_synchronization; a missing setting counts as enabled (Zulip's default). */
export function draftsSyncEnabled(settingsJson: string): boolean {
  return userSettings(settingsJson).enable_drafts_synchronization !== false;
}

export const draftNotFound = (): JsonableError => notFound('Draft does not exist');

/**
 * Zulip's further_validated_draft_dict, in its order: content, timestamp,
 * then the addressee (a channel the user can read, or existing users).
 */
export async function validateDraft(db: TxDb, caller: Caller, fakeEmailDomain: string, d: DraftInput): Promise<ValidDraft> {
  const content = normalizeBody(d.content);
  let timestamp = d.timestamp ?? Date.now() / 1000;
  timestamp = Math.round(timestamp * 1e6) / 1e6;
  if (timestamp < 0) throw badRequest('Timestamp must not be negative.');
  if (d.type === 'stream') {
    const topic = truncate(d.topic, MAX_TOPIC_LENGTH, '...');
    if (topic.includes('\0')) throw badRequest('Topic must not contain null bytes');
    if (d.to.length !== 1) throw badRequest('Must specify exactly 1 channel ID for channel messages');
    const me = (await userById(db, caller.realmId, caller.id))!;
    const channel = await accessChannelById(db, await loadViewer(db, me), d.to[0]!);
    return { type: 'stream', stream_id: channel.id, to_user_ids: '[]', topic, content, last_edit_time: timestamp };
  }
  if (d.type === 'private' && d.to.length > 0) {
    const ids = [...new Set(d.to)].sort((a, b) => a - b);
    const possible = ids.filter(isPossibleId);
    const rows = possible.length ? await db.selectFrom('users').selectAll().where('realm_id', '=', caller.realmId).where('id', 'in', possible).execute() : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = ids.find((id) => !byId.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    for (const id of ids) {
      const u = byId.get(id)!;
      if (!u.is_active) throw badRequest(`'${apiEmail(u, fakeEmailDomain)}' is no longer using Zulip.`);
    }
    // The recipients as Zulip's get_recipient_ids shows them: the others, or oneself for a self-DM.
    const others = ids.filter((id) => id !== caller.id);
    const to = others.length ? others : [caller.id];
    return { type: 'private', stream_id: null, to_user_ids: JSON.stringify(to), topic: '', content, last_edit_time: timestamp };
  }
  return { type: '', stream_id: null, to_user_ids: '[]', topic: '', content, last_edit_time: timestamp };
}

/** Validates every draft first, so a batch is created whole or not at all; one add event. */
export async function doCreateDrafts(tx: Tx, caller: Caller, fakeEmailDomain: string, drafts: readonly DraftInput[]): Promise<DraftRow[]> {
  const valid: ValidDraft[] = [];
  for (const d of drafts) valid.push(await validateDraft(tx.db, caller, fakeEmailDomain, d));
  const rows = await store.insertDrafts(
    tx.db,
    valid.map((v) => ({ realm_id: caller.realmId, user_id: caller.id, ...v })),
  );
  const byOrder = rows.sort((a, b) => a.id - b.id);
  tx.emit(caller.realmId, { type: 'drafts', op: 'add', drafts: byOrder.map(presentDraft) }, [caller.id]);
  return byOrder;
}

/** Full replacement of one draft; the lookup comes before the new content is checked. */
export async function doEditDraft(tx: Tx, caller: Caller, fakeEmailDomain: string, draftId: number, d: DraftInput): Promise<void> {
  const existing = await store.draftOfUser(tx.db, caller.id, draftId);
  if (!existing) throw draftNotFound();
  const v = await validateDraft(tx.db, caller, fakeEmailDomain, d);
  await store.updateDraft(tx.db, draftId, v);
  const row = (await store.draftOfUser(tx.db, caller.id, draftId))!;
  tx.emit(caller.realmId, { type: 'drafts', op: 'update', draft: presentDraft(row) }, [caller.id]);
}

export async function doDeleteDraft(tx: Tx, caller: Caller, draftId: number): Promise<void> {
  const existing = await store.draftOfUser(tx.db, caller.id, draftId);
  if (!existing) throw draftNotFound();
  await store.deleteDraft(tx.db, draftId);
  tx.emit(caller.realmId, { type: 'drafts', op: 'remove', draft_id: draftId }, [caller.id]);
}

import type { Caller, Tx } from '../context.js';
import { notFound, type JsonableError } from '../errors.js';
import { nowSeconds } from '../../store/db.js';
import * as store from '../../store/saved-snippets.js';
import type { SavedSnippetRow } from '../../store/saved-snippets.js';

/** Zulip's SavedSnippet.MAX_TITLE_LENGTH. */
export const MAX_SAVED_SNIPPET_TITLE_LENGTH = 60;

export interface SavedSnippetObject {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

export const presentSavedSnippet = (row: SavedSnippetRow): SavedSnippetObject => ({
  id: row.id,
  title: row.title,
  content: row.content,
  date_created: row.date_created,
});

export const snippetNotFound = (): JsonableError => notFound('Saved snippet does not exist.');

export async function doCreateSavedSnippet(tx: Tx, caller: Caller, title: string, content: string): Promise<SavedSnippetRow> {
  const row = await store.insertSnippet(tx.db, { realm_id: caller.realmId, user_id: caller.id, title, content, date_created: nowSeconds() });
  tx.emit(caller.realmId, { type: 'saved_snippets', op: 'add', saved_snippet: presentSavedSnippet(row) }, [caller.id]);
  return row;
}

/** Edits title and/or content; the update event carries the whole snippet. */
export async function doEditSavedSnippet(tx: Tx, caller: Caller, id: number, title: string | undefined, content: string | undefined): Promise<void> {
  const existing = await store.snippetOfUser(tx.db, caller.id, id);
  if (!existing) throw snippetNotFound();
  await store.updateSnippet(tx.db, id, { ...(title !== undefined ? { title } : {}), ...(content !== undefined ? { content } : {}) });
  const row = (await store.snippetOfUser(tx.db, caller.id, id))!;
  tx.emit(caller.realmId, { type: 'saved_snippets', op: 'update', saved_snippet: presentSavedSnippet(row) }, [caller.id]);
}

export async function doDeleteSavedSnippet(tx: Tx, caller: Caller, id: number): Promise<void> {
  const existing = await store.snippetOfUser(tx.db, caller.id, id);
  if (!existing) throw snippetNotFound();
  await store.deleteSnippet(tx.db, id);
  tx.emit(caller.realmId, { type: 'saved_snippets', op: 'remove', saved_snippet_id: id }, [caller.id]);
}

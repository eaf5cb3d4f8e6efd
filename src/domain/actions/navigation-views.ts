import type { Caller, Tx } from '../context.js';
import { badRequest, notFound, type JsonableError } from '../errors.js';
import * as store from '../../store/navigation-views.js';
import type { NavigationViewRow } from '../../store/navigation-views.js';

/** The web app's built-in left-sidebar views (Zulip's BUILT_IN_VIEW_FRAGMENTS). */
export const BUILT_IN_VIEW_FRAGMENTS: readonly string[] = [
  'inbox',
  'recent',
  'feed',
  'drafts',
  'narrow/has/reaction/sender/me',
  'narrow/is/mentioned',
  'narrow/is/starred',
  'scheduled',
];

export interface NavigationViewObject {
  fragment: string;
  is_pinned: boolean;
  name: string | null;
}

export const presentNavigationView = (row: NavigationViewRow): NavigationViewObject => ({
  fragment: row.fragment,
  is_pinned: row.is_pinned === 1,
  name: row.name,
});

const alreadyExists = (): JsonableError => badRequest('Navigation view already exists.');
export const viewNotFound = (): JsonableError => notFound('Navigation view does not exist.');

/** Adds a custom view, or settings for a built-in one (which may not be named). */
export async function doAddNavigationView(tx: Tx, caller: Caller, fragment: string, isPinned: boolean, name: string | undefined): Promise<void> {
  if (BUILT_IN_VIEW_FRAGMENTS.includes(fragment)) {
    if (name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
  } else if (!name) {
    throw badRequest('Custom views must have a valid name.');
  }
  if (await store.viewOfUser(tx.db, caller.id, fragment)) throw alreadyExists();
  if (name !== undefined && (await store.viewNameTaken(tx.db, caller.id, name))) throw alreadyExists();
  const row = await store.insertView(tx.db, { user_id: caller.id, fragment, is_pinned: isPinned ? 1 : 0, name: name ?? null });
  tx.emit(caller.realmId, { type: 'navigation_view', op: 'add', navigation_view: presentNavigationView(row) }, [caller.id]);
}

/**
 * Changes is_pinned and/or name. As in Zulip, the name check comes before
 * the lookup (and also matches the view's own name), and a request with
 * neither field still sends an update with empty data.
 */
export async function doUpdateNavigationView(
  tx: Tx,
  caller: Caller,
  fragment: string,
  isPinned: boolean | undefined,
  name: string | undefined,
): Promise<void> {
  if (BUILT_IN_VIEW_FRAGMENTS.includes(fragment) && name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
  if (name !== undefined && (await store.viewNameTaken(tx.db, caller.id, name))) throw alreadyExists();
  const view = await store.viewOfUser(tx.db, caller.id, fragment);
  if (!view) throw viewNotFound();
  const data: { name?: string; is_pinned?: boolean } = {};
  if (name !== undefined) data.name = name;
  if (isPinned !== undefined) data.is_pinned = isPinned;
  await store.updateView(tx.db, view.id, {
    ...(name !== undefined ? { name } : {}),
    ...(isPinned !== undefined ? { is_pinned: isPinned ? 1 : 0 } : {}),
  });
  tx.emit(caller.realmId, { type: 'navigation_view', op: 'update', fragment, data }, [caller.id]);
}

export async function doRemoveNavigationView(tx: Tx, caller: Caller, fragment: string): Promise<void> {
  const view = await store.viewOfUser(tx.db, caller.id, fragment);
  if (!view) throw viewNotFound();
  await store.deleteView(tx.db, view.id);
  tx.emit(caller.realmId, { type: 'navigation_view', op: 'remove', fragment }, [caller.id]);
}

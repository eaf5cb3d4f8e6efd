import type { AppCtx, Caller, Tx } from '../context.js';
import { transact } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { linkifierCache } from '../access/linkifiers.js';
import { firstLinkifierError, linkifierErrors } from '../rules/linkifier-validation.js';
import { presentLinkifier } from '../../presenters/linkifier.js';
import { deleteLinkifier, insertLinkifier, linkifierById, linkifierRows, patternInUse, setLinkifierOrder, updateLinkifier } from '../../store/linkifiers.js';
import { activeUserIds } from '../../store/users.js';

/**
 * Linkifiers (Zulip's zerver/actions/realm_linkifiers.py). Every change
 * sends the whole ordered list to every active user:
 *   {type: 'realm_linkifiers', realm_linkifiers: [{pattern, url_template, id}, ...]}
 * Queues without the linkifier_url_template capability never get it (their
 * /register list is empty: the template format is not the one they know),
 * and the legacy realm_filters event is no longer sent.
 */

export const linkifierNotFound = (): JsonableError => badRequest('Linkifier not found.');

async function notifyLinkifiers(app: AppCtx, tx: Tx, realmId: number): Promise<void> {
  const list = (await linkifierRows(tx.db, realmId)).map(presentLinkifier);
  tx.emit(realmId, { type: 'realm_linkifiers', realm_linkifiers: list }, await activeUserIds(tx.db, realmId));
  linkifierCache.invalidate(app.db);
  tx.afterCommit(() => linkifierCache.invalidate(app.db));
}

/** Django's full_clean, raised as Zulip's ValidationFailureError: msg plus the `errors` dict. */
async function validate(tx: Tx, realmId: number, pattern: string, urlTemplate: string, exceptId?: number): Promise<void> {
  const errors = await linkifierErrors(pattern, urlTemplate, () => patternInUse(tx.db, realmId, pattern, exceptId));
  if (errors) throw new JsonableError(firstLinkifierError(errors), { data: { errors } });
}

export async function doAddLinkifier(app: AppCtx, caller: Caller, rawPattern: string, rawTemplate: string): Promise<number> {
  const pattern = rawPattern.trim();
  const urlTemplate = rawTemplate.trim();
  return transact(app, async (tx) => {
    await validate(tx, caller.realmId, pattern, urlTemplate);
    const id = await insertLinkifier(tx.db, { realm_id: caller.realmId, pattern, url_template: urlTemplate });
    await notifyLinkifiers(app, tx, caller.realmId);
    return id;
  });
}

export async function doUpdateLinkifier(app: AppCtx, caller: Caller, id: number, rawPattern: string, rawTemplate: string): Promise<void> {
  const pattern = rawPattern.trim();
  const urlTemplate = rawTemplate.trim();
  await transact(app, async (tx) => {
    if (!(await linkifierById(tx.db, caller.realmId, id))) throw linkifierNotFound();
    await validate(tx, caller.realmId, pattern, urlTemplate, id);
    await updateLinkifier(tx.db, id, { pattern, url_template: urlTemplate });
    await notifyLinkifiers(app, tx, caller.realmId);
  });
}

export async function doRemoveLinkifier(app: AppCtx, caller: Caller, id: number): Promise<void> {
  await transact(app, async (tx) => {
    if (!(await linkifierById(tx.db, caller.realmId, id))) throw linkifierNotFound();
    await deleteLinkifier(tx.db, id);
    await notifyLinkifiers(app, tx, caller.realmId);
  });
}

/** PATCH /realm/linkifiers: the new order must name every linkifier exactly once. */
export async function checkReorderLinkifiers(app: AppCtx, caller: Caller, orderedIds: readonly number[]): Promise<void> {
  const wanted = new Set(orderedIds);
  if (wanted.size < orderedIds.length) throw badRequest('The ordered list must not contain duplicated linkifiers');
  await transact(app, async (tx) => {
    const rows = await linkifierRows(tx.db, caller.realmId);
    if (rows.length !== wanted.size || rows.some((r) => !wanted.has(r.id))) {
      throw badRequest('The ordered list must enumerate all existing linkifiers exactly once');
    }
    if (rows.length === 0) return;
    for (const [order, id] of orderedIds.entries()) await setLinkifierOrder(tx.db, id, order);
    await notifyLinkifiers(app, tx, caller.realmId);
  });
}

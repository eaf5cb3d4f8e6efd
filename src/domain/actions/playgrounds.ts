import type { AppCtx, Caller, Tx } from '../context.js';
import { transact } from '../context.js';
import { badRequest, JsonableError } from '../errors.js';
import { firstPlaygroundError, playgroundErrors } from '../rules/playground-validation.js';
import { currentRealmValue, doSetRealmProperty } from './realm-settings.js';
import { presentPlayground } from '../../presenters/playground.js';
import { deletePlayground, insertPlayground, playgroundById, playgroundExists, playgroundRows } from '../../store/playgrounds.js';
import { activeUserIds } from '../../store/users.js';

/**
 * Code playgrounds (Zulip's zerver/actions/realm_playgrounds.py). Every change
 * sends the whole list to every active user:
 *   {type: 'realm_playgrounds', realm_playgrounds: [{id, name, pygments_language, url_template}, ...]}
 */

async function notifyPlaygrounds(tx: Tx, realmId: number): Promise<void> {
  const list = (await playgroundRows(tx.db, realmId)).map(presentPlayground);
  tx.emit(realmId, { type: 'realm_playgrounds', realm_playgrounds: list }, await activeUserIds(tx.db, realmId));
}

/** check_add_realm_playground: the caller has stripped the three values (as Zulip's view does). */
export async function checkAddPlayground(app: AppCtx, caller: Caller, fields: { name: string; pygments_language: string; url_template: string }): Promise<number> {
  return transact(app, async (tx) => {
    const errors = await playgroundErrors(fields, () => playgroundExists(tx.db, caller.realmId, fields.pygments_language, fields.name));
    if (errors) throw new JsonableError(firstPlaygroundError(errors), { data: { errors } });
    const id = await insertPlayground(tx.db, { realm_id: caller.realmId, ...fields });
    await notifyPlaygrounds(tx, caller.realmId);
    return id;
  });
}

/**
 * delete_realm_playground: "Invalid playground" for an id not in the realm.
 * When the realm's default_code_block_language is this playground's
 * language, Zulip clears it first (its realm update event goes out too).
 */
export async function doRemovePlayground(app: AppCtx, caller: Caller, id: number): Promise<void> {
  await transact(app, async (tx) => {
    const row = await playgroundById(tx.db, caller.realmId, id);
    if (!row) throw badRequest('Invalid playground');
    if ((await currentRealmValue(tx, caller.realmId, 'default_code_block_language')) === row.pygments_language) {
      await doSetRealmProperty(tx, caller.realmId, 'default_code_block_language', '');
    }
    await deletePlayground(tx.db, id);
    await notifyPlaygrounds(tx, caller.realmId);
  });
}
